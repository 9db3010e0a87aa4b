import { bodyText, storedBody } from '@/db/queries/evidence-body';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzParameters } from '@/test/fuzz/arbitraries';
import { claimParamsFor, insertTestJob, readJob } from '@/testing/jobs';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import type { JobRow } from '@/db/schema';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { canonicalJson } from '@/lib/evidence/hash';
import { loadJobForSend, loadJobsForSend } from '@/db/queries/jobs';
import { claimNotice, claimNotices, type ClaimParams } from './claim';
import { commitSent, commitSentMany, type CommitSentParams } from './commit';
import { getLedgerRow } from './read';

/**
 * The batched send-path statements (claimNotices, commitSentMany, loadJobsForSend) against the
 * single-row ones they stand in for: the same scenario is built twice, one copy goes through
 * the single statements and the other through one batch, and every observable row must agree.
 */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

// A ledger state before the claim, or a job that left pending before it (cancelled by the
// producer, suppressed by resolved evidence) with no ledger row: that claim must be refused.
const priorStates = ['none', 'released', 'claimed', 'sent', 'suppressed', 'job_cancelled', 'job_suppressed'] as const;
type Prior = (typeof priorStates)[number];

async function jobWithPrior(prior: Prior, heldToken: string): Promise<JobRow> {
  if (prior === 'job_cancelled' || prior === 'job_suppressed') return insertTestJob(t.db, { state: prior === 'job_cancelled' ? 'cancelled' : 'suppressed' });
  const job = await insertTestJob(t.db, { state: prior === 'claimed' || prior === 'released' ? 'claimed' : 'pending' });
  if (prior === 'none') return job;
  await t.db.execute(sql`
    insert into notice_ledger (notice_key, notice_type, identity, job_id, state, claim_token, claimed_by, recipient_domain, one_time_code, sent_at)
    values (${job.noticeKey}, ${job.noticeType}, ${JSON.stringify(job.identity)}::jsonb, ${job.id}, ${prior}, ${prior === 'claimed' ? heldToken : null}, 'earlier',
            'example.test', 'first-code', ${prior === 'sent' ? sql`now()` : null})`);
  return job;
}

const claimOf = (job: JobRow, claimToken: string): ClaimParams => claimParamsFor(job, { claimToken, claimedBy: 'w-batch', oneTimeCode: 'new-code' });

const commitOf = (job: JobRow, claimToken: string | null, n: number, evidenceBody: string | null = null): CommitSentParams => ({
  noticeKey: job.noticeKey,
  claimToken,
  providerMessageId: `relay-${String(n)}`,
  jobId: job.id,
  workerId: 'w-batch',
  startedAt: new Date('2026-11-29T10:00:00Z'),
  queueMessageId: `q-${String(n)}`,
  batchId: n % 2 === 0 ? null : 'batch-x',
  correlationId: 'c'.repeat(32),
  claimToCommitMs: n,
  mode: 'enforce',
  evidence: evidenceBody === null ? null : { kind: 'notice.sent', body: storedBody(evidenceBody) },
});

/** What a reader can see of a notice after the statements, minus the ids that differ by copy. */
async function observe(job: JobRow, ownToken: string) {
  const ledger = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
  const row = await readJob(t.db, job.id);
  const attempts = await listAttemptsForJob(t.db, { jobId: job.id });
  const { rows: stored } = await t.db.execute<{ kind: string; body: string | null; body_brotli: Buffer | null; seq: number | null }>(
    sql`select e.kind, e.body, e.body_brotli, c.seq from evidence_entries e left join evidence_chain c on c.entry_id = e.id where e.job_id = ${job.id} order by e.id`,
  );
  const evidence = stored.map((row) => ({ kind: row.kind, body: bodyText(row.body, row.body_brotli), seq: row.seq }));
  return {
    evidence,
    ledger: ledger && {
      state: ledger.state,
      ours: ledger.claimToken === ownToken,
      claimedBy: ledger.claimedBy,
      oneTimeCode: ledger.oneTimeCode,
      providerMessageId: ledger.providerMessageId,
      sent: ledger.sentAt !== null,
      jobIsThis: ledger.jobId === job.id,
    },
    job: { state: row.state, attempts: row.attempts },
    attempts: attempts.map((a) => [a.outcome, a.detail, a.queueMessageId, a.batchId, a.claimToCommitMs, a.mode, a.startedAt.toISOString()]),
  };
}

// Which token the commit carries: the one it claimed with, someone else's, or none (shadow mode).
const commitTokens = ['own', 'foreign', 'none'] as const;

