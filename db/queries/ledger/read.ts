import { eq, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { noticeLedger, type LedgerRow } from '@/db/schema';
import type { LedgerState } from '@/db/schema/states';
import { toDate, toDateOrNull } from '@/db/queries/console-dates';
import { correlationMatches, eventNamesClaim } from './evidence-match';

/**
 * Reading the ledger: one row, and the quarantine — rows still `claimed` QUARANTINE_AFTER after
 * the claim, for the console's page and counts and the worker's gauge alike. Every quarantine
 * statement filters on `state = 'claimed'` first, so it runs off the partial index
 * notice_ledger_claimed_idx, whose size is the number of claims in flight, not 10 M.
 */

export async function getLedgerRow(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<LedgerRow | null> {
  const rows = await db.select().from(noticeLedger).where(eq(noticeLedger.noticeKey, noticeKey)).limit(1);
  return rows[0] ?? null;
}

export async function getLedgerState(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<LedgerState | null> {
  const rows = await db.select({ state: noticeLedger.state }).from(noticeLedger).where(eq(noticeLedger.noticeKey, noticeKey)).limit(1);
  return rows[0]?.state ?? null;
}

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
  /** The provider's own word (Twilio: queued, sent, delivered, undelivered, failed). */
  rawType?: string;
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
  /** What the provider reconciler last heard (Postmark, SendGrid), when it asked (lib/reconcile/provider-lookups.ts). */
  providerLookup: ProviderLookupView | null;
};

export type ProviderLookupView = {
  provider: string;
  outcome: 'not_found' | 'lookup_failed' | 'gave_up' | 'found';
  checks: number;
  lastCheckedAt: string;
  detail: string | null;
};

/** The quarantine: claims still `claimed` quarantineAfterMs after the claim, narrowed by the selection. */
export function whereQuarantined({ quarantineAfterMs, selection }: { quarantineAfterMs: number; selection: QuarantineSelection }): SQL {
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
    select pe.event_type as "eventType", pe.raw_type as "rawType", pe.occurred_at as "occurredAt", pe.provider, pe.provider_message_id as "providerMessageId",
      case when pe.notice_key = l.notice_key then 'notice_key'
           when ${correlationMatches} then 'correlation'
           else 'provider_id' end as "matchedBy"
    from provider_events pe
    where ${eventNamesClaim}
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
      ${evidenceSubquery} as evidence,
      case when pl.notice_key is null then null else json_build_object('provider', pl.provider, 'outcome', pl.outcome, 'checks', pl.checks,
        'lastCheckedAt', pl.last_checked_at, 'detail', pl.detail) end as "providerLookup"
    from notice_ledger l
    left join reminder_jobs j on j.notice_key = l.notice_key
    left join provider_lookups pl on pl.notice_key = l.notice_key and pl.first_checked_at >= l.claimed_at
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
