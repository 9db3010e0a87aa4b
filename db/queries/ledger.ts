import { and, asc, eq, inArray, lt, sql, type SQL } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import pg from 'pg';
import type { Db, DbOrTx } from '../client';
import { noticeLedger, reminderJobs, type LedgerRow } from '../schema';
import type { LedgerState } from '../schema/states';

/** Every write to `notice_ledger`. The claim is one statement; the result is conditional on claim_token. */

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
};

export type Claim = { noticeKey: string; oneTimeCode: string; reclaimed: boolean };

const CLAIM_SQL = `
    with claim as (
      insert into notice_ledger as l
        (notice_key, notice_type, identity, revision, job_id, state, claim_token, claimed_by, claimed_at, recipient_domain, one_time_code, source, updated_at)
      values ($1::text, $2::text, $3::jsonb, $4::int, $5::uuid, 'claimed', $6::uuid, $7::text, now(), $8::text, $9::text, 'worker', now())
      on conflict (notice_key) do update
        set state = 'claimed', claim_token = excluded.claim_token, claimed_by = excluded.claimed_by, claimed_at = now(),
            job_id = excluded.job_id, one_time_code = coalesce(l.one_time_code, excluded.one_time_code),
            resolution = null, resolved_at = null, updated_at = now()
        where l.state = 'released'
      returning l.notice_key, l.one_time_code, (l.xmax <> 0) as reclaimed
    ), job as (
      update reminder_jobs set state = 'claimed', updated_at = now()
      where id = $5::uuid and state = 'pending' and exists (select 1 from claim)
      returning id
    )
    select claim.notice_key, claim.one_time_code, claim.reclaimed, (select count(*) from job) as jobs from claim`;

/**
 * The send path's hot statements run as NAMED prepared statements (parsed and planned once per
 * connection): through drizzle's unnamed path the worker spent ~25 % more per statement.
 * Inside a transaction (tests, tools) they run on that transaction's connection, unnamed.
 */
async function hotQuery<T extends pg.QueryResultRow>(db: DbOrTx, name: string, text: string, values: unknown[]): Promise<T[]> {
  const client = db instanceof PgTransaction || !('$client' in db) ? null : db.$client;
  if (client instanceof pg.Pool) return (await client.query<T>({ name, text, values })).rows;
  // A transaction: keep its connection, so the statement is part of it.
  const chunks: SQL[] = [];
  let last = 0;
  for (const match of text.matchAll(/\$(\d+)/g)) {
    chunks.push(sql.raw(text.slice(last, match.index)));
    chunks.push(sql`${values[Number(match[1]) - 1]}`);
    last = match.index + match[0].length;
  }
  chunks.push(sql.raw(text.slice(last)));
  const result = await db.execute<T>(sql.join(chunks));
  return result.rows as T[];
}

/**
 * Claims the notice in ONE statement, committed on its own: a new row, or a `released` row
 * re-claimed. Concurrent claimers serialise on the primary key; exactly one gets a row back.
 * `claimed`, `sent` and `suppressed` rows are never taken over. The job moves to `claimed`
 * in the same statement, so the job row and the ledger cannot disagree about who owns it.
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
  ]);
  const row = rows[0];
  if (!row) return null;
  return { noticeKey: row.notice_key, oneTimeCode: row.one_time_code, reclaimed: row.reclaimed };
}

const COMMIT_SENT_SQL = `
    with ledger as (
      update notice_ledger set state = 'sent', sent_at = now(), provider_message_id = $3::text, updated_at = now()
      where $2::uuid is not null and notice_key = $1::text and claim_token = $2::uuid and state = 'claimed'
      returning notice_key
    ), attempt as (
      insert into delivery_attempts (job_id, notice_key, worker_id, started_at, outcome, detail, queue_message_id, batch_id, correlation_id, claim_to_commit_ms, mode)
      select $4::uuid, $1::text, $5::text, $6::timestamptz, 'sent', case when exists (select 1 from ledger) then null else 'claim_not_owned' end,
             $7::text, $8::text, $9::text, $10::int, $11::text
      returning id
    ), job as (
      update reminder_jobs set state = 'sent', attempts = attempts + 1, last_error_class = null, updated_at = now()
      where id = $4::uuid and state in ('pending', 'claimed')
      returning id
    )
    select (select count(*) from ledger)::int as owned, (select count(*) from attempt)::int as attempts, (select count(*) from job)::int as jobs`;

export type CommitSentParams = {
  noticeKey: string;
  /** The token of the claim this attempt holds; null when it holds none (shadow mode). */
  claimToken: string | null;
  providerMessageId: string | null;
  jobId: string;
  workerId: string;
  startedAt: Date;
  queueMessageId: string | null;
  batchId: string | null;
  correlationId: string | null;
  claimToCommitMs: number | null;
  mode: 'shadow' | 'enforce';
};

