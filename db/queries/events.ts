import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { auditLog } from '../schema/audit';
import { providerEvents, type ProviderEventRow } from '../schema/events';
import { reminderJobs } from '../schema/jobs';
import { noticeLedger } from '../schema/ledger';
import { handOverEventTypes, type LedgerState, type ProviderEventType } from '../schema/states';

export type NewProviderEvent = {
  provider: string;
  eventId: string;
  eventType: ProviderEventType;
  rawType: string;
  correlationId: string | null;
  providerMessageId: string | null;
  noticeKey?: string | null;
  recipient: string | null;
  bounceType: string | null;
  occurredAt: Date;
  details: Record<string, unknown>;
};

/** `insert … on conflict (provider, event_id) do nothing`: the row id when new, null for a duplicate. */
export async function insertProviderEvent(db: DbOrTx, { event }: { event: NewProviderEvent }): Promise<number | null> {
  const rows = await db
    .insert(providerEvents)
    .values(event)
    .onConflictDoNothing({ target: [providerEvents.provider, providerEvents.eventId] })
    .returning({ id: providerEvents.id });
  return rows[0]?.id ?? null;
}

export type LedgerLink = { noticeKey: string; state: LedgerState };

/**
 * The correlation is the first 32 hex of the 64-hex key, so the row is the one key in
 * [corr·0…0, corr·f…f]: a range scan on the primary key (a `like 'corr%'` would need
 * text_pattern_ops). Only a unique match links; the provider id is the fallback (SES).
 */
export async function findLedgerLink(db: DbOrTx, { correlationId, providerMessageId }: { correlationId: string | null; providerMessageId: string | null }): Promise<LedgerLink | null> {
  if (correlationId && /^[0-9a-f]{32}$/.test(correlationId)) {
    const rows = await db
      .select({ noticeKey: noticeLedger.noticeKey, state: noticeLedger.state })
      .from(noticeLedger)
      .where(sql`${noticeLedger.noticeKey} >= ${correlationId + '0'.repeat(32)} and ${noticeLedger.noticeKey} <= ${correlationId + 'f'.repeat(32)}`)
      .limit(2);
    if (rows.length === 1 && rows[0]) return rows[0];
  }
  if (providerMessageId) {
    const rows = await db
      .select({ noticeKey: noticeLedger.noticeKey, state: noticeLedger.state })
      .from(noticeLedger)
      .where(eq(noticeLedger.providerMessageId, providerMessageId))
      .limit(2);
    if (rows.length === 1 && rows[0]) return rows[0];
  }
  return null;
}

export async function linkProviderEvent(db: DbOrTx, { id, noticeKey }: { id: number; noticeKey: string }): Promise<void> {
  await db.update(providerEvents).set({ noticeKey }).where(and(eq(providerEvents.id, id), isNull(providerEvents.noticeKey)));
}

export type Evidence = { rowId: number; provider: string; eventId: string; eventType: ProviderEventType; occurredAt: Date; providerMessageId: string | null };

export const RECONCILER_ACTOR = 'system:reconciler';
export const RECONCILER_REASON = 'resolved by provider evidence';

/**
 * claimed → sent on provider evidence, and nothing else: the `state = 'claimed'` guard makes it
 * a no-op for rows already sent, released or suppressed, and it never makes a row sendable.
 * The ledger update, the job update and the audit row commit together (call inside a tx).
 */
export async function confirmClaimSentByEvidence(db: DbOrTx, { noticeKey, evidence }: { noticeKey: string; evidence: Evidence }): Promise<boolean> {
  const sentAt = sql`least(${evidence.occurredAt.toISOString()}::timestamptz, now())`;
  const updated = await db
    .update(noticeLedger)
    .set({
      state: 'sent',
      sentAt,
      providerMessageId: sql`coalesce(${noticeLedger.providerMessageId}, ${evidence.providerMessageId})`,
      resolution: 'provider_evidence',
      resolvedAt: sql`now()`,
      updatedAt: sql`now()`,
    })
    .where(and(eq(noticeLedger.noticeKey, noticeKey), eq(noticeLedger.state, 'claimed')))
    .returning({ claimedAt: noticeLedger.claimedAt, claimedBy: noticeLedger.claimedBy, sentAt: noticeLedger.sentAt, jobId: noticeLedger.jobId });
  const row = updated[0];
  if (!row) return false;
  await db
    .update(reminderJobs)
    .set({ state: 'sent', updatedAt: sql`now()` })
    .where(and(eq(reminderJobs.noticeKey, noticeKey), sql`${reminderJobs.state} in ('pending', 'claimed')`));
  await db.insert(auditLog).values({
    actor: RECONCILER_ACTOR,
    action: 'ledger.confirm_sent',
    targetType: 'notice',
    targetId: noticeKey,
    reason: RECONCILER_REASON,
    before: { state: 'claimed', claimedAt: row.claimedAt.toISOString(), claimedBy: row.claimedBy },
    after: {
      state: 'sent',
      sentAt: row.sentAt?.toISOString() ?? null,
      evidenceEventId: `${evidence.provider}:${evidence.eventId}`,
      evidenceEventRowId: evidence.rowId,
      evidenceType: evidence.eventType,
    },
  });
  return true;
}

