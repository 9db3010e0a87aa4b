import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { handOverEventTypes, type JobState, type ProviderEventType } from '@/db/schema/states';

/**
 * After a database failover: sends the new primary has no claim for, though the provider says it
 * took them. Under asynchronous replication a claim that committed on the old primary (and whose
 * mail went out) can be missing on the promoted standby; its job is `pending` again and the next
 * wake-up would send the notice a second time. The provider's events carry our correlation (the
 * first 32 hex of the notice key), and an event arrives only for a message we handed over, so a
 * hand-over event whose correlation names a job but no ledger row is the trace of such a claim:
 * an orphan. Ingest stores it like any event (lib/events/ingest.ts counts it); this module
 * finds orphans and turns each into the `sent` ledger row the old primary had, so no wake-up
 * can claim the notice again.
 */

export type OrphanedSend = {
  correlationId: string;
  jobId: string;
  noticeKey: string;
  jobState: JobState;
  eventRowId: number;
  provider: string;
  eventId: string;
  eventType: ProviderEventType;
  occurredAt: Date;
  providerMessageId: string | null;
};

/**
 * One row per job: the earliest hand-over event stored since `since` whose correlation is the
 * job's and for which the ledger holds no row. The job is found by a range scan on its unique
 * notice key (corr·0…0 to corr·f…f), as `findLedgerLink` finds a ledger row.
 */
function orphans(since: Date, limit: number) {
  return sql`
    select distinct on (j.id) pe.correlation_id, j.id as job_id, j.notice_key, j.state as job_state, pe.id as row_id,
           pe.provider, pe.event_id, pe.event_type, pe.occurred_at, pe.provider_message_id
    from provider_events pe
    join reminder_jobs j on j.notice_key >= pe.correlation_id || repeat('0', 32) and j.notice_key <= pe.correlation_id || repeat('f', 32)
    where pe.correlation_id is not null and pe.correlation_id ~ '^[0-9a-f]{32}$'
      and pe.received_at >= ${since.toISOString()}::timestamptz
      and pe.event_type = any(${sql.param([...handOverEventTypes])}::text[])
      and not exists (select 1 from notice_ledger l where l.notice_key = j.notice_key)
    order by j.id, pe.occurred_at, pe.id
    limit ${limit}`;
}

type OrphanRow = {
  correlation_id: string;
  job_id: string;
  notice_key: string;
  job_state: JobState;
  row_id: number | string;
  provider: string;
  event_id: string;
  event_type: ProviderEventType;
  occurred_at: Date | string;
  provider_message_id: string | null;
};

const toOrphan = (row: OrphanRow): OrphanedSend => ({
  correlationId: row.correlation_id,
  jobId: row.job_id,
  noticeKey: row.notice_key,
  jobState: row.job_state,
  eventRowId: Number(row.row_id),
  provider: row.provider,
  eventId: row.event_id,
  eventType: row.event_type,
  occurredAt: new Date(row.occurred_at),
  providerMessageId: row.provider_message_id,
});

/** The orphans stored since `since`, without changing anything (the command's dry run, and its report). */
export async function listOrphanedSends(db: DbOrTx, { since, limit = 1_000 }: { since: Date; limit?: number }): Promise<OrphanedSend[]> {
  const result = await db.execute<OrphanRow>(orphans(since, limit));
  return result.rows.map(toOrphan);
}

/**
 * ONE statement per batch: each orphan's `sent` ledger row (source `backfill`, resolution
 * `post_failover:<provider>:<event id>`, sent at the event's time), its job `sent` unless it is
 * already final, and the events linked to the row. `on conflict do nothing`: a claim a worker
 * made meanwhile is left to the send path and quarantine, never overwritten. Returns the rows
 * written.
 */
export async function resolveOrphanedSends(db: DbOrTx, { since, limit = 1_000 }: { since: Date; limit?: number }): Promise<OrphanedSend[]> {
  const result = await db.execute<OrphanRow>(sql`
    with o as (${orphans(since, limit)}),
    ins as (
      insert into notice_ledger (notice_key, notice_type, identity, revision, job_id, state, claimed_at, sent_at, provider_message_id,
                                 recipient_domain, source, resolution, resolved_at, updated_at)
      select j.notice_key, j.notice_type, j.identity, j.revision, j.id, 'sent', least(o.occurred_at, now()), least(o.occurred_at, now()),
             o.provider_message_id, lower(split_part(j.recipient_email, '@', 2)), 'backfill',
             'post_failover:' || o.provider || ':' || o.event_id, now(), now()
      from o join reminder_jobs j on j.id = o.job_id
      on conflict (notice_key) do nothing
      returning notice_key
    ), jobs as (
      update reminder_jobs j set state = 'sent', last_error_class = null, updated_at = now()
      from ins where j.notice_key = ins.notice_key and j.state in ('pending', 'claimed', 'failed')
      returning j.id
    ), links as (
      update provider_events pe set notice_key = ins.notice_key
      from ins where pe.correlation_id = left(ins.notice_key, 32) and pe.notice_key is null
      returning pe.id
    )
    -- Data-modifying CTEs run to completion whether or not the query reads them.
    select o.* from o join ins on ins.notice_key = o.notice_key`);
  return result.rows.map(toOrphan);
}