/**
 * The result commit after an accepted send, as ONE statement (one transaction, one round trip):
 * ledger `sent` (only if this attempt still owns the claim), job `sent`, and the attempt row
 * (`claim_not_owned` when the ledger was not ours to move). Returns whether the claim was ours.
 */
export async function commitSent(db: DbOrTx, params: CommitSentParams): Promise<boolean> {
  const rows = await hotQuery<{ owned: number }>(db, 'ledger_commit_sent', COMMIT_SENT_SQL, [
    params.noticeKey,
    params.claimToken,
    params.providerMessageId,
    params.jobId,
    params.workerId,
    params.startedAt,
    params.queueMessageId,
    params.batchId,
    params.correlationId,
    params.claimToCommitMs,
    params.mode,
  ]);
  return (rows[0]?.owned ?? 0) > 0;
}

const CLAIM_MANY_SQL = `
    with input as (
      select * from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::uuid[], $6::uuid[], $7::text[], $8::text[], $9::text[])
        as t(notice_key, notice_type, identity, revision, job_id, claim_token, claimed_by, recipient_domain, one_time_code)
      -- One lock order for every batch: two workers' batches cannot deadlock on shared keys.
      order by notice_key
    ), claim as (
      insert into notice_ledger as l
        (notice_key, notice_type, identity, revision, job_id, state, claim_token, claimed_by, claimed_at, recipient_domain, one_time_code, source, updated_at)
      select notice_key, notice_type, identity::jsonb, revision, job_id, 'claimed', claim_token, claimed_by, now(), recipient_domain, one_time_code, 'worker', now()
      from input
      on conflict (notice_key) do update
        set state = 'claimed', claim_token = excluded.claim_token, claimed_by = excluded.claimed_by, claimed_at = now(),
            job_id = excluded.job_id, one_time_code = coalesce(l.one_time_code, excluded.one_time_code),
            resolution = null, resolved_at = null, updated_at = now()
        where l.state = 'released'
      returning l.notice_key, l.one_time_code, (l.xmax <> 0) as reclaimed, l.job_id
    ), job as (
      update reminder_jobs j set state = 'claimed', updated_at = now()
      from claim where j.id = claim.job_id and j.state = 'pending'
      returning j.id
    )
    select notice_key, one_time_code, reclaimed, (select count(*) from job) as jobs from claim`;

/**
 * Many claims in ONE statement, committed together: the same rules as claimNotice, row by row
 * (a new row, or a `released` row re-claimed; anything else refused → null at its index).
 * The keys must be distinct (a statement cannot touch one row twice). A pool only: the arrays
 * travel as array parameters of a named prepared statement.
 */
export async function claimNotices(db: Db, claims: readonly ClaimParams[]): Promise<Array<Claim | null>> {
  if (claims.length === 0) return [];
  const { rows } = await db.$client.query<{ notice_key: string; one_time_code: string; reclaimed: boolean }>({
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
    ],
  });
  const won = new Map(rows.map((row) => [row.notice_key, { noticeKey: row.notice_key, oneTimeCode: row.one_time_code, reclaimed: row.reclaimed }]));
  return claims.map((c) => won.get(c.noticeKey) ?? null);
}

const COMMIT_SENT_MANY_SQL = `
    with input as (
      select * from unnest($1::text[], $2::uuid[], $3::text[], $4::uuid[], $5::text[], $6::timestamptz[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[])
        as t(notice_key, claim_token, provider_message_id, job_id, worker_id, started_at, queue_message_id, batch_id, correlation_id, claim_to_commit_ms, mode)
      order by notice_key
    ), ledger as (
      update notice_ledger l set state = 'sent', sent_at = now(), provider_message_id = i.provider_message_id, updated_at = now()
      from input i
      where i.claim_token is not null and l.notice_key = i.notice_key and l.claim_token = i.claim_token and l.state = 'claimed'
      returning l.notice_key
    ), attempt as (
      insert into delivery_attempts (job_id, notice_key, worker_id, started_at, outcome, detail, queue_message_id, batch_id, correlation_id, claim_to_commit_ms, mode)
      select i.job_id, i.notice_key, i.worker_id, i.started_at, 'sent',
             case when exists (select 1 from ledger where ledger.notice_key = i.notice_key) then null else 'claim_not_owned' end,
             i.queue_message_id, i.batch_id, i.correlation_id, i.claim_to_commit_ms, i.mode
      from input i
      returning id
    ), job as (
      update reminder_jobs j set state = 'sent', attempts = j.attempts + 1, last_error_class = null, updated_at = now()
      from input i where j.id = i.job_id and j.state in ('pending', 'claimed')
      returning j.id
    )
    select notice_key, (select count(*) from attempt) as attempts, (select count(*) from job) as jobs from ledger`;

