import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { toDate, toDateOrNull } from './console-dates';

/**
 * Stuck claims: notice_ledger rows still `claimed` QUARANTINE_AFTER after the claim. Every
 * statement here filters on `state = 'claimed'` first, so it runs off the partial index
 * notice_ledger_claimed_idx, whose size is the number of claims in flight, not 10 M.
 */

export type QuarantineFilter = {
  /** Only claims made at least this many minutes ago (never younger than the quarantine threshold). */
  olderThanMinutes?: number;
  recipientDomain?: string;
  noticeType?: string;
};

export type QuarantineSelection = { keys: string[] } | { filter: QuarantineFilter };

/** claimedAt as PostgreSQL printed it, so microseconds survive the round trip. */
export type QuarantineCursor = { claimedAt: string; noticeKey: string };

export type EvidenceEvent = {
  eventType: string;
  occurredAt: string;
  provider: string;
  providerMessageId: string | null;
  matchedBy: 'notice_key' | 'correlation' | 'provider_id';
};

export type QuarantinedClaim = {
  noticeKey: string;
  cursorAt: string;
  noticeType: string;
  claimedAt: Date;
  claimedBy: string | null;
  recipientDomain: string | null;
  providerMessageId: string | null;
  jobId: string | null;
  jobState: string | null;
  dueAt: Date | null;
  deadlineAt: Date | null;
  subjectId: string | null;
  evidence: EvidenceEvent[];
};

function whereQuarantined({ quarantineAfterMs, selection }: { quarantineAfterMs: number; selection: QuarantineSelection }): SQL {
  const conditions: SQL[] = [sql`l.state = 'claimed'`, sql`l.claimed_at < now() - make_interval(secs => ${quarantineAfterMs / 1000})`];
  if ('keys' in selection) {
    conditions.push(sql`l.notice_key = any(${sql.param(selection.keys)}::text[])`);
  } else {
    const { olderThanMinutes, recipientDomain, noticeType } = selection.filter;
    if (olderThanMinutes) conditions.push(sql`l.claimed_at < now() - make_interval(secs => ${olderThanMinutes * 60})`);
    if (recipientDomain) conditions.push(sql`l.recipient_domain = ${recipientDomain.toLowerCase()}`);
    if (noticeType) conditions.push(sql`l.notice_type = ${noticeType}`);
  }
  return sql.join(conditions, sql` and `);
}

const evidenceSubquery = sql`coalesce((
  select json_agg(e order by e."occurredAt")
  from (
    select pe.event_type as "eventType", pe.occurred_at as "occurredAt", pe.provider, pe.provider_message_id as "providerMessageId",
      case when pe.notice_key = l.notice_key then 'notice_key'
           when pe.correlation_id = left(l.notice_key, 32) then 'correlation'
           else 'provider_id' end as "matchedBy"
    from provider_events pe
    where pe.notice_key = l.notice_key
       or pe.correlation_id = left(l.notice_key, 32)
       or (l.provider_message_id is not null and pe.provider_message_id = l.provider_message_id)
    order by pe.occurred_at
    limit 10
  ) e
), '[]'::json)`;

type RawClaim = Omit<QuarantinedClaim, 'claimedAt' | 'dueAt' | 'deadlineAt'> & { claimedAt: unknown; dueAt: unknown; deadlineAt: unknown };

function toClaim(row: RawClaim): QuarantinedClaim {
  return {
    ...row,
    claimedAt: toDate(row.claimedAt),
    dueAt: toDateOrNull(row.dueAt),
    deadlineAt: toDateOrNull(row.deadlineAt),
  };
}

