import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTransition, ledgerTransitions, type LedgerActor, type LedgerFrom, type LedgerTo } from '@/lib/ledger/transitions';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { claimParamsFor, insertTestJob, readJob } from '@/testing/jobs';
import type { JobRow, LedgerRow } from '@/db/schema';
import { jobStates, ledgerStates, type JobState } from '@/db/schema/states';
import { insertBackfilledSent } from './backfill';
import { claimNotice, claimNotices } from './claim';
import { commitSent, releaseClaim } from './commit';
import { getLedgerRow } from './read';
import { resolveClaims } from './resolve';
import { deleteSettledLedgerBefore } from './retention';

/**
 * The transition table (lib/ledger/transitions.ts) against the SQL: every statement that writes
 * notice_ledger is run, as its actor, against a real row in every state. Where the table allows
 * (from, to, actor) the row must have moved (and the job as the table says); everywhere else the
 * row must be exactly as it was. A guard dropped from the SQL, or a transition added to one
 * side only, fails here.
 */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

/** Retention only sees rows settled before this; the fixture back-dates its rows to before it. */
const RETENTION_CUTOFF = new Date('2001-01-01T00:00:00Z');

type Fixture = { job: JobRow; claimToken: string | null };

type Statement = { name: string; by: LedgerActor; to: LedgerTo; run: (fixture: Fixture) => Promise<unknown> };

const claimParams = ({ job }: Fixture) => claimParamsFor(job, { claimedBy: 'transitions-test', oneTimeCode: 'CODE234567' });

const statements: Statement[] = [
  { name: 'claimNotice', by: 'worker', to: 'claimed', run: (f) => claimNotice(t.db, claimParams(f)) },
  { name: 'claimNotices', by: 'worker', to: 'claimed', run: (f) => claimNotices(t.db, [claimParams(f)]) },
  {
    name: 'commitSent',
    by: 'worker',
    to: 'sent',
    run: ({ job, claimToken }) =>
      commitSent(t.db, {
        noticeKey: job.noticeKey,
        claimToken,
        providerMessageId: 'relay-1',
        jobId: job.id,
        workerId: 'transitions-test',
        startedAt: new Date(),
        queueMessageId: null,
        batchId: null,
        correlationId: null,
        claimToCommitMs: null,
        mode: 'enforce',
      }),
  },
  // The worker only ever releases with the token of the claim it holds; no token, nothing to release.
  {
    name: 'releaseClaim',
    by: 'worker',
    to: 'released',
    run: ({ job, claimToken }) => (claimToken ? releaseClaim(t.db, { noticeKey: job.noticeKey, claimToken }) : Promise.resolve(false)),
  },
  {
    name: 'resolveClaims by provider evidence',
    by: 'provider_evidence',
    to: 'sent',
    run: ({ job }) =>
      resolveClaims(t.db, { keys: [job.noticeKey], resolution: { by: 'provider_evidence', occurredAt: new Date(), providerMessageId: 'prov-1' } }),
  },
  {
    name: 'resolveClaims confirm_sent',
    by: 'operator',
    to: 'sent',
    run: ({ job }) => resolveClaims(t.db, { keys: [job.noticeKey], resolution: { by: 'operator', action: 'confirm_sent' } }),
  },
  {
    name: 'resolveClaims release',
    by: 'operator',
    to: 'released',
    run: ({ job }) => resolveClaims(t.db, { keys: [job.noticeKey], resolution: { by: 'operator', action: 'release' } }),
  },
  {
    name: 'resolveClaims suppress',
    by: 'operator',
    to: 'suppressed',
    run: ({ job }) => resolveClaims(t.db, { keys: [job.noticeKey], resolution: { by: 'operator', action: 'suppress' } }),
  },
  {
    name: 'insertBackfilledSent',
    by: 'backfill',
    to: 'sent',
    run: ({ job }) =>
      insertBackfilledSent(t.db, {
        rows: [
          {
            noticeKey: job.noticeKey,
            noticeType: job.noticeType,
            identity: job.identity,
            revision: job.revision,
            jobId: job.id,
            sentAt: new Date(),
            providerMessageId: null,
            recipientDomain: null,
          },
        ],
      }),
  },
  { name: 'deleteSettledLedgerBefore', by: 'retention', to: 'deleted', run: () => deleteSettledLedgerBefore(t.db, { before: RETENTION_CUTOFF, limit: 1_000 }) },
];