describe('batched send-path statements agree with the single-row ones', () => {
  it('claim then commit, for any mix of prior ledger states', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            prior: fc.constantFrom(...priorStates),
            token: fc.constantFrom(...commitTokens),
            // The send's entry, or none: any canonical JSON body (quotes, backslashes, any character).
            evidence: fc.option(fc.jsonValue({ stringUnit: 'grapheme' }).map(canonicalJson)),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        async (cases) => {
          const single: Array<{ job: JobRow; token: string }> = [];
          const batched: Array<{ job: JobRow; token: string }> = [];
          for (const c of cases) {
            const held = randomUUID();
            single.push({ job: await jobWithPrior(c.prior, held), token: randomUUID() });
            batched.push({ job: await jobWithPrior(c.prior, held), token: randomUUID() });
          }
          const singleClaims = [];
          for (const s of single) singleClaims.push(await claimNotice(t.db, claimOf(s.job, s.token)));
          const batchClaims = await claimNotices(
            t.db,
            batched.map((b) => claimOf(b.job, b.token)),
          );
          expect(batchClaims.map((c) => c && { reclaimed: c.reclaimed, oneTimeCode: c.oneTimeCode })).toEqual(
            singleClaims.map((c) => c && { reclaimed: c.reclaimed, oneTimeCode: c.oneTimeCode }),
          );
          expect(batchClaims.map((c, i) => c?.noticeKey ?? batched[i]?.job.noticeKey)).toEqual(batched.map((b) => b.job.noticeKey));
          for (const [i, c] of cases.entries()) if (c.prior.startsWith('job_')) expect([singleClaims[i], batchClaims[i]]).toEqual([null, null]);

          const tokenFor = (entry: { token: string }, kind: (typeof commitTokens)[number]) =>
            kind === 'own' ? entry.token : kind === 'foreign' ? randomUUID() : null;
          const singleOwned = [];
          for (const [i, s] of single.entries())
            singleOwned.push(await commitSent(t.db, commitOf(s.job, tokenFor(s, cases[i]?.token ?? 'own'), i, cases[i]?.evidence ?? null)));
          const batchOwned = await commitSentMany(
            t.db,
            batched.map((b, i) => commitOf(b.job, tokenFor(b, cases[i]?.token ?? 'own'), i, cases[i]?.evidence ?? null)),
          );
          expect(batchOwned).toEqual(singleOwned);

          for (const [i, s] of single.entries()) {
            const b = batched[i];
            if (!b) throw new Error('copies out of step');
            const seen = await observe(b.job, b.token);
            expect(seen, `case ${String(i)}: ${JSON.stringify(cases[i])}`).toEqual(await observe(s.job, s.token));
            expect(seen.evidence).toEqual(cases[i]?.evidence == null ? [] : [{ kind: 'notice.sent', body: cases[i]?.evidence, seq: null }]);
          }
        },
      ),
      fuzzParameters(12),
    );
  });

  it('claimNotices refuses a batch naming one key twice as a whole, changing nothing', async () => {
    const job = await insertTestJob(t.db);
    const error = await claimNotices(t.db, [claimOf(job, randomUUID()), claimOf(job, randomUUID())]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: '21000' });
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeNull();
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'pending' });
  });

  it('neither claim takes a job whose window closed before the statement ran, even a released row', async () => {
    // insertTestJob's default window; its deadline moved just into the past.
    const closed = async (prior: Prior) => {
      const job = await jobWithPrior(prior, randomUUID());
      await t.db.execute(
        sql`update reminder_jobs set due_at = now() - interval '2 hours', deadline_at = now() - interval '1 millisecond' where id = ${job.id}`,
      );
      return job;
    };
    for (const prior of ['none', 'released'] as const) {
      const single = await closed(prior);
      expect(await claimNotice(t.db, claimOf(single, randomUUID()))).toBeNull();
      const [batched] = await claimNotices(t.db, [claimOf(await closed(prior), randomUUID())]);
      expect(batched).toBeNull();
      expect((await getLedgerRow(t.db, { noticeKey: single.noticeKey }))?.state ?? 'none').toBe(prior);
    }
    // An open window still claims.
    const open = await insertTestJob(t.db);
    expect(await claimNotice(t.db, claimOf(open, randomUUID()))).not.toBeNull();
  });

  it('loadJobsForSend returns what loadJobForSend does, per id, and leaves out unknown ids', async () => {
    const a = await insertTestJob(t.db);
    const b = await insertTestJob(t.db, { recipientEmail: 'Bounced@Example.test' });
    await t.db.execute(
      sql`insert into recipient_suppressions (email, reason, source_event_id) values ('bounced@example.test', 'hard_bounce', null) on conflict do nothing`,
    );
    const unknown = randomUUID();
    const byId = await loadJobsForSend(t.db, [a.id, b.id, unknown]);
    expect([...byId.keys()].sort()).toEqual([a.id, b.id].sort());
    expect(byId.get(a.id)).toEqual(await loadJobForSend(t.db, { jobId: a.id }));
    expect(byId.get(b.id)).toEqual(await loadJobForSend(t.db, { jobId: b.id }));
    expect(byId.get(b.id)?.recipientSuppression).toBe('hard_bounce');
    expect(await loadJobsForSend(t.db, [])).toEqual(new Map());
  });
});
