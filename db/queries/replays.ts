import { and, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '@/db/client';
import { replays, users, type DryRunCounts, type ReplayFilter, type ReplayRow, type UploadRejection } from '@/db/schema';
import type { Channel } from '@/db/schema/states';
import { isUuid } from '@/db/uuid';

/** Every statement about replays. State changes are conditional on the state they leave. */

function filterConditions(filter: ReplayFilter): SQL {
  const conditions: SQL[] = [sql`true`];
  if (filter.dueFrom) conditions.push(sql`j.due_at >= ${new Date(filter.dueFrom)}`);
  if (filter.dueTo) conditions.push(sql`j.due_at < ${new Date(filter.dueTo)}`);
  if (filter.noticeType) conditions.push(sql`j.notice_type = ${filter.noticeType}`);
  if (filter.source) conditions.push(sql`j.source = ${filter.source}`);
  return sql.join(conditions, sql` and `);
}

function toCounts(rows: { state: string | null; blocked: string | null; count: number }[], total?: number): DryRunCounts {
  const existing: Record<string, number> = {};
  const blocked: Record<string, number> = {};
  let found = 0;
  let absent = 0;
  for (const row of rows) {
    if (row.blocked !== null) blocked[row.blocked] = (blocked[row.blocked] ?? 0) + row.count;
    if (row.state === null) absent += row.count;
    else {
      existing[row.state] = (existing[row.state] ?? 0) + row.count;
      found += row.count;
    }
  }
  const all = total ?? found + absent;
  return { total: all, newKeys: all - found, existing, blocked };
}

/**
 * Filter replay: the keys are already on the jobs; one grouped join against the ledger. A key the
 * ledger lets through (no row, or released) whose job would not reach a send is counted by why
 * (`blocked`, as in db/queries/replay-dry-run.ts): suppressed, cancelled, failed, sent, or
 * past_window (deadline_at, the window's latest, has passed).
 */
export async function countFilterKeysByLedgerState(db: DbOrTx, { filter }: { filter: ReplayFilter }): Promise<DryRunCounts> {
  const result = await db.execute<{ state: string | null; blocked: string | null; count: number }>(sql`
    select l.state,
      case when l.state is not null and l.state <> 'released' then null
           when j.state in ('suppressed', 'cancelled', 'failed', 'sent') then j.state
           when j.deadline_at < now() then 'past_window' end as blocked,
      count(*)::int as count
    from reminder_jobs j left join notice_ledger l on l.notice_key = j.notice_key
    where ${filterConditions(filter)}
    group by 1, 2`);
  return toCounts(result.rows);
}

export type NewReplay = {
  batchId: string;
  filter: ReplayFilter;
  dryRun: DryRunCounts;
  requestedBy: string;
  requestReason: string;
  total: number;
  uploadRejections: UploadRejection[] | null;
};

export async function insertReplay(db: DbOrTx, replay: NewReplay): Promise<ReplayRow> {
  const [row] = await db
    .insert(replays)
    .values({ ...replay, state: 'requested' })
    .returning();
  if (!row) throw new Error('replay insert returned nothing');
  return row;
}

export type NewReplayItem = {
  noticeKey: string;
  line: number;
  noticeType: string;
  identity: Record<string, string>;
  revision: number;
  recipientEmail: string;
  recipientTimeZone: string;
  customerId: string | null;
  dueAt: Date;
  deadlineAt: Date;
  evidenceRef: string | null;
  payload: Record<string, unknown>;
  anchorAt: Date | null;
  recipientLocale: string | null;
  recipientPhone: string | null;
  channel: Channel;
};

/** Uploaded rows, in chunks of unnested arrays (one statement per 5,000 rows). */
export async function insertUploadedItems(db: DbOrTx, { replayId, items }: { replayId: string; items: readonly NewReplayItem[] }): Promise<void> {
  for (let offset = 0; offset < items.length; offset += 5000) {
    const chunk = items.slice(offset, offset + 5000);
    await db.execute(sql`
      insert into replay_items (replay_id, notice_key, line, notice_type, identity, revision, recipient_email, recipient_time_zone,
        customer_id, due_at, deadline_at, evidence_ref, payload, anchor_at, recipient_locale, recipient_phone, channel)
      select ${replayId}::uuid, key, line, type, identity, revision, email, tz, customer, due, deadline, evidence, payload, anchor, locale, phone, channel
      from unnest(${sql.param(chunk.map((i) => i.noticeKey))}::text[], ${sql.param(chunk.map((i) => i.line))}::int[],
                  ${sql.param(chunk.map((i) => i.noticeType))}::text[], ${sql.param(chunk.map((i) => JSON.stringify(i.identity)))}::jsonb[],
                  ${sql.param(chunk.map((i) => i.revision))}::int[], ${sql.param(chunk.map((i) => i.recipientEmail))}::text[],
                  ${sql.param(chunk.map((i) => i.recipientTimeZone))}::text[], ${sql.param(chunk.map((i) => i.customerId))}::text[],
                  ${sql.param(chunk.map((i) => i.dueAt.toISOString()))}::timestamptz[], ${sql.param(chunk.map((i) => i.deadlineAt.toISOString()))}::timestamptz[],
                  ${sql.param(chunk.map((i) => i.evidenceRef))}::text[], ${sql.param(chunk.map((i) => JSON.stringify(i.payload)))}::jsonb[],
                  ${sql.param(chunk.map((i) => i.anchorAt?.toISOString() ?? null))}::timestamptz[], ${sql.param(chunk.map((i) => i.recipientLocale))}::text[],
                  ${sql.param(chunk.map((i) => i.recipientPhone))}::text[], ${sql.param(chunk.map((i) => i.channel))}::text[])
        as t(key, line, type, identity, revision, email, tz, customer, due, deadline, evidence, payload, anchor, locale, phone, channel)
      on conflict do nothing`);
  }
}

/** A filter replay's jobs, frozen when the run starts so a resumed run publishes the same set. */
export async function materializeFilterItems(db: DbOrTx, { replayId, filter }: { replayId: string; filter: ReplayFilter }): Promise<number> {
  const result = await db.execute(sql`
    insert into replay_items (replay_id, notice_key, job_id)
    select ${replayId}::uuid, j.notice_key, j.id from reminder_jobs j
    where ${filterConditions(filter)}
    on conflict do nothing`);
  return result.rowCount ?? 0;
}

export async function countReplayItems(db: DbOrTx, { replayId }: { replayId: string }): Promise<{ total: number; published: number }> {
  const result = await db.execute<{ total: number; published: number }>(sql`
    select count(*)::int as total, count(published_at)::int as published from replay_items where replay_id = ${replayId}`);
  return result.rows[0] ?? { total: 0, published: 0 };
}

export type PendingItem = {
  noticeKey: string;
  jobId: string | null;
  recipientEmail: string | null;
  line: number | null;
  noticeType: string | null;
  identity: Record<string, string> | null;
  revision: number | null;
  recipientTimeZone: string | null;
  customerId: string | null;
  dueAt: Date | null;
  deadlineAt: Date | null;
  evidenceRef: string | null;
  payload: Record<string, unknown> | null;
  anchorAt: Date | null;
  recipientLocale: string | null;
  recipientPhone: string | null;
  channel: Channel | null;
};

/** A claimed replay's next batch (the replay row is locked too, so no other worker is publishing it). */
export async function lockUnpublishedItems(db: DbOrTx, { replayId, limit }: { replayId: string; limit: number }): Promise<PendingItem[]> {
  const result = await db.execute<{
    notice_key: string;
    job_id: string | null;
    recipient_email: string | null;
    line: number | null;
    notice_type: string | null;
    identity: Record<string, string> | null;
    revision: number | null;
    recipient_time_zone: string | null;
    customer_id: string | null;
    due_at: Date | string | null;
    deadline_at: Date | string | null;
    evidence_ref: string | null;
    payload: Record<string, unknown> | null;
    anchor_at: Date | string | null;
    recipient_locale: string | null;
    recipient_phone: string | null;
    channel: Channel | null;
  }>(sql`
    select i.notice_key, i.job_id, coalesce(i.recipient_email, j.recipient_email) as recipient_email, i.line, i.notice_type, i.identity,
           i.revision, i.recipient_time_zone, i.customer_id, i.due_at, i.deadline_at, i.evidence_ref, i.payload,
           i.anchor_at, i.recipient_locale, i.recipient_phone, i.channel
    from replay_items i left join reminder_jobs j on j.id = i.job_id
    where i.replay_id = ${replayId} and i.published_at is null
    order by i.notice_key
    limit ${limit}
    for update of i skip locked`);
  return result.rows.map((row) => ({
    noticeKey: row.notice_key,
    jobId: row.job_id,
    recipientEmail: row.recipient_email,
    line: row.line,
    noticeType: row.notice_type,
    identity: row.identity,
    revision: row.revision,
    recipientTimeZone: row.recipient_time_zone,
    customerId: row.customer_id,
    dueAt: row.due_at ? new Date(row.due_at) : null,
    deadlineAt: row.deadline_at ? new Date(row.deadline_at) : null,
    evidenceRef: row.evidence_ref,
    payload: row.payload,
    anchorAt: row.anchor_at ? new Date(row.anchor_at) : null,
    recipientLocale: row.recipient_locale,
    recipientPhone: row.recipient_phone,
    channel: row.channel,
  }));
}

export async function markItemsPublished(
  db: DbOrTx,
  { replayId, published }: { replayId: string; published: { noticeKey: string; jobId: string }[] },
): Promise<void> {
  if (published.length === 0) return;
  await db.execute(sql`
    update replay_items i set published_at = now(), job_id = p.job_id
    from unnest(${sql.param(published.map((p) => p.noticeKey))}::text[], ${sql.param(published.map((p) => p.jobId))}::uuid[]) as p(notice_key, job_id)
    where i.replay_id = ${replayId} and i.notice_key = p.notice_key`);
  await db.execute(sql`update replays set published = published + ${published.length} where id = ${replayId}`);
}

export async function getReplay(db: DbOrTx, { id }: { id: string }): Promise<ReplayRow | null> {
  if (!isUuid(id)) return null;
  const [row] = await db.select().from(replays).where(eq(replays.id, id)).limit(1);
  return row ?? null;
}

export type ClaimedReplay = { id: string; batchId: string };

/**
 * The next running replay whose batch is due, locked `for update` for the caller's
 * transaction: a second worker skips it (two workers never publish one replay's batches at
 * once) and a cancel waits for the batch in flight. A worker killed mid-batch loses its
 * connection, the lock goes with it, and the next worker to look claims the same batch.
 */
export async function claimDueReplay(db: DbOrTx, { now, replayId }: { now: Date; replayId?: string }): Promise<ClaimedReplay | null> {
  const result = await db.execute<{ id: string; batch_id: string }>(sql`
    select id, batch_id from replays
    where state = 'running' and (next_batch_at is null or next_batch_at <= ${now})
      ${replayId ? sql`and id = ${replayId}` : sql``}
    order by next_batch_at nulls first, started_at
    limit 1
    for update skip locked`);
  const row = result.rows[0];
  return row ? { id: row.id, batchId: row.batch_id } : null;
}

/** Pacing, shared by every worker and kept across restarts: the replay's next batch waits until `at`. */
export async function setNextBatchAt(db: DbOrTx, { id, at }: { id: string; at: Date }): Promise<void> {
  await db.update(replays).set({ nextBatchAt: at }).where(eq(replays.id, id));
}

export async function decideReplay(
  db: DbOrTx,
  { id, decidedBy, state, reason }: { id: string; decidedBy: string; state: 'approved' | 'rejected'; reason: string },
): Promise<ReplayRow | null> {
  const [row] = await db
    .update(replays)
    .set({ state, decidedBy, decisionReason: reason, decidedAt: sql`now()` })
    .where(
      and(
        eq(replays.id, id),
        eq(replays.state, 'requested'),
        sql`${replays.requestedBy} <> ${decidedBy}`,
        // Four eyes are two people: neither account created the other (lib/replay/transitions.ts says which).
        sql`not exists (select 1 from ${users} where ${users.id} = ${replays.requestedBy} and ${users.createdBy} = ${decidedBy})`,
        sql`not exists (select 1 from ${users} where ${users.id} = ${decidedBy} and ${users.createdBy} = ${replays.requestedBy})`,
      ),
    )
    .returning();
  return row ?? null;
}

export async function startReplayRun(db: DbOrTx, { id, total }: { id: string; total: number }): Promise<ReplayRow | null> {
  const [row] = await db
    .update(replays)
    .set({ state: 'running', total, startedAt: sql`coalesce(${replays.startedAt}, now())`, nextBatchAt: null })
    .where(and(eq(replays.id, id), inArray(replays.state, ['approved', 'running'])))
    .returning();
  return row ?? null;
}

export async function finishReplayRun(db: DbOrTx, { id, state }: { id: string; state: 'completed' | 'failed' }): Promise<ReplayRow | null> {
  const [row] = await db
    .update(replays)
    .set({ state, finishedAt: sql`now()` })
    .where(and(eq(replays.id, id), eq(replays.state, 'running')))
    .returning();
  return row ?? null;
}

export async function cancelReplayRow(db: DbOrTx, { id }: { id: string }): Promise<ReplayRow | null> {
  const [row] = await db
    .update(replays)
    .set({ state: 'cancelled', finishedAt: sql`now()` })
    .where(and(eq(replays.id, id), inArray(replays.state, ['requested', 'approved', 'running'])))
    .returning();
  return row ?? null;
}

/** `duplicates` is the part of `suppressed` the ledger refused as already sent or claimed (suppressed_duplicate). */
export type BatchOutcomes = { suppressed: number; duplicates: number; sent: number; failed: number; other: number };

/**
 * What the send path did with this batch's wake-ups, from the attempt log (partial index on
 * batch_id). Suppressed counts ledger refusals and wake-ups for already-final jobs.
 */
export async function countBatchOutcomes(db: DbOrTx, { batchIds }: { batchIds: readonly string[] }): Promise<Map<string, BatchOutcomes>> {
  const outcomes = new Map<string, BatchOutcomes>();
  if (batchIds.length === 0) return outcomes;
  const result = await db.execute<{ batch_id: string; suppressed: number; duplicates: number; sent: number; failed: number; other: number }>(sql`
    select batch_id,
      count(*) filter (where outcome in ('suppressed_duplicate', 'discarded', 'suppressed_policy'))::int as suppressed,
      count(*) filter (where outcome = 'suppressed_duplicate')::int as duplicates,
      count(*) filter (where outcome = 'sent')::int as sent,
      count(*) filter (where outcome in ('permanent_failure', 'unknown'))::int as failed,
      count(*) filter (where outcome in ('deferred', 'retryable_failure'))::int as other
    from delivery_attempts where batch_id = any(${sql.param(batchIds)}::text[])
    group by batch_id`);
  for (const row of result.rows)
    outcomes.set(row.batch_id, { suppressed: row.suppressed, duplicates: row.duplicates, sent: row.sent, failed: row.failed, other: row.other });
  return outcomes;
}

export type ReplayListRow = ReplayRow & { requesterEmail: string | null; deciderEmail: string | null };

const requester = alias(users, 'requester');
const decider = alias(users, 'decider');

export async function listReplays(db: DbOrTx, { limit, id }: { limit: number; id?: string }): Promise<ReplayListRow[]> {
  const rows = await db
    .select({ replay: replays, requesterEmail: requester.email, deciderEmail: decider.email })
    .from(replays)
    .leftJoin(requester, eq(requester.id, replays.requestedBy))
    .leftJoin(decider, eq(decider.id, replays.decidedBy))
    .where(id ? eq(replays.id, id) : undefined)
    .orderBy(desc(replays.requestedAt))
    .limit(limit);
  return rows.map((row) => ({ ...row.replay, requesterEmail: row.requesterEmail, deciderEmail: row.deciderEmail }));
}

/** The sweeper leaves jobs alone whose wake-up was just handed to the queue. */
export async function markWakeupsPublished(db: DbOrTx, { jobIds }: { jobIds: readonly string[] }): Promise<void> {
  if (jobIds.length === 0) return;
  await db.execute(sql`update reminder_jobs set wakeup_published_at = now() where id = any(${sql.param(jobIds)}::uuid[])`);
}

/** The batch ids of the replays running now: the bounded label set of notice_ledger_replay_outcomes. */
export async function listRunningBatchIds(db: DbOrTx): Promise<string[]> {
  const rows = await db.select({ batchId: replays.batchId }).from(replays).where(eq(replays.state, 'running'));
  return rows.map((row) => row.batchId);
}
