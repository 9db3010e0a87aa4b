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

/**
 * A job that may still be sent: pending (retrying included) or claimed (a quarantined claim can be
 * released), or failed with its window open (the console can retry it). What such a job reads at
 * send or at retry must stay: its evidence (deleted, a resolved exception would no longer suppress
 * it) and its business event (a later revision cancels the jobs of older ones through event_id).
 */
const mayStillSend = (now: Date) => sql`(j.state in ('pending', 'claimed') or (j.state = 'failed' and j.deadline_at >= ${now}))`;

/** Resolved evidence, and never while a job that may still be sent cites it. */
export function deleteResolvedEvidenceBefore(db: DbOrTx, { before, limit, now }: { before: Date; limit: number; now: Date }): Promise<number> {
  return count(
    db,
    sql`delete from evidence where ctid in (
          select e.ctid from evidence e
          where e.state = 'resolved' and e.resolved_at < ${before}
            and not exists (select 1 from reminder_jobs j where j.evidence_ref = e.ref and ${mayStillSend(now)})
          limit ${limit})`,
  );
}

/** Evidence never resolved, by when it was opened; never while a job that may still be sent cites it. */
export function deleteOpenEvidenceBefore(db: DbOrTx, { before, limit, now }: { before: Date; limit: number; now: Date }): Promise<number> {
  return count(
    db,
    sql`delete from evidence where ctid in (
          select e.ctid from evidence e
          where e.state = 'open' and e.opened_at < ${before}
            and not exists (select 1 from reminder_jobs j where j.evidence_ref = e.ref and ${mayStillSend(now)})
          limit ${limit})`,
  );
}

/** Unplanned notices (compliance gaps) by when they were resolved, or, never resolved, created. */
export function deleteUnplannedNoticesBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  return count(
    db,
    sql`delete from unplanned_notices where ctid in (
          select ctid from unplanned_notices where coalesce(resolved_at, created_at) < ${before} limit ${limit})`,
  );
}

/**
 * Business events received before `before` whose notices are all settled before it too: none
 * may still be sent, none changed since, and no unplanned notice is left (those go first, by
 * their own horizon; deleting the event would cascade to them). A settled job keeps its own
 * copy of the recipient; its event_id becomes null.
 */
export function deleteBusinessEventsBefore(db: DbOrTx, { before, limit, now }: { before: Date; limit: number; now: Date }): Promise<number> {
  return count(
    db,
    sql`delete from business_events where ctid in (
          select e.ctid from business_events e
          where e.received_at < ${before}
            and not exists (select 1 from unplanned_notices u where u.event_id = e.id)
            and not exists (select 1 from reminder_jobs j where j.event_id = e.id and (${mayStillSend(now)} or j.updated_at >= ${before}))
          limit ${limit})`,
  );
}

export function deleteCancellationRequestsBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  return count(db, sql`delete from cancellation_requests where ctid in (select ctid from cancellation_requests where requested_at < ${before} limit ${limit})`);
}

/**
 * Superseded preference history only: the newest change of each recipient × category × channel
 * stays whatever its age, as the record of where the preference in force came from (a STOP, an
 * unsubscribe). The preference itself (recipient_preferences) is never deleted: it is what stops
 * a courtesy notice.
 */
export function deleteSupersededPreferenceChangesBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  return count(
    db,
    sql`delete from recipient_preference_changes where ctid in (
          select c.ctid from recipient_preference_changes c
          where c.changed_at < ${before}
            and exists (
              select 1 from recipient_preference_changes n
              where n.recipient = c.recipient and n.category = c.category and n.channel = c.channel
                and (n.changed_at, n.id) > (c.changed_at, c.id))
          limit ${limit})`,
  );
}

const finishedReplay = (before: Date) =>
  sql`r.state in ('completed', 'cancelled', 'failed', 'rejected') and coalesce(r.finished_at, r.decided_at, r.requested_at) < ${before}`;

/** The items (uploaded rows with their addresses) of replays that ended before `before`; a live replay's are never touched. */
export function deleteFinishedReplayItemsBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  return count(
    db,
    sql`delete from replay_items where ctid in (
          select i.ctid from replay_items i join replays r on r.id = i.replay_id
          where ${finishedReplay(before)}
          limit ${limit})`,
  );
}

/**
 * The refused rows of those replays' uploads quote the row and its values (addresses): each keeps
 * its line number, so the replay still says how many were refused, and loses the rest.
 */
export function redactFinishedReplayRejectionsBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  return count(
    db,
    sql`update replays set upload_rejections = (
          select jsonb_agg(jsonb_build_object('line', x.item->'line', 'reason', 'redacted by retention', 'raw', '') order by x.n)
          from jsonb_array_elements(upload_rejections) with ordinality as x(item, n))
        where id in (
          select r.id from replays r
          where ${finishedReplay(before)} and jsonb_typeof(r.upload_rejections) = 'array' and jsonb_array_length(r.upload_rejections) > 0
            and exists (select 1 from jsonb_array_elements(r.upload_rejections) x where x->>'raw' <> '')
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
