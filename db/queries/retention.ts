import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';

/**
 * Every statement touches at most `limit` rows (`ctid in (select … limit n)`), so retention
 * runs in small transactions next to live traffic instead of one long lock. The ledger's own
 * deletion is with the rest of the ledger, in db/queries/ledger/retention.ts.
 */

async function count(db: DbOrTx, query: ReturnType<typeof sql>): Promise<number> {
  const result = await db.execute(query);
  return result.rowCount ?? 0;
}

export function deleteAttemptsBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  return count(db, sql`delete from delivery_attempts where ctid in (select ctid from delivery_attempts where started_at < ${before} limit ${limit})`);
}

export function deleteProviderEventsBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  return count(db, sql`delete from provider_events where ctid in (select ctid from provider_events where received_at < ${before} limit ${limit})`);
}

/** A Twilio message's forward-only status (db/schema/sms.ts) lives as long as its callbacks do. */
export function deleteSmsMessagesBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  return count(db, sql`delete from sms_messages where ctid in (select ctid from sms_messages where updated_at < ${before} limit ${limit})`);
}

/** Keeps the ids, type and correlation columns; drops the payload the provider sent. */
export function redactProviderEventDetailsBefore(db: DbOrTx, { before, limit, now }: { before: Date; limit: number; now: Date }): Promise<number> {
  return count(
    db,
    sql`update provider_events set details = jsonb_build_object('redacted', true, 'redactedAt', ${now.toISOString()}::text)
        where ctid in (
          select ctid from provider_events
          where received_at < ${before} and details <> '{}'::jsonb and not (details ? 'redacted')
          limit ${limit})`,
  );
}

/** Resolved evidence only, and never while a pending reminder still cites it. */
export function deleteResolvedEvidenceBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  return count(
    db,
    sql`delete from evidence where ctid in (
          select e.ctid from evidence e
          where e.state = 'resolved' and e.resolved_at < ${before}
            and not exists (select 1 from reminder_jobs j where j.evidence_ref = e.ref and j.state = 'pending')
          limit ${limit})`,
  );
}

/** Finished jobs go with the ledger horizon: scheduling stays idempotent for as long as the ledger remembers. */
export function deleteFinishedJobsBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  return count(
    db,
    sql`delete from reminder_jobs where ctid in (
          select ctid from reminder_jobs where state in ('sent', 'suppressed', 'failed', 'cancelled') and updated_at < ${before} limit ${limit})`,
  );
}