/** A job in `jobState` and, unless `absent`, its ledger row in `from`, last touched long before the retention cutoff. */
async function arrange({ from, jobState }: { from: LedgerFrom; jobState: JobState }): Promise<Fixture> {
  const job = await insertTestJob(t.db, { state: jobState });
  if (from === 'absent') return { job, claimToken: null };
  const claimToken = from === 'claimed' ? randomUUID() : null;
  await t.pool.query(
    `insert into notice_ledger (notice_key, notice_type, identity, revision, job_id, state, claim_token, claimed_by, claimed_at, sent_at, one_time_code, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, 'transitions-test', '2000-01-01', $8, 'CODE234567', '2000-01-01')`,
    [job.noticeKey, job.noticeType, JSON.stringify(job.identity), job.revision, job.id, from, claimToken, from === 'sent' ? '2000-01-01' : null],
  );
  return { job, claimToken };
}

async function observe(job: JobRow): Promise<{ row: LedgerRow | null; state: LedgerFrom }> {
  const row = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
  return { row, state: row?.state ?? 'absent' };
}

const froms: LedgerFrom[] = ['absent', ...ledgerStates];
/** The job state the row's own history leaves it in, for the ledger part of the check. */
const jobStateFor: Record<LedgerFrom, JobState> = { absent: 'pending', claimed: 'claimed', sent: 'sent', released: 'pending', suppressed: 'suppressed' };

describe('the ledger SQL agrees with the transition table', () => {
  const cases = statements.flatMap((statement) => froms.map((from) => ({ statement, from })));

  it.each(cases.map((c) => [c.statement.name, c.from, c] as const))('%s from %s', async (_name, _from, { statement, from }) => {
    const fixture = await arrange({ from, jobState: jobStateFor[from] });
    const before = await observe(fixture.job);
    await statement.run(fixture);
    const after = await observe(fixture.job);
    const allowed = findTransition({ from, to: statement.to, by: statement.by });
    if (allowed) {
      expect(statement.to === 'deleted' ? (after.row === null ? 'deleted' : after.state) : after.state).toBe(statement.to);
    } else {
      expect(after.row).toEqual(before.row);
    }
  });

  it('every transition in the table is done by one of the statements above', () => {
    for (const transition of ledgerTransitions) {
      expect(
        statements.some((s) => s.by === transition.by && s.to === transition.to),
        `${transition.from}→${transition.to} by ${transition.by}`,
      ).toBe(true);
    }
  });

  // The job half of each allowed transition whose statement also moves the job (releaseClaim
  // leaves the job to retryJob/failJob in the same transaction; backfill and retention leave it).
  const jobCases = statements.flatMap((statement) =>
    ledgerTransitions.flatMap((transition) => {
      const job = transition.job;
      if (job === 'unchanged' || statement.name === 'releaseClaim' || transition.by !== statement.by || transition.to !== statement.to) return [];
      return job.from.map((jobFrom) => ({ statement, from: transition.from, jobFrom, jobTo: job.to }));
    }),
  );

  it.each(jobCases.map((c) => [c.statement.name, c.from, c.jobFrom, c] as const))(
    '%s from %s moves a %s job as the table says',
    async (_name, _from, _jobFrom, { statement, from, jobFrom, jobTo }) => {
      const fixture = await arrange({ from, jobState: jobFrom });
      await statement.run(fixture);
      expect(jobTo).toContain((await readJob(t.db, fixture.job.id)).state);
    },
  );

  // The worker's claim is allowed only for the job states its transitions name; for any other
  // job (cancelled, suppressed, … after the worker loaded it) the claim changes nothing at all.
  const refusedClaims = statements
    .filter((statement) => statement.by === 'worker' && statement.to === 'claimed')
    .flatMap((statement) =>
      ledgerTransitions.flatMap((transition) => {
        const job = transition.job;
        if (transition.by !== 'worker' || transition.to !== 'claimed' || job === 'unchanged') return [];
        return jobStates.filter((state) => !job.from.includes(state)).map((jobState) => ({ statement, from: transition.from, jobState }));
      }),
    );

  it.each(refusedClaims.map((c) => [c.statement.name, c.from, c.jobState, c] as const))(
    '%s from %s claims nothing for a %s job',
    async (_name, _from, _jobState, { statement, from, jobState }) => {
      const fixture = await arrange({ from, jobState });
      const before = await observe(fixture.job);
      await statement.run(fixture);
      expect(await observe(fixture.job)).toEqual(before);
      expect((await readJob(t.db, fixture.job.id)).state).toBe(jobState);
    },
  );

  it('an operator resolution leaves a job that is already final alone', async () => {
    for (const action of ['confirm_sent', 'release', 'suppress'] as const) {
      const fixture = await arrange({ from: 'claimed', jobState: 'cancelled' });
      await resolveClaims(t.db, { keys: [fixture.job.noticeKey], resolution: { by: 'operator', action } });
      expect((await readJob(t.db, fixture.job.id)).state).toBe('cancelled');
    }
  });
});
