import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimParamsFor, insertTestJob, readJob } from '@/testing/jobs';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { claimNotice } from './claim';
import { bodyText, storedBody } from '@/db/queries/evidence-body';
import { sha256Hex } from '@/lib/evidence/hash';
import { commitSent, evidenceParams } from './commit';
import { getLedgerRow } from './read';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

const claimFor = async (job: Awaited<ReturnType<typeof insertTestJob>>, claimToken: string) =>
  claimNotice(t.db, claimParamsFor(job, { claimToken, claimedBy: 'w1', oneTimeCode: 'code-1' }));

const commitParams = (job: Awaited<ReturnType<typeof insertTestJob>>, claimToken: string | null) => ({
  noticeKey: job.noticeKey,
  claimToken,
  providerMessageId: 'relay-1',
  jobId: job.id,
  workerId: 'w1',
  startedAt: new Date(),
  queueMessageId: 'q-1',
  batchId: null,
  correlationId: 'c'.repeat(32),
  claimToCommitMs: 3,
  mode: 'enforce' as const,
});

describe('commitSent: the result commit as one statement', () => {
  it('moves the owned claim and the job to sent and writes the attempt row', async () => {
    const job = await insertTestJob(t.db);
    const token = randomUUID();
    expect(await claimFor(job, token)).toMatchObject({ noticeKey: job.noticeKey, reclaimed: false });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'claimed' });
    expect(await commitSent(t.db, commitParams(job, token))).toBe(true);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'sent', providerMessageId: 'relay-1', sentAt: expect.any(Date) });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent', attempts: 1, lastErrorClass: null });
    const attempts = await listAttemptsForJob(t.db, { jobId: job.id });
    expect(attempts.map((a) => [a.outcome, a.detail, a.claimToCommitMs, a.queueMessageId])).toEqual([['sent', null, 3, 'q-1']]);
  });

  it('leaves a claim it does not own alone and says so in the attempt row', async () => {
    const job = await insertTestJob(t.db);
    await claimFor(job, randomUUID());
    expect(await commitSent(t.db, commitParams(job, randomUUID()))).toBe(false);
    expect(await commitSent(t.db, { ...commitParams(job, null), claimToCommitMs: null })).toBe(false);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'claimed', providerMessageId: null });
    const attempts = await listAttemptsForJob(t.db, { jobId: job.id });
    expect(attempts.map((a) => [a.outcome, a.detail])).toEqual([
      ['sent', 'claim_not_owned'],
      ['sent', 'claim_not_owned'],
    ]);
  });

  it('runs inside a caller transaction on that transaction (a rollback leaves the claim)', async () => {
    const job = await insertTestJob(t.db);
    const token = randomUUID();
    await claimFor(job, token);
    await expect(
      t.db.transaction(async (tx) => {
        expect(await commitSent(tx, commitParams(job, token))).toBe(true);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'claimed' });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'claimed', attempts: 0 });
    expect(await listAttemptsForJob(t.db, { jobId: job.id })).toEqual([]);
  });
});

describe('evidenceParams: the batch bodies, short ones as one U+0001-separated text, long ones compressed in one bytea', () => {
  it('comes back from the server body by body: two-byte characters, empty items, and long bodies compressed with their hash', async () => {
    const long = (mark: string) => JSON.stringify({ html: `<p>${mark} €19.99 – renews 🧾</p>`.repeat(200) });
    const bodies = ['{"html":"€19.99 – renews"}', '', long('a'), '{"text":"plain"}', long('b'), '{"emoji":"🧾"}'];
    const param = evidenceParams(bodies.map((body) => ({ evidence: body === '' ? null : { kind: 'notice.sent', body: storedBody(body) } })));
    const { rows } = await t.db.$client.query<{ text: string | null; brotli: Buffer | null; hash: string | null }>(
      `select t.text, substring($2::bytea from t.from_ for t.length_) as brotli, t.hash
       from unnest(string_to_array($1::text, E'\\x01', ''), $3::int[], $4::int[], $5::text[]) with ordinality as t(text, from_, length_, hash, n) order by n`,
      [param.texts, param.compressed, param.from, param.length, param.hash],
    );
    expect(rows.map((row) => (row.text === null && row.brotli === null ? '' : bodyText(row.text, row.brotli)))).toEqual(bodies);
    // The long ones only are compressed, each with the SHA-256 of its UTF-8 bytes, and far smaller.
    expect(rows.map((row) => row.brotli !== null)).toEqual([false, false, true, false, true, false]);
    for (const [index, row] of rows.entries()) {
      if (row.brotli === null) continue;
      expect(row.hash).toBe(sha256Hex(bodies[index] ?? ''));
      expect(row.brotli.length).toBeLessThan(Buffer.byteLength(bodies[index] ?? '') / 5);
    }
  });

  it('refuses a body holding the separator instead of splitting it', () => {
    expect(() => evidenceParams([{ evidence: { kind: 'notice.sent', body: storedBody('{"a":"x\u0001y"}') } }])).toThrow(/U\+0001/);
  });
});
