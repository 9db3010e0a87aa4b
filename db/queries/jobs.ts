import { and, eq, inArray, sql } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Db, DbOrTx, Tx } from '@/db/client';
import { evidence, recipientPreferences, recipientSuppressions, reminderJobs, type JobRow } from '@/db/schema';
import type { JobState, LedgerState, PreferenceState, RecipientSuppressionReason, SuppressionReason } from '@/db/schema/states';

/** The send path's transitions on `reminder_jobs`. Each is conditional on the state it leaves. */

export type JobForSend = {
  job: JobRow;
  recipientSuppression: RecipientSuppressionReason | null;
  /** The recipient's preference for the job's category by email; `opted_in` when none is stored. */
  preference: PreferenceState;
  evidenceState: 'open' | 'resolved' | null;
};

/**
 * The job with what the policy step reads: the recipient's suppression, their preference for the
 * job's category on the job's channel, and the evidence state. One statement.
 */
function selectJobForSend(db: DbOrTx) {
  return (
    db
      .select({
        job: reminderJobs,
        recipientSuppression: recipientSuppressions.reason,
        preference: recipientPreferences.state,
        evidenceState: evidence.state,
      })
      .from(reminderJobs)
      // The suppression list is of mail addresses (bounces, complaints): it binds email notices only.
      .leftJoin(recipientSuppressions, and(eq(recipientSuppressions.email, sql`lower(${reminderJobs.recipientEmail})`), eq(reminderJobs.channel, 'email')))
      // The preference on the job's own channel, keyed by the address on it (recipientAddress, lib/windows/channel.ts).
      .leftJoin(
        recipientPreferences,
        and(
          eq(
            recipientPreferences.recipient,
            sql`case when ${reminderJobs.channel} = 'sms' then ${reminderJobs.recipientPhone} else lower(${reminderJobs.recipientEmail}) end`,
          ),
          eq(recipientPreferences.category, reminderJobs.category),
          eq(recipientPreferences.channel, reminderJobs.channel),
        ),
      )
      .leftJoin(evidence, eq(evidence.ref, reminderJobs.evidenceRef))
  );
}

function jobForSend(row: {
  job: JobRow;
  recipientSuppression: RecipientSuppressionReason | null;
  preference: PreferenceState | null;
  evidenceState: 'open' | 'resolved' | null;
}): JobForSend {
  return {
    job: row.job,
    recipientSuppression: row.recipientSuppression ?? null,
    preference: row.preference ?? 'opted_in',
    evidenceState: row.evidenceState ?? null,
  };
}

function loadJobQuery(db: DbOrTx) {
  return selectJobForSend(db)
    .where(eq(reminderJobs.id, sql.placeholder('jobId')))
    .limit(1);
}

// Built once per pool: a NAMED prepared statement, parsed and planned once per connection.
const preparedLoads = new WeakMap<object, ReturnType<ReturnType<typeof loadJobQuery>['prepare']>>();

/** The job with everything the policy step reads, in one round trip. */
export async function loadJobForSend(db: DbOrTx, { jobId }: { jobId: string }): Promise<JobForSend | null> {
  let rows;
  if (db instanceof PgTransaction) {
    rows = await loadJobQuery(db).execute({ jobId });
  } else {
    let prepared = preparedLoads.get(db);
    if (!prepared) {
      prepared = loadJobQuery(db).prepare('jobs_load_for_send');
      preparedLoads.set(db, prepared);
    }
    rows = await prepared.execute({ jobId });
  }
  const row = rows[0];
  if (!row) return null;
  return jobForSend(row);
}

function loadJobsQuery(db: Db) {
  return selectJobForSend(db).where(sql`${reminderJobs.id} = any(${sql.placeholder('jobIds')}::uuid[])`);
}

const preparedBatchLoads = new WeakMap<object, ReturnType<ReturnType<typeof loadJobsQuery>['prepare']>>();

/** loadJobForSend for many wake-ups in one round trip; unknown ids are absent from the map. */
export async function loadJobsForSend(db: Db, jobIds: readonly string[]): Promise<Map<string, JobForSend>> {
  if (jobIds.length === 0) return new Map();
  let prepared = preparedBatchLoads.get(db);
  if (!prepared) {
    prepared = loadJobsQuery(db).prepare('jobs_load_many_for_send');
    preparedBatchLoads.set(db, prepared);
  }
  const rows = await prepared.execute({ jobIds: [...jobIds] });
  const byId = new Map<string, JobForSend>();
  for (const row of rows) {
    if (!byId.has(row.job.id)) byId.set(row.job.id, jobForSend(row));
  }
  return byId;
}

/** Whether a policy may still change a job the worker loaded; when not, what stands in its way. */
export type PolicyHold = { ok: true } | { ok: false; jobState: JobState | null; ledgerState: LedgerState | null };

/**
 * Before a policy's change to a job the worker loaded (a deferral, a suppression), inside the
 * transaction that makes it: locks the job row, then says whether the job is still pending or
 * claimed with no claim on its notice held. Every claim locks this row first (./ledger/claim.ts),
 * so none is taken between this answer and the change; one taken after the job was loaded is seen,
 * the ledger being read by a second statement, after the lock. Without it a duplicate delivery
 * that loaded the job pending could suppress it under another delivery's live claim, and that
 * claim's commit would leave the ledger sent and the job suppressed (chaos on RabbitMQ, CI 2026-12-03).
 */