/**
 * Many result commits in ONE statement (one transaction): for each item exactly what
 * commitSent does for one. Keys must be distinct. Returns, per item, whether the claim was ours.
 */
export async function commitSentMany(db: Db, commits: readonly CommitSentParams[]): Promise<boolean[]> {
  if (commits.length === 0) return [];
  const { rows } = await db.$client.query<{ notice_key: string }>({
    name: 'ledger_commit_sent_many',
    text: COMMIT_SENT_MANY_SQL,
    values: [
      commits.map((c) => c.noticeKey),
      commits.map((c) => c.claimToken),
      commits.map((c) => c.providerMessageId),
      commits.map((c) => c.jobId),
      commits.map((c) => c.workerId),
      commits.map((c) => c.startedAt),
      commits.map((c) => c.queueMessageId),
      commits.map((c) => c.batchId),
      commits.map((c) => c.correlationId),
      commits.map((c) => c.claimToCommitMs),
      commits.map((c) => c.mode),
    ],
  });
  const owned = new Set(rows.map((row) => row.notice_key));
  return commits.map((c) => owned.has(c.noticeKey));
}

export async function getLedgerRow(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<LedgerRow | null> {
  const rows = await db.select().from(noticeLedger).where(eq(noticeLedger.noticeKey, noticeKey)).limit(1);
  return rows[0] ?? null;
}

export async function getLedgerState(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<LedgerState | null> {
  const rows = await db.select({ state: noticeLedger.state }).from(noticeLedger).where(eq(noticeLedger.noticeKey, noticeKey)).limit(1);
  return rows[0]?.state ?? null;
}

/**
 * Only after a definite rejection (the relay answered 4xx/5xx): the mail is known not to be
 * out. Nothing else in the worker releases a claim.
 */
export async function releaseClaim(db: DbOrTx, { noticeKey, claimToken }: { noticeKey: string; claimToken: string }): Promise<boolean> {
  const rows = await db
    .update(noticeLedger)
    .set({ state: 'released', claimToken: null, updatedAt: sql`now()` })
    .where(and(eq(noticeLedger.noticeKey, noticeKey), eq(noticeLedger.claimToken, claimToken), eq(noticeLedger.state, 'claimed')))
    .returning({ noticeKey: noticeLedger.noticeKey });
  return rows.length > 0;
}

export type QuarantinedClaim = Pick<LedgerRow, 'noticeKey' | 'noticeType' | 'jobId' | 'claimedBy' | 'claimedAt' | 'recipientDomain' | 'providerMessageId'>;

/** Claims stuck in `claimed` for longer than `olderThanMs` (QUARANTINE_AFTER), oldest first. */
export async function listQuarantined(db: DbOrTx, { olderThanMs, limit = 500 }: { olderThanMs: number; limit?: number }): Promise<QuarantinedClaim[]> {
  return db
    .select({
      noticeKey: noticeLedger.noticeKey,
      noticeType: noticeLedger.noticeType,
      jobId: noticeLedger.jobId,
      claimedBy: noticeLedger.claimedBy,
      claimedAt: noticeLedger.claimedAt,
      recipientDomain: noticeLedger.recipientDomain,
      providerMessageId: noticeLedger.providerMessageId,
    })
    .from(noticeLedger)
    .where(and(eq(noticeLedger.state, 'claimed'), lt(noticeLedger.claimedAt, sql`now() - make_interval(secs => ${olderThanMs / 1000})`)))
    .orderBy(asc(noticeLedger.claimedAt))
    .limit(limit);
}

export async function countQuarantined(db: DbOrTx, { olderThanMs }: { olderThanMs: number }): Promise<number> {
  const rows = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(noticeLedger)
    .where(and(eq(noticeLedger.state, 'claimed'), lt(noticeLedger.claimedAt, sql`now() - make_interval(secs => ${olderThanMs / 1000})`)));
  return rows[0]?.count ?? 0;
}

/**
 * An on-call decision ("the provider has no trace of it: send again"): the stuck claim is
 * released and its job made pending again, in one statement. The stored one-time code stays
 * on the row, so the resend carries the same code as anything the first attempt delivered.
 */
export async function releaseStuckClaimForResend(db: DbOrTx, { noticeKey, resolution }: { noticeKey: string; resolution: string }): Promise<boolean> {
  const result = await db.execute<{ notice_key: string }>(sql`
    with released as (
      update notice_ledger set state = 'released', claim_token = null, resolution = ${resolution}, resolved_at = now(), updated_at = now()
      where notice_key = ${noticeKey} and state = 'claimed'
      returning notice_key, job_id
    ), job as (
      update ${reminderJobs} set state = 'pending', next_attempt_at = now(), updated_at = now()
      where id = (select job_id from released) and state = 'claimed'
      returning id
    )
    select notice_key, (select count(*) from job) as jobs from released
  `);
  return result.rows.length > 0;
}

export type BackfillRow = {
  noticeKey: string;
  noticeType: string;
  identity: Record<string, string>;
  revision: number;
  jobId: string | null;
  sentAt: Date;
  providerMessageId: string | null;
  recipientDomain: string | null;
};

/** Notices already out before the ledger: `sent` rows, source `backfill`. Never overwrites. */
export async function insertBackfilledSent(db: DbOrTx, { rows }: { rows: BackfillRow[] }): Promise<string[]> {
  if (rows.length === 0) return [];
  const inserted = await db
    .insert(noticeLedger)
    .values(
      rows.map((row) => ({
        noticeKey: row.noticeKey,
        noticeType: row.noticeType,
        identity: row.identity,
        revision: row.revision,
        jobId: row.jobId,
        state: 'sent' as const,
        claimedAt: row.sentAt,
        sentAt: row.sentAt,
        providerMessageId: row.providerMessageId,
        recipientDomain: row.recipientDomain,
        source: 'backfill' as const,
      })),
    )
    .onConflictDoNothing({ target: noticeLedger.noticeKey })
    .returning({ noticeKey: noticeLedger.noticeKey });
  return inserted.map((row) => row.noticeKey);
}

/**
 * Backfill from the job table: jobs the pre-ledger pipeline already marked `sent` get a
 * `sent` ledger row (sent_at = the job's last update). One statement; idempotent.
 */
export async function backfillSentJobs(db: DbOrTx, { limit = 10_000, dryRun = false }: { limit?: number; dryRun?: boolean }): Promise<{ candidates: number; inserted: number }> {
  const candidates = sql`
    select j.notice_key, j.notice_type, j.identity, j.revision, j.id, j.updated_at,
           lower(split_part(j.recipient_email, '@', 2)) as domain
    from reminder_jobs j
    where j.state = 'sent' and not exists (select 1 from notice_ledger l where l.notice_key = j.notice_key)
    order by j.updated_at
    limit ${limit}`;
  if (dryRun) {
    const counted = await db.execute<{ count: number }>(sql`select count(*)::int as count from (${candidates}) c`);
    return { candidates: counted.rows[0]?.count ?? 0, inserted: 0 };
  }
  const result = await db.execute<{ candidates: number; inserted: number }>(sql`
    with c as (${candidates}),
    ins as (
      insert into notice_ledger (notice_key, notice_type, identity, revision, job_id, state, claimed_at, sent_at, recipient_domain, source, updated_at)
      select notice_key, notice_type, identity, revision, id, 'sent', updated_at, updated_at, domain, 'backfill', now() from c
      on conflict (notice_key) do nothing
      returning notice_key
    )
    select (select count(*) from c)::int as candidates, (select count(*) from ins)::int as inserted`);
  return result.rows[0] ?? { candidates: 0, inserted: 0 };
}

/** Which of these keys the ledger already holds (backfill reports them as existing). */
export async function existingNoticeKeys(db: DbOrTx, { keys }: { keys: string[] }): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db.select({ noticeKey: noticeLedger.noticeKey }).from(noticeLedger).where(inArray(noticeLedger.noticeKey, keys));
  return new Set(rows.map((row) => row.noticeKey));
}
