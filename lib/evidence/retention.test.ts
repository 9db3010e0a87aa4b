import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deleteEvidenceEntriesBefore,
  deleteEvidencePiecesUnusedSince,
  insertEvidenceEntries,
  listNoticeEntries,
  storeEvidencePieces,
} from '@/db/queries/evidence-record';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { chainAllPending } from './chain';
import { entryOf } from './record';
import { signChainHead } from './sign';
import { evidenceKeyRing } from './signing-keys';
import { verifyEvidenceChain } from './verify-chain';

/**
 * Evidence retention (RETENTION_EVIDENCE_RECORD, lib/evidence/maintenance.ts): an entry older than
 * the cutoff goes with its chain link, oldest first, and only once it is under a signed head; the
 * chain left behind still verifies from its first remaining link. Template pieces go once no
 * process has said it uses them since the cutoff.
 */

let t: TestDatabase;
const keys = evidenceKeyRing({ specs: [{ kid: 'k', secret: 'k'.repeat(40) }], noticeKeySecret: 'x'.repeat(32) });

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t?.drop();
});

const entry = (key: string, i: number) => entryOf({ noticeKey: key, jobId: null, kind: 'notice.sent', body: { i } });
const count = async (table: string) => Number((await t.pool.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]?.n);

describe('evidence retention', () => {
  it('drops old entries with their links, only signed ones, oldest first; what is left verifies', async () => {
    await insertEvidenceEntries(t.db, [entry('old', 1), entry('old', 2), entry('old', 3)]);
    await chainAllPending(t.db);
    await signChainHead({ db: t.db, keys, tsaUrl: null });
    // Chained but not signed yet, and not chained at all: kept whatever their age.
    await insertEvidenceEntries(t.db, [entry('late', 4)]);
    await chainAllPending(t.db);
    await insertEvidenceEntries(t.db, [entry('late', 5)]);
    const future = new Date(Date.now() + 86_400_000);

    expect(await deleteEvidenceEntriesBefore(t.db, { before: new Date(Date.now() - 86_400_000), limit: 10 })).toBe(0);
    expect(await deleteEvidenceEntriesBefore(t.db, { before: future, limit: 2 })).toBe(2);
    expect((await listNoticeEntries(t.db, { noticeKey: 'old' })).map((e) => e.seq)).toEqual([3]);
    expect(await deleteEvidenceEntriesBefore(t.db, { before: future, limit: 10 })).toBe(1);
    expect(await listNoticeEntries(t.db, { noticeKey: 'old' })).toEqual([]);
    // Links went with their entries; the unsigned and the unchained one stay.
    expect(await count('evidence_chain')).toBe(1);
    expect((await listNoticeEntries(t.db, { noticeKey: 'late' })).map((e) => e.seq)).toEqual([4, null]);
    expect(await count('evidence_unchained')).toBe(1);
    await chainAllPending(t.db);
    await signChainHead({ db: t.db, keys, tsaUrl: null });
    expect(await verifyEvidenceChain({ db: t.db, keys })).toMatchObject({ entries: 2, problems: [] });
  });

  it('drops template pieces no process has said it uses since the cutoff', async () => {
    await storeEvidencePieces(t.db, { digest: 'a'.repeat(64), texts: '["old"]' });
    await storeEvidencePieces(t.db, { digest: 'b'.repeat(64), texts: '["in use"]' });
    await t.pool.query(`update evidence_pieces set last_used_at = now() - interval '10 days' where digest = $1`, ['a'.repeat(64)]);
    expect(await deleteEvidencePiecesUnusedSince(t.db, { before: new Date(Date.now() - 5 * 86_400_000) })).toBe(1);
    expect((await t.pool.query<{ digest: string }>('select digest from evidence_pieces')).rows.map((row) => row.digest)).toEqual(['b'.repeat(64)]);
    // Used again: said so, and kept.
    await storeEvidencePieces(t.db, { digest: 'b'.repeat(64), texts: '["in use"]' });
    expect(await deleteEvidencePiecesUnusedSince(t.db, { before: new Date(Date.now() - 60_000) })).toBe(0);
  });
});