export async function holdJobForPolicy(tx: Tx, { jobId, noticeKey }: { jobId: string; noticeKey: string }): Promise<PolicyHold> {
  const job = await tx.execute<{ state: JobState }>(sql`select state from reminder_jobs where id = ${jobId} for update`);
  const jobState = job.rows[0]?.state ?? null;
  const ledger = await tx.execute<{ state: LedgerState }>(sql`select state from notice_ledger where notice_key = ${noticeKey}`);
  const ledgerState = ledger.rows[0]?.state ?? null;
  const movable = jobState === 'pending' || jobState === 'claimed';
  const claimHeld = ledgerState !== null && ledgerState !== 'released';
  return movable && !claimHeld ? { ok: true } : { ok: false, jobState, ledgerState };
}

/**
 * Early wake-up, quiet hours, throttle: move next_attempt_at; attempts unchanged. With
 * `reopen`, a `claimed` job whose claim was released becomes pending again.
 */
export async function deferJob(db: DbOrTx, { jobId, until, reopen = false }: { jobId: string; until: Date; reopen?: boolean }): Promise<boolean> {
  const rows = await db
    .update(reminderJobs)
    .set({ state: 'pending', nextAttemptAt: until, updatedAt: sql`now()` })
    .where(and(eq(reminderJobs.id, jobId), inArray(reminderJobs.state, reopen ? ['pending', 'claimed'] : ['pending'])))
    .returning({ id: reminderJobs.id });
  return rows.length > 0;
}

export async function suppressJob(db: DbOrTx, { jobId, reason }: { jobId: string; reason: SuppressionReason }): Promise<boolean> {
  const rows = await db
    .update(reminderJobs)
    .set({ state: 'suppressed', suppressionReason: reason, updatedAt: sql`now()` })
    .where(and(eq(reminderJobs.id, jobId), inArray(reminderJobs.state, ['pending', 'claimed'])))
    .returning({ id: reminderJobs.id });
  return rows.length > 0;
}

/** A definite temporary rejection: back to pending with a later next_attempt_at, one attempt more. */
export async function retryJob(db: DbOrTx, { jobId, nextAttemptAt, errorClass }: { jobId: string; nextAttemptAt: Date; errorClass: string }): Promise<boolean> {
  const rows = await db
    .update(reminderJobs)
    .set({ state: 'pending', attempts: sql`${reminderJobs.attempts} + 1`, nextAttemptAt, lastErrorClass: errorClass, updatedAt: sql`now()` })
    .where(and(eq(reminderJobs.id, jobId), inArray(reminderJobs.state, ['pending', 'claimed'])))
    .returning({ id: reminderJobs.id });
  return rows.length > 0;
}

/** A temporary failure with no attempt left before the deadline (lib/jobs/backoff.ts): suppressed `window_missed`, the failure kept as its cause. */
export async function missWindowAfterRetries(db: DbOrTx, { jobId, errorClass }: { jobId: string; errorClass: string }): Promise<boolean> {
  const rows = await db
    .update(reminderJobs)
    .set({
      state: 'suppressed',
      suppressionReason: 'window_missed',
      attempts: sql`${reminderJobs.attempts} + 1`,
      lastErrorClass: errorClass,
      updatedAt: sql`now()`,
    })
    .where(and(eq(reminderJobs.id, jobId), inArray(reminderJobs.state, ['pending', 'claimed'])))
    .returning({ id: reminderJobs.id });
  return rows.length > 0;
}

export async function failJob(db: DbOrTx, { jobId, errorClass }: { jobId: string; errorClass: string }): Promise<boolean> {
  const rows = await db
    .update(reminderJobs)
    .set({ state: 'failed', attempts: sql`${reminderJobs.attempts} + 1`, lastErrorClass: errorClass, updatedAt: sql`now()` })
    .where(and(eq(reminderJobs.id, jobId), inArray(reminderJobs.state, ['pending', 'claimed'])))
    .returning({ id: reminderJobs.id });
  return rows.length > 0;
}

/** An unknown outcome: the claim stays, the job records the attempt and what went wrong. */
export async function recordUnknownOutcome(db: DbOrTx, { jobId, errorClass }: { jobId: string; errorClass: string }): Promise<void> {
  await db
    .update(reminderJobs)
    .set({ attempts: sql`${reminderJobs.attempts} + 1`, lastErrorClass: errorClass, updatedAt: sql`now()` })
    .where(and(eq(reminderJobs.id, jobId), eq(reminderJobs.state, 'claimed')));
}

/**
 * Our transport's configuration refused the send (SMTP 535, Twilio 20003): back to pending for
 * `nextAttemptAt`, the error recorded, and no attempt counted: the notice did nothing wrong.
 */
export async function releaseJobUncounted(
  db: DbOrTx,
  { jobId, nextAttemptAt, errorClass }: { jobId: string; nextAttemptAt: Date; errorClass: string },
): Promise<boolean> {
  const rows = await db
    .update(reminderJobs)
    .set({ state: 'pending', nextAttemptAt, lastErrorClass: errorClass, updatedAt: sql`now()` })
    .where(and(eq(reminderJobs.id, jobId), inArray(reminderJobs.state, ['pending', 'claimed'])))
    .returning({ id: reminderJobs.id });
  return rows.length > 0;
}