/** Oldest first, keyset on (claimed_at, notice_key). */
export async function listQuarantined(
  db: DbOrTx,
  params: { quarantineAfterMs: number; filter?: QuarantineFilter; after?: QuarantineCursor; limit: number },
): Promise<QuarantinedClaim[]> {
  const where = whereQuarantined({ quarantineAfterMs: params.quarantineAfterMs, selection: { filter: params.filter ?? {} } });
  const keyset = params.after ? sql`and (l.claimed_at, l.notice_key) > (${params.after.claimedAt}::timestamptz, ${params.after.noticeKey})` : sql``;
  const result = await db.execute<RawClaim>(sql`
    select l.notice_key as "noticeKey", l.claimed_at::text as "cursorAt", l.notice_type as "noticeType", l.claimed_at as "claimedAt", l.claimed_by as "claimedBy",
      l.recipient_domain as "recipientDomain", l.provider_message_id as "providerMessageId",
      j.id as "jobId", j.state as "jobState", j.due_at as "dueAt", j.deadline_at as "deadlineAt", j.subject_id as "subjectId",
      ${evidenceSubquery} as evidence
    from notice_ledger l
    left join reminder_jobs j on j.notice_key = l.notice_key
    where ${where} ${keyset}
    order by l.claimed_at, l.notice_key
    limit ${params.limit}`);
  return result.rows.map(toClaim);
}

export async function countQuarantined(db: DbOrTx, params: { quarantineAfterMs: number; selection?: QuarantineSelection }): Promise<number> {
  const where = whereQuarantined({ quarantineAfterMs: params.quarantineAfterMs, selection: params.selection ?? { filter: {} } });
  const result = await db.execute<{ count: number }>(sql`select count(*)::int as count from notice_ledger l where ${where}`);
  return result.rows[0]?.count ?? 0;
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
 * Locks the selected quarantined rows (ledger and job) for the rest of the transaction and
 * returns their state before the change, for the audit log.
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
      where (pe.notice_key = l.notice_key or pe.correlation_id = left(l.notice_key, 32))
        and pe.event_type in ('accepted', 'delivered')
      order by pe.occurred_at limit 1
    ) ev on true
    where ${where}
    order by l.claimed_at, l.notice_key
    limit ${params.limit}
    for update of l`);
  return result.rows;
}

export type QuarantineAction = 'confirm_sent' | 'release' | 'suppress';

/** Moves claimed rows on; the `state = 'claimed'` guard makes a concurrent resolution a no-op. */
export async function resolveLedgerClaims(
  db: DbOrTx,
  { action, keys, resolution }: { action: QuarantineAction; keys: string[]; resolution: string },
): Promise<{ noticeKey: string; state: string; providerMessageId: string | null }[]> {
  if (keys.length === 0) return [];
  const set =
    action === 'confirm_sent'
      ? sql`state = 'sent', sent_at = coalesce((
            select min(pe.occurred_at) from provider_events pe
            where (pe.notice_key = l.notice_key or pe.correlation_id = left(l.notice_key, 32)) and pe.event_type in ('accepted', 'delivered')
          ), now()),
          provider_message_id = coalesce(l.provider_message_id, (
            select pe.provider_message_id from provider_events pe
            where (pe.notice_key = l.notice_key or pe.correlation_id = left(l.notice_key, 32)) and pe.provider_message_id is not null
            order by pe.occurred_at limit 1))`
      : action === 'release'
        ? sql`state = 'released'`
        : sql`state = 'suppressed'`;
  const result = await db.execute<{ noticeKey: string; state: string; providerMessageId: string | null }>(sql`
    update notice_ledger l set ${set}, resolution = ${resolution}, resolved_at = now(), updated_at = now()
    where l.notice_key = any(${sql.param(keys)}::text[]) and l.state = 'claimed'
    returning l.notice_key as "noticeKey", l.state, l.provider_message_id as "providerMessageId"`);
  return result.rows;
}

/** The job follows its ledger row: sent, pending again (due now, for the sweeper), or suppressed. */
export async function resolveJobsForClaims(
  db: DbOrTx,
  { action, keys }: { action: QuarantineAction; keys: string[] },
): Promise<{ noticeKey: string; state: string }[]> {
  if (keys.length === 0) return [];
  const set =
    action === 'confirm_sent'
      ? sql`state = 'sent'`
      : action === 'release'
        ? sql`state = 'pending', next_attempt_at = now(), wakeup_published_at = null`
        : sql`state = 'suppressed', suppression_reason = 'operator'`;
  const result = await db.execute<{ noticeKey: string; state: string }>(sql`
    update reminder_jobs set ${set}, updated_at = now()
    where notice_key = any(${sql.param(keys)}::text[]) and state in ('pending', 'claimed', 'failed')
    returning notice_key as "noticeKey", state`);
  return result.rows;
}
