import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { noticeLedger } from '@/db/schema/ledger';
import { handOverEventTypes, type LedgerState, type ProviderEventType } from '@/db/schema/states';

/**
 * Which provider events are about which ledger row. A provider names our message by its
 * correlation, the first 32 hex of the 64-hex notice key (`correlationOf` in
 * lib/ledger/notice-key.ts; it is in our Message-ID and the providers' metadata), or by its own
 * message id. Every statement that matches events to rows names the ledger row `l` and the
 * event `pe`, and takes the rule from here.
 */

/** The event carries the row's correlation. */
export const correlationMatches = sql`pe.correlation_id = left(l.notice_key, 32)`;

/** The event was linked to the row when stored, or carries its correlation. */
export const eventNamesClaim = sql`(pe.notice_key = l.notice_key or ${correlationMatches})`;

/**
 * The same rule from the event's side: the row is the one key in [corr·0…0, corr·f…f], a range
 * scan on the primary key (a `like 'corr%'` would need text_pattern_ops).
 */
function keyRangeOf(correlationId: string): { first: string; last: string } {
  return { first: correlationId + '0'.repeat(32), last: correlationId + 'f'.repeat(32) };
}

export type LedgerLink = { noticeKey: string; state: LedgerState };

/** The row an arriving event is about. Only a unique match links; the provider id is the fallback (SES). */
export async function findLedgerLink(
  db: DbOrTx,
  { correlationId, providerMessageId }: { correlationId: string | null; providerMessageId: string | null },
): Promise<LedgerLink | null> {
  if (correlationId && /^[0-9a-f]{32}$/.test(correlationId)) {
    const { first, last } = keyRangeOf(correlationId);
    const rows = await db
      .select({ noticeKey: noticeLedger.noticeKey, state: noticeLedger.state })
      .from(noticeLedger)
      .where(sql`${noticeLedger.noticeKey} >= ${first} and ${noticeLedger.noticeKey} <= ${last}`)
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

export type Evidence = { rowId: number; provider: string; eventId: string; eventType: ProviderEventType; occurredAt: Date; providerMessageId: string | null };

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
      select l.notice_key, pe.id as event_row
      from notice_ledger l
      join provider_events pe on ${correlationMatches}
      where l.state = 'claimed' and pe.event_type = any(${sql.param([...handOverEventTypes])}::text[])
      union
      select l.notice_key, pe.id as event_row
      from notice_ledger l
      join provider_events pe on pe.provider_message_id = l.provider_message_id
      where l.state = 'claimed' and l.provider_message_id is not null and pe.event_type = any(${sql.param([...handOverEventTypes])}::text[])
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
