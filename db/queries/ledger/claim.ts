import type { Db, DbOrTx } from '@/db/client';
import { hotQuery } from './hot-query';

/**
 * Where a claim is written: the worker's claim, one statement, committed on its own, before
 * the send. Where it can end is the table in lib/ledger/transitions.ts (commit.ts, resolve.ts,
 * retention.ts in this folder).
 */

export type ClaimParams = {
  noticeKey: string;
  noticeType: string;
  identity: Record<string, string>;
  revision: number;
  jobId: string;
  claimToken: string;
  claimedBy: string;
  recipientDomain: string;
  /** Used only when the row is new; a re-claimed row keeps the code minted at its first claim. */
  oneTimeCode: string;
  /**
   * The instant the window is judged at: omitted or null, the database's now(), which is also the
   * claimed_at it records (production). Only a send path running on an injected clock (tests) passes its own.
   */
  judgedAt?: Date | null;
};

export type Claim = { noticeKey: string; oneTimeCode: string; reclaimed: boolean };

// The job is locked first and must still be claimable (pending, or claimed with a released
// ledger row): a producer's cancel or an evidence resolve that committed after the worker loaded
// the job, or that commits while this statement waits for the job's lock, means no claim and so
// no send. Both lock the job row too (lib/planning/cancel-notice.ts, lib/planning/evidence.ts), so the two
// are ordered: cancel first → no claim; claim first → the cancel is refused (the job is claimed).
// The window is checked here too, against the instant the claim records (now() is claimed_at): the
// send path's own check runs before its token wait and this statement's batch, and a window that
// closed in between is missed, never claimed late (chaos seed 1602 on RabbitMQ claimed 13 ms late).
const CLAIM_SQL = `
    with job as (
      select id from reminder_jobs where id = $5::uuid and state in ('pending', 'claimed') and deadline_at >= coalesce($10::timestamptz, now()) for update
    ), claim as (
      insert into notice_ledger as l
        (notice_key, notice_type, identity, revision, job_id, state, claim_token, claimed_by, claimed_at, recipient_domain, one_time_code, source, updated_at)
      select $1::text, $2::text, $3::jsonb, $4::int, job.id, 'claimed', $6::uuid, $7::text, now(), $8::text, $9::text, 'worker', now() from job
      on conflict (notice_key) do update
        set state = 'claimed', claim_token = excluded.claim_token, claimed_by = excluded.claimed_by, claimed_at = now(),
            job_id = excluded.job_id, one_time_code = coalesce(l.one_time_code, excluded.one_time_code),
            resolution = null, resolved_at = null, updated_at = now()
        where l.state = 'released'
      returning l.notice_key, l.one_time_code, (l.xmax <> 0) as reclaimed
    ), moved as (
      update reminder_jobs set state = 'claimed', updated_at = now()
      where id = $5::uuid and state = 'pending' and exists (select 1 from claim)
      returning id
    )
    select claim.notice_key, claim.one_time_code, claim.reclaimed, (select count(*) from moved) as jobs from claim`;

/**
 * Claims the notice in ONE statement, committed on its own: a new row, or a `released` row
 * re-claimed. Concurrent claimers serialise on the primary key; exactly one gets a row back.
 * `claimed`, `sent` and `suppressed` rows are never taken over, and nothing is claimed for a job
 * that left pending (cancelled, suppressed, sent, failed). The job moves to `claimed` in the same
 * statement, so the job row and the ledger cannot disagree about who owns it.
 */
export async function claimNotice(db: DbOrTx, params: ClaimParams): Promise<Claim | null> {
  const rows = await hotQuery<{ notice_key: string; one_time_code: string; reclaimed: boolean }>(db, 'ledger_claim', CLAIM_SQL, [
    params.noticeKey,
    params.noticeType,
    JSON.stringify(params.identity),
    params.revision,
    params.jobId,
    params.claimToken,
    params.claimedBy,
    params.recipientDomain,
    params.oneTimeCode,
    params.judgedAt ?? null,
  ]);
  const row = rows[0];
  if (!row) return null;
  return { noticeKey: row.notice_key, oneTimeCode: row.one_time_code, reclaimed: row.reclaimed };
}