export type ClaimWithEvidence = { noticeKey: string; evidence: Evidence };

/**
 * Claimed rows for which a stored hand-over event (`handOverEventTypes`) exists, matched by correlation or
 * by provider message id — whether or not the event was linked when it arrived (it may have
 * come before the worker stored the provider id). Both arms start from the partial
 * `state = 'claimed'` index, so this stays cheap however large the ledger grows.
 */
export async function listClaimsWithSendEvidence(db: DbOrTx, { limit }: { limit: number }): Promise<ClaimWithEvidence[]> {
  const result = await db.execute<{
    notice_key: string;
    row_id: number;
    provider: string;
    event_id: string;
    event_type: ProviderEventType;
    occurred_at: Date | string;
    provider_message_id: string | null;
  }>(sql`
    select distinct on (m.notice_key) m.notice_key, e.id as row_id, e.provider, e.event_id, e.event_type, e.occurred_at, e.provider_message_id
    from (
      select l.notice_key, e.id as event_row
      from notice_ledger l
      join provider_events e on e.correlation_id = left(l.notice_key, 32)
      where l.state = 'claimed' and e.event_type = any(${sql.param([...handOverEventTypes])}::text[])
      union
      select l.notice_key, e.id as event_row
      from notice_ledger l
      join provider_events e on e.provider_message_id = l.provider_message_id
      where l.state = 'claimed' and l.provider_message_id is not null and e.event_type = any(${sql.param([...handOverEventTypes])}::text[])
    ) m
    join provider_events e on e.id = m.event_row
    order by m.notice_key, e.occurred_at, e.id
    limit ${limit}
  `);
  return result.rows.map((row) => ({
    noticeKey: row.notice_key,
    evidence: {
      rowId: Number(row.row_id),
      provider: row.provider,
      eventId: row.event_id,
      eventType: row.event_type,
      occurredAt: new Date(row.occurred_at),
      providerMessageId: row.provider_message_id,
    },
  }));
}

export async function listProviderEventsForNotice(db: DbOrTx, { noticeKey, correlationId }: { noticeKey: string; correlationId: string }): Promise<ProviderEventRow[]> {
  return db
    .select()
    .from(providerEvents)
    .where(sql`${providerEvents.noticeKey} = ${noticeKey} or ${providerEvents.correlationId} = ${correlationId}`)
    .orderBy(asc(providerEvents.occurredAt), asc(providerEvents.id))
    .limit(200);
}

export type DeliveryGapRow = {
  provider: string;
  noticeType: string;
  accepted: number;
  delivered: number;
  bounced: number;
  complained: number;
  /** Accepted (or delivered) messages with no delivered event yet. */
  gap: number;
};

/**
 * Accepted vs delivered per provider and notice type for events received in [from, to).
 * A message is counted once however many events it has (keyed on the ledger row, else the
 * correlation, else the provider id); a delivery implies acceptance, since Postmark sends no
 * acceptance event at all. Uses provider_events_received_idx for the range.
 */
export async function countAcceptedVsDelivered(db: DbOrTx, { from, to }: { from: Date; to: Date }): Promise<DeliveryGapRow[]> {
  const result = await db.execute<{
    provider: string;
    notice_type: string;
    accepted: number;
    delivered: number;
    bounced: number;
    complained: number;
  }>(sql`
    with messages as (
      select e.provider,
             coalesce(l.notice_type, 'unknown') as notice_type,
             coalesce(e.notice_key, e.correlation_id, e.provider_message_id, e.event_id) as message,
             bool_or(e.event_type in ('accepted', 'delivered')) as accepted,
             bool_or(e.event_type = 'delivered') as delivered,
             bool_or(e.event_type in ('bounce', 'soft_bounce', 'dropped')) as bounced,
             bool_or(e.event_type = 'complaint') as complained
      from provider_events e
      left join notice_ledger l on l.notice_key = e.notice_key
      where e.received_at >= ${from.toISOString()}::timestamptz and e.received_at < ${to.toISOString()}::timestamptz
      group by 1, 2, 3
    )
    select provider, notice_type,
           count(*) filter (where accepted)::int as accepted,
           count(*) filter (where delivered)::int as delivered,
           count(*) filter (where bounced)::int as bounced,
           count(*) filter (where complained)::int as complained
    from messages
    group by 1, 2
    order by 1, 2
  `);
  return result.rows.map((row) => ({
    provider: row.provider,
    noticeType: row.notice_type,
    accepted: Number(row.accepted),
    delivered: Number(row.delivered),
    bounced: Number(row.bounced),
    complained: Number(row.complained),
    gap: Math.max(0, Number(row.accepted) - Number(row.delivered)),
  }));
}
