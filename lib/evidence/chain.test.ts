import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvidenceEntries, listChainedAfter } from '@/db/queries/evidence-record';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { chainAllPending, chainPendingEntries } from './chain';
import { entryHashOf, GENESIS_HASH, sha256Hex } from './hash';
import { entryOf } from './record';

/**
 * The chainer against a real database: writers only insert, many chainers run at once (as every
 * worker runs one), and the chain that comes out is one line — contiguous seq, each entry's
 * prev_hash its predecessor's hash, every hash recomputable from the row.
 */

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t?.drop();
});

// Multi-byte text in every body: the chainer's body hash is the server's (SHA-256 of the UTF-8 bytes), recomputed here in JavaScript.
const entry = (i: number) => entryOf({ noticeKey: `k${String(i % 7)}`, jobId: null, kind: 'notice.sent', body: { i, text: 'Grüße — 19,00 € 😀 \u2028' } });

describe('the evidence chainer', () => {
  it('never forks: concurrent writers and chainers give one contiguous chain', async () => {
    const writers = Array.from({ length: 8 }, (_, w) =>
      (async () => {
        for (let i = 0; i < 25; i += 1) await insertEvidenceEntries(t.db, [entry(w * 100 + i)]);
      })(),
    );
    const chainers = Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 10; i += 1) await chainPendingEntries(t.db, { batch: 7 });
    });
    await Promise.all([...writers, ...chainers]);
    await chainAllPending(t.db);

    const chain = await listChainedAfter(t.db, { afterSeq: 0, limit: 10_000 });
    expect(chain).toHaveLength(200);
    let prev = GENESIS_HASH;
    for (const [index, row] of chain.entries()) {
      expect(row.seq).toBe(index + 1);
      expect(row.prevHash).toBe(prev);
      expect(
        entryHashOf({
          seq: row.seq,
          prevHash: row.prevHash,
          noticeKey: row.noticeKey,
          kind: row.kind,
          recordedAt: row.recordedAt,
          bodyHash: sha256Hex(row.body),
        }),
      ).toBe(row.entryHash);
      prev = row.entryHash;
    }
    const { rows } = await t.db.execute<{ seq: number; hash: string }>(sql`select seq, hash from evidence_chain_head`);
    expect(rows[0]).toEqual({ seq: 200, hash: prev });
  });

  it('a second chain link for a seq, or for an entry, is refused by the database (the unique guards)', async () => {
    const [first] = await listChainedAfter(t.db, { afterSeq: 0, limit: 1 });
    await insertEvidenceEntries(t.db, [entry(999)]);
    const { rows } = await t.db.execute<{ entry_id: string }>(sql`select entry_id from evidence_unchained`);
    expect(rows).toHaveLength(1);
    const waiting = Number(rows[0]?.entry_id);
    await expect(
      t.db.execute(sql`insert into evidence_chain (seq, entry_id, prev_hash, entry_hash) values (${first?.seq ?? 1}, ${waiting}, 'x', 'y')`),
    ).rejects.toMatchObject({ cause: { constraint: 'evidence_chain_pkey' } });
    await expect(
      t.db.execute(sql`insert into evidence_chain (seq, entry_id, prev_hash, entry_hash) values (100000, ${first?.id ?? 1}, 'x', 'y')`),
    ).rejects.toMatchObject({ cause: { constraint: 'evidence_chain_entry_unique' } });
    const version = async () => (await t.db.execute<{ ctid: string }>(sql`select ctid::text from evidence_entries where id = ${waiting}`)).rows[0]?.ctid;
    const inserted = await version();
    expect(await chainAllPending(t.db)).toBe(1);
    // Chained: off the unchained list, and the entry's row not rewritten (an update, HOT or not, moves it to a new ctid).
    expect((await t.db.execute(sql`select entry_id from evidence_unchained`)).rows).toEqual([]);
    expect(await version()).toBe(inserted);
  });
});
