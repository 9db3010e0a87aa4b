import { and, eq, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { providerEvents } from '@/db/schema/events';
import type { ProviderEventType } from '@/db/schema/states';

/** Storing provider events. Matching them to ledger rows, and what they prove, is in db/queries/ledger/ (evidence-match.ts, resolve.ts). */

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

export async function linkProviderEvent(db: DbOrTx, { id, noticeKey }: { id: number; noticeKey: string }): Promise<void> {
  await db
    .update(providerEvents)
    .set({ noticeKey })
    .where(and(eq(providerEvents.id, id), isNull(providerEvents.noticeKey)));
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
        -- An incoming SMS (a STOP) is no message of ours.
        and not (e.provider = 'twilio' and e.event_id like 'inbound:%')
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
