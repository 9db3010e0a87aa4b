import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import type { JobState, LedgerState } from '@/db/schema/states';
import { toDate, toDateOrNull } from '@/db/queries/console-dates';
import { eventNamesClaim } from './evidence-match';
import { whereQuarantined, type QuarantineSelection } from './read';

/**
 * How a claim the worker could not settle ends: provider evidence of hand-over confirms it
 * sent, or a person confirms, releases for resend or suppresses it. ONE statement moves the
 * ledger row and its job; every update is guarded by `state = 'claimed'`, so a claim the
 * other party (or a concurrent on-call) resolved meanwhile is skipped, never overwritten, and a
 * row that is sent, released or suppressed is never touched. The allowed moves are the table
 * in lib/ledger/transitions.ts (checked against this SQL by transitions.test.ts).
 */

export type QuarantineAction = 'confirm_sent' | 'release' | 'suppress';

export type ClaimResolution =
  | { by: 'operator'; action: QuarantineAction }
  /** The hand-over event that proves it: its time becomes sent_at (never in the future), its id fills a missing provider id. */
  | { by: 'provider_evidence'; occurredAt: Date; providerMessageId: string | null };

export type ResolvedClaim = {
  noticeKey: string;
  state: LedgerState;
  providerMessageId: string | null;
  claimedAt: Date;
  claimedBy: string | null;
  sentAt: Date | null;
  /** The job's state after the statement; null when it was not moved (no job, or already final). */
  jobState: JobState | null;
};

/** The earliest stored accepted/delivered event about the row, and the first provider id any event names. */
const confirmSentFromStoredEvidence = sql`state = 'sent', sent_at = coalesce((
    select min(pe.occurred_at) from provider_events pe
    where ${eventNamesClaim} and pe.event_type in ('accepted', 'delivered')
  ), now()),
  provider_message_id = coalesce(l.provider_message_id, (
    select pe.provider_message_id from provider_events pe
    where ${eventNamesClaim} and pe.provider_message_id is not null
    order by pe.occurred_at limit 1))`;

function ledgerChange(resolution: ClaimResolution): { set: SQL; resolution: string } {
  if (resolution.by === 'provider_evidence') {
    return {
      set: sql`state = 'sent', sent_at = least(${resolution.occurredAt.toISOString()}::timestamptz, now()),
        provider_message_id = coalesce(l.provider_message_id, ${resolution.providerMessageId}::text)`,
      resolution: 'provider_evidence',
    };
  }
  const set =
    resolution.action === 'confirm_sent'
      ? confirmSentFromStoredEvidence
      : resolution.action === 'release'
        ? sql`state = 'released'`
        : sql`state = 'suppressed'`;
  return { set, resolution: `operator:${resolution.action}` };
}

/** The job follows its row: sent, pending again (due now, for the sweeper), or suppressed. A person may also settle a job that gave up (`failed`). */
function jobChange(resolution: ClaimResolution): { set: SQL; from: SQL } {
  if (resolution.by === 'provider_evidence') return { set: sql`state = 'sent'`, from: sql`('pending', 'claimed')` };
  const from = sql`('pending', 'claimed', 'failed')`;
  if (resolution.action === 'confirm_sent') return { set: sql`state = 'sent'`, from };
  if (resolution.action === 'release') return { set: sql`state = 'pending', next_attempt_at = now(), wakeup_published_at = null`, from };
  return { set: sql`state = 'suppressed', suppression_reason = 'operator'`, from };
}

type RawResolved = Omit<ResolvedClaim, 'claimedAt' | 'sentAt'> & { claimedAt: unknown; sentAt: unknown };

export async function resolveClaims(db: DbOrTx, { keys, resolution }: { keys: string[]; resolution: ClaimResolution }): Promise<ResolvedClaim[]> {
  if (keys.length === 0) return [];
  const ledger = ledgerChange(resolution);
  const job = jobChange(resolution);
  const result = await db.execute<RawResolved>(sql`
    with resolved as (
      update notice_ledger l set ${ledger.set}, resolution = ${ledger.resolution}, resolved_at = now(), updated_at = now()
      where l.notice_key = any(${sql.param(keys)}::text[]) and l.state = 'claimed'
      returning l.notice_key, l.state, l.provider_message_id, l.claimed_at, l.claimed_by, l.sent_at
    ), job as (
      update reminder_jobs j set ${job.set}, updated_at = now()
      from resolved where j.notice_key = resolved.notice_key and j.state in ${job.from}
      returning j.notice_key, j.state
    )
    select r.notice_key as "noticeKey", r.state, r.provider_message_id as "providerMessageId", r.claimed_at as "claimedAt",
      r.claimed_by as "claimedBy", r.sent_at as "sentAt", job.state as "jobState"
    from resolved r left join job on job.notice_key = r.notice_key`);
  return result.rows.map((row) => ({ ...row, claimedAt: toDate(row.claimedAt), sentAt: toDateOrNull(row.sentAt) }));
}

export type LockedClaim = {
  noticeKey: string;
  state: string;
  claimedAt: string;
  claimedBy: string | null;
  providerMessageId: string | null;
  jobId: string | null;
  jobState: string | null;
  evidenceProviderMessageId: string | null;
  evidenceOccurredAt: string | null;
};

/**
 * A person's resolution starts here: locks the selected quarantined rows for the rest of the
 * transaction and returns their state before the change, for the audit log.
 */
export async function lockQuarantined(
  db: DbOrTx,
  params: { quarantineAfterMs: number; selection: QuarantineSelection; limit: number },
): Promise<LockedClaim[]> {
  const where = whereQuarantined(params);
  const result = await db.execute<LockedClaim>(sql`
    select l.notice_key as "noticeKey", l.state, l.claimed_at::text as "claimedAt", l.claimed_by as "claimedBy",
      l.provider_message_id as "providerMessageId", j.id as "jobId", j.state as "jobState",
      ev.provider_message_id as "evidenceProviderMessageId", ev.occurred_at::text as "evidenceOccurredAt"
    from notice_ledger l
    left join reminder_jobs j on j.notice_key = l.notice_key
    left join lateral (
      select pe.provider_message_id, pe.occurred_at from provider_events pe
      where ${eventNamesClaim}
        and pe.event_type in ('accepted', 'delivered')
      order by pe.occurred_at limit 1
    ) ev on true
    where ${where}
    order by l.claimed_at, l.notice_key
    limit ${params.limit}
    for update of l`);
  return result.rows;
}