// `locked`: the batch's jobs, locked by primary key in id order (one lock order for every batch);
// whether each may be claimed is judged on the locked row, in `job`, and `moved` uses the state read
// under that lock: a state condition on the scan would let the planner reach the rows through a
// partial index of open jobs (claimManyQuery).
const CLAIM_MANY_SQL = `
    with input as (
      select * from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::uuid[], $6::uuid[], $7::text[], $8::text[], $9::text[], $10::timestamptz[])
        as t(notice_key, notice_type, identity, revision, job_id, claim_token, claimed_by, recipient_domain, one_time_code, judged_at)
    ), locked as (
      select j.id, j.state, j.deadline_at from reminder_jobs j where j.id = any($5::uuid[]) order by j.id for update of j
    ), job as (
      -- As in CLAIM_SQL: only jobs still claimable.
      select locked.id, locked.state from locked join input on input.job_id = locked.id
      where locked.state in ('pending', 'claimed') and locked.deadline_at >= coalesce(input.judged_at, now())
    ), claim as (
      insert into notice_ledger as l
        (notice_key, notice_type, identity, revision, job_id, state, claim_token, claimed_by, claimed_at, recipient_domain, one_time_code, source, updated_at)
      select notice_key, notice_type, identity::jsonb, revision, job_id, 'claimed', claim_token, claimed_by, now(), recipient_domain, one_time_code, 'worker', now()
      from input
      where input.job_id in (select id from job)
      -- One lock order for every batch: two workers' batches cannot deadlock on shared keys.
      order by notice_key
      on conflict (notice_key) do update
        set state = 'claimed', claim_token = excluded.claim_token, claimed_by = excluded.claimed_by, claimed_at = now(),
            job_id = excluded.job_id, one_time_code = coalesce(l.one_time_code, excluded.one_time_code),
            resolution = null, resolved_at = null, updated_at = now()
        where l.state = 'released'
      returning l.notice_key, l.one_time_code, (l.xmax <> 0) as reclaimed, l.job_id
    ), moved as (
      update reminder_jobs j set state = 'claimed', updated_at = now()
      from claim join job on job.id = claim.job_id where j.id = any($5::uuid[]) and j.id = claim.job_id and job.state = 'pending'
      returning j.id
    )
    select notice_key, one_time_code, reclaimed, (select count(*) from moved) as jobs from claim`;

/**
 * The statement claimNotices runs, as node-postgres takes it (plans.test.ts explains it).
 *
 * The jobs are reached by primary key (`= any` of the batch's ids) with no state condition on that
 * scan. With one, the planner could read them through reminder_jobs_open_deadline_idx, a partial
 * index of open jobs, filtering by id: cheap when the last analyse saw few open jobs, and O(open
 * jobs, dead index entries included) per statement once a producer has planned many since. In a
 * bench adding 5 000 jobs a round, this statement went from 6 to 51 ms for ~80 claims within six
 * rounds; a deployment's open jobs (renewals planned months ahead) are far more.
 */
export function claimManyQuery(claims: readonly ClaimParams[]): { name: string; text: string; values: unknown[] } {
  return {
    name: 'ledger_claim_many',
    text: CLAIM_MANY_SQL,
    values: [
      claims.map((c) => c.noticeKey),
      claims.map((c) => c.noticeType),
      claims.map((c) => JSON.stringify(c.identity)),
      claims.map((c) => c.revision),
      claims.map((c) => c.jobId),
      claims.map((c) => c.claimToken),
      claims.map((c) => c.claimedBy),
      claims.map((c) => c.recipientDomain),
      claims.map((c) => c.oneTimeCode),
      claims.map((c) => c.judgedAt ?? null),
    ],
  };
}

/**
 * Many claims in ONE statement, committed together: the same rules as claimNotice, row by row
 * (a new row, or a `released` row re-claimed, for a job still claimable; anything else refused →
 * null at its index).
 * The keys must be distinct (a statement cannot touch one row twice). A pool only: the arrays
 * travel as array parameters of a named prepared statement.
 */
export async function claimNotices(db: Db, claims: readonly ClaimParams[]): Promise<Array<Claim | null>> {
  if (claims.length === 0) return [];
  const { rows } = await db.$client.query<{ notice_key: string; one_time_code: string; reclaimed: boolean }>(claimManyQuery(claims));
  const won = new Map(rows.map((row) => [row.notice_key, { noticeKey: row.notice_key, oneTimeCode: row.one_time_code, reclaimed: row.reclaimed }]));
  return claims.map((c) => won.get(c.noticeKey) ?? null);
}
