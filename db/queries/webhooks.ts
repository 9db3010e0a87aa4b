import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { webhookAttempts, webhookDeliveries, webhookEndpoints, type SealedWebhookSecret, type WebhookEndpointRow } from '@/db/schema';

/**
 * The outbox's writes, as CTE fragments a state change's own statement can carry (so the event
 * commits with it), and as statements for a transaction. Every fragment writes nothing when no
 * enabled endpoint subscribes to the type; callers skip it altogether when the cached
 * subscription set (lib/webhooks/subscriptions.ts) says so.
 *
 * `jobsCte` names a CTE of the statement that returns the changed jobs as `id`; `extraSql` is a
 * jsonb expression over `j` (reminder_jobs) and `c` (that CTE) merged into the payload. The payload
 * holds only what the producer sent us (type, identity, revision, channel, job id) and our words.
 */
export function jobEventCtes({ prefix, type, jobsCte, extraSql }: { prefix: string; type: string; jobsCte: string; extraSql: string }): string {
  const t = `'${type.replaceAll("'", "''")}'`;
  return `${prefix}_ep as (
      select id from webhook_endpoints where disabled_at is null and ${t} = any(event_types)
    ), ${prefix}_seq as (
      insert into outbox_sequences (subject, last)
      select 'job:' || c.id, 1 from ${jobsCte} c where exists (select 1 from ${prefix}_ep)
      on conflict (subject) do update set last = outbox_sequences.last + 1
      returning subject, last
    ), ${prefix}_ev as (
      insert into outbox_events (webhook_id, type, job_id, subject, sequence, payload)
      select 'msg_' || replace(gen_random_uuid()::text, '-', ''), ${t}, j.id, s.subject, s.last,
             jsonb_build_object('jobId', j.id, 'noticeType', j.notice_type, 'identity', j.identity, 'revision', j.revision, 'channel', j.channel) || (${extraSql})
      from ${prefix}_seq s join ${jobsCte} c on s.subject = 'job:' || c.id join reminder_jobs j on j.id = c.id
      returning id
    ), ${prefix}_del as (
      insert into webhook_deliveries (event_id, endpoint_id) select ev.id, ep.id from ${prefix}_ev ev cross join ${prefix}_ep ep
      returning event_id
    )`;
}

/** One event per job in `jobIds`, in the caller's transaction. `extra` is merged into each payload. */
export async function insertJobEvents(
  db: DbOrTx,
  { type, jobIds, extra }: { type: string; jobIds: readonly string[]; extra: Record<string, unknown> },
): Promise<void> {
  if (jobIds.length === 0) return;
  const ctes = jobEventCtes({ prefix: 'o', type, jobsCte: 'input', extraSql: '$2::jsonb' });
  await runRaw(db, `with input as (select value::uuid as id from jsonb_array_elements_text($1::jsonb)), ${ctes} select count(*)::int as n from o_del`, [
    JSON.stringify(jobIds),
    JSON.stringify(extra),
  ]);
}

/** An event about something other than one job (a compliance gap of a business event). */
export async function insertSubjectEvent(
  db: DbOrTx,
  { type, subject, jobId, payload }: { type: string; subject: string; jobId: string | null; payload: Record<string, unknown> },
): Promise<void> {
  await runRaw(
    db,
    `with ep as (
       select id from webhook_endpoints where disabled_at is null and $1 = any(event_types)
     ), seq as (
       insert into outbox_sequences (subject, last) select $2, 1 where exists (select 1 from ep)
       on conflict (subject) do update set last = outbox_sequences.last + 1
       returning last
     ), ev as (
       insert into outbox_events (webhook_id, type, job_id, subject, sequence, payload)
       select 'msg_' || replace(gen_random_uuid()::text, '-', ''), $1, $3::uuid, $2, seq.last, $4::jsonb from seq
       returning id
     )
     insert into webhook_deliveries (event_id, endpoint_id) select ev.id, ep.id from ev cross join ep`,
    [type, subject, jobId, JSON.stringify(payload)],
  );
}

async function runRaw(db: DbOrTx, text: string, values: unknown[]): Promise<void> {
  const chunks = [];
  let last = 0;
  for (const match of text.matchAll(/\$(\d+)/g)) {
    chunks.push(sql.raw(text.slice(last, match.index)));
    chunks.push(sql`${values[Number(match[1]) - 1]}`);
    last = match.index + match[0].length;
  }
  chunks.push(sql.raw(text.slice(last)));
  await db.execute(sql.join(chunks));
}

/** The event types some enabled endpoint subscribes to. */
export async function listSubscribedTypes(db: DbOrTx): Promise<string[]> {
  const rows = await db.execute<{ type: string }>(sql`select distinct unnest(event_types) as type from webhook_endpoints where disabled_at is null`);
  return rows.rows.map((row) => row.type);
}

export type DueDelivery = {
  eventId: number;
  endpointId: string;
  attempts: number;
  webhookId: string;
  type: string;
  sequence: number;
  payload: Record<string, unknown>;
  createdAt: Date;
  url: string;
  secrets: SealedWebhookSecret[];
};

/**
 * Claims due deliveries of enabled endpoints (`for update skip locked`, so dispatchers on every
 * worker stay apart) and commits the claim: the attempt is counted and the delivery is due again
 * after `leaseMs`, so one whose dispatcher was killed mid-request is retried then, never lost.
 */
export async function claimDueDeliveries(db: Db, { limit, leaseMs }: { limit: number; leaseMs: number }): Promise<DueDelivery[]> {
  const { rows } = await db.$client.query<{
    event_id: number;
    endpoint_id: string;
    attempts: number;
    webhook_id: string;
    type: string;
    sequence: number;
    payload: Record<string, unknown>;
    created_at: Date;
    url: string;
    secrets: SealedWebhookSecret[];
  }>({
    name: 'webhook_claim_due',
    text: `with due as (
         select d.event_id, d.endpoint_id from webhook_deliveries d
         join webhook_endpoints e on e.id = d.endpoint_id and e.disabled_at is null
         where d.state = 'pending' and d.next_attempt_at <= now()
         order by d.next_attempt_at limit $1
         for update of d skip locked
       ), claimed as (
         update webhook_deliveries d set attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $2::double precision / 1000)
         from due where d.event_id = due.event_id and d.endpoint_id = due.endpoint_id
         returning d.event_id, d.endpoint_id, d.attempts
       )
       select c.event_id, c.endpoint_id, c.attempts, o.webhook_id, o.type, o.sequence, o.payload, o.created_at, e.url, e.secrets
       from claimed c join outbox_events o on o.id = c.event_id join webhook_endpoints e on e.id = c.endpoint_id
       order by o.id`,
    values: [limit, leaseMs],
  });
  return rows.map((row) => ({
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    attempts: row.attempts,
    webhookId: row.webhook_id,
    type: row.type,
    sequence: row.sequence,
    payload: row.payload,
    createdAt: row.created_at,
    url: row.url,
    secrets: row.secrets,
  }));
}

export type DeliveryResult = {
  eventId: number;
  endpointId: string;
  attempt: number;
  status: number | null;
  error: string | null;
  latencyMs: number;
  /** delivered, retry at `retryAt`, or failed for good (the schedule ran out). */
  outcome: { kind: 'delivered' } | { kind: 'retry'; at: Date } | { kind: 'failed' };
  /** Disable the endpoint (410 Gone, or failing past the limit). */
  disable: string | null;
  /** Endpoints failing since before this are disabled. */
  failingLimit: Date;
};

/** An attempt's result, its log row and the endpoint's failing state, in one transaction. Returns why the endpoint was disabled, if it was. */
export async function recordDeliveryResult(db: Db, result: DeliveryResult): Promise<string | null> {
  return db.transaction(async (tx) => {
    const { outcome } = result;
    await tx
      .update(webhookDeliveries)
      .set({
        state: outcome.kind === 'retry' ? 'pending' : outcome.kind,
        ...(outcome.kind === 'retry' ? { nextAttemptAt: outcome.at } : { doneAt: sql`now()` }),
        lastAttemptAt: sql`now()`,
        lastStatus: result.status,
        lastError: result.error,
        lastLatencyMs: result.latencyMs,
      })
      .where(and(eq(webhookDeliveries.eventId, result.eventId), eq(webhookDeliveries.endpointId, result.endpointId), eq(webhookDeliveries.state, 'pending')));
    await tx.insert(webhookAttempts).values({
      eventId: result.eventId,
      endpointId: result.endpointId,
      attempt: result.attempt,
      status: result.status,
      error: result.error,
      latencyMs: result.latencyMs,
    });
    if (outcome.kind === 'delivered') {
      await tx.update(webhookEndpoints).set({ failingSince: null }).where(eq(webhookEndpoints.id, result.endpointId));
      return null;
    }
    const [endpoint] = await tx
      .update(webhookEndpoints)
      .set({ failingSince: sql`coalesce(${webhookEndpoints.failingSince}, now())` })
      .where(eq(webhookEndpoints.id, result.endpointId))
      .returning({ failingSince: webhookEndpoints.failingSince, disabledAt: webhookEndpoints.disabledAt });
    if (!endpoint || endpoint.disabledAt) return null;
    const reason = result.disable ?? (endpoint.failingSince && endpoint.failingSince < result.failingLimit ? 'failing' : null);
    if (!reason) return null;
    await disableEndpoint(tx, { id: result.endpointId, reason });
    return reason;
  });
}

export async function disableEndpoint(db: DbOrTx, { id, reason }: { id: string; reason: string }): Promise<boolean> {
  const rows = await db
    .update(webhookEndpoints)
    .set({ disabledAt: sql`now()`, disabledReason: reason })
    .where(and(eq(webhookEndpoints.id, id), isNull(webhookEndpoints.disabledAt)))
    .returning({ id: webhookEndpoints.id });
  return rows.length > 0;
}

export async function insertEndpoint(
  db: DbOrTx,
  params: { id: string; url: string; description: string | null; eventTypes: string[]; secrets: SealedWebhookSecret[]; createdBy: string },
): Promise<WebhookEndpointRow> {
  const [row] = await db.insert(webhookEndpoints).values(params).returning();
  if (!row) throw new Error('insert returned no row');
  return row;
}

export async function getEndpoint(db: DbOrTx, id: string): Promise<WebhookEndpointRow | null> {
  const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  return row ?? null;
}

export async function listEndpoints(db: DbOrTx): Promise<WebhookEndpointRow[]> {
  return db.select().from(webhookEndpoints).orderBy(desc(webhookEndpoints.createdAt));
}

export async function replaceEndpointSecrets(db: DbOrTx, { id, secrets }: { id: string; secrets: SealedWebhookSecret[] }): Promise<boolean> {
  const rows = await db.update(webhookEndpoints).set({ secrets }).where(eq(webhookEndpoints.id, id)).returning({ id: webhookEndpoints.id });
  return rows.length > 0;
}

/** The delivery log of an endpoint, newest first: attempt, status, latency — never a secret or a body. */
export async function listEndpointAttempts(db: DbOrTx, { endpointId, limit }: { endpointId: string; limit: number }) {
  return db.select().from(webhookAttempts).where(eq(webhookAttempts.endpointId, endpointId)).orderBy(desc(webhookAttempts.at)).limit(limit);
}

/** The oldest event not yet delivered to an enabled endpoint, and endpoints disabled / failing. */
export async function webhookHealth(db: DbOrTx): Promise<{ oldestUndeliveredSeconds: number; disabled: number; failing: number }> {
  const { rows } = await db.execute<{ oldest: number | null; disabled: number; failing: number }>(sql`
    select (select extract(epoch from now() - min(d.created_at))::float8 from webhook_deliveries d
              join webhook_endpoints e on e.id = d.endpoint_id and e.disabled_at is null where d.state = 'pending') as oldest,
           (select count(*) from webhook_endpoints where disabled_at is not null)::int as disabled,
           (select count(*) from webhook_endpoints where disabled_at is null and failing_since is not null)::int as failing`);
  const row = rows[0];
  return { oldestUndeliveredSeconds: row?.oldest ?? 0, disabled: row?.disabled ?? 0, failing: row?.failing ?? 0 };
}

/** One event per job of `noticeKeys` (provider evidence, quarantine resolution), in the caller's transaction. */
export async function insertNoticeEvents(
  db: DbOrTx,
  { type, noticeKeys, extra }: { type: string; noticeKeys: readonly string[]; extra: Record<string, unknown> },
): Promise<void> {
  if (noticeKeys.length === 0) return;
  const ctes = jobEventCtes({ prefix: 'o', type, jobsCte: 'input', extraSql: '$2::jsonb' });
  await runRaw(
    db,
    `with input as (select id from reminder_jobs where notice_key in (select jsonb_array_elements_text($1::jsonb))), ${ctes} select count(*)::int as n from o_del`,
    [JSON.stringify(noticeKeys), JSON.stringify(extra)],
  );
}

/** Changes an endpoint's URL, description, event types or enabled state; returns the row after, or null when there is none. */
export async function updateEndpoint(
  db: DbOrTx,
  { id, url, description, eventTypes, enabled }: { id: string; url?: string; description?: string | null; eventTypes?: string[]; enabled?: boolean },
): Promise<WebhookEndpointRow | null> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({
      ...(url === undefined ? {} : { url }),
      ...(description === undefined ? {} : { description }),
      ...(eventTypes === undefined ? {} : { eventTypes }),
      ...(enabled === undefined
        ? {}
        : enabled
          ? { disabledAt: null, disabledReason: null, failingSince: null }
          : // A person's disable: kept disabled since it first was, now by their decision (an endpoint
            // the ledger disabled for its failures leaves the banner once someone disables it on purpose).
            { disabledAt: sql`coalesce(${webhookEndpoints.disabledAt}, now())`, disabledReason: 'manual' }),
    })
    .where(eq(webhookEndpoints.id, id))
    .returning();
  return row ?? null;
}

/** A test event for one endpoint only (its own subject and sequence), delivered like any other. */
export async function insertTestEvent(db: DbOrTx, { endpointId, type, payload }: { endpointId: string; type: string; payload: Record<string, unknown> }) {
  const { rows } = await db.execute<{ webhook_id: string }>(sql`
    with seq as (
      insert into outbox_sequences (subject, last) values (${`endpoint:${endpointId}`}, 1)
      on conflict (subject) do update set last = outbox_sequences.last + 1
      returning subject, last
    ), ev as (
      insert into outbox_events (webhook_id, type, job_id, subject, sequence, payload)
      select 'msg_' || replace(gen_random_uuid()::text, '-', ''), ${type}, null, seq.subject, seq.last, ${JSON.stringify(payload)}::jsonb from seq
      returning id, webhook_id
    ), del as (
      insert into webhook_deliveries (event_id, endpoint_id) select ev.id, ${endpointId}::uuid from ev returning event_id
    )
    select webhook_id from ev`);
  const row = rows[0];
  if (!row) throw new Error('the test event was not written');
  return { webhookId: row.webhook_id };
}

export type DeliveryAttemptRow = {
  id: number;
  eventId: number;
  endpointId: string;
  endpointUrl: string;
  webhookId: string;
  type: string;
  jobId: string | null;
  sequence: number;
  attempt: number;
  status: number | null;
  error: string | null;
  latencyMs: number;
  at: Date;
  deliveryState: string;
};

/**
 * The delivery log, newest first, one page after `beforeId` (keyset on the attempt id): per
 * endpoint, per notice (the job), or both. Status, latency and error class; never a secret or a body.
 */
export async function listDeliveryAttempts(
  db: DbOrTx,
  { endpointId, jobId, beforeId, limit }: { endpointId?: string; jobId?: string; beforeId?: number; limit: number },
): Promise<DeliveryAttemptRow[]> {
  const { rows } = await db.execute<{
    id: string;
    event_id: string;
    endpoint_id: string;
    url: string;
    webhook_id: string;
    type: string;
    job_id: string | null;
    sequence: string;
    attempt: number;
    status: number | null;
    error: string | null;
    latency_ms: number;
    at: Date | string;
    state: string;
  }>(sql`
    select a.id, a.event_id, a.endpoint_id, e.url, o.webhook_id, o.type, o.job_id, o.sequence, a.attempt, a.status, a.error, a.latency_ms, a.at, d.state
    from webhook_attempts a
    join outbox_events o on o.id = a.event_id
    join webhook_endpoints e on e.id = a.endpoint_id
    left join webhook_deliveries d on d.event_id = a.event_id and d.endpoint_id = a.endpoint_id
    where (${endpointId ?? null}::uuid is null or a.endpoint_id = ${endpointId ?? null}::uuid)
      and (${jobId ?? null}::uuid is null or o.job_id = ${jobId ?? null}::uuid)
      and (${beforeId ?? null}::bigint is null or a.id < ${beforeId ?? null}::bigint)
    order by a.id desc
    limit ${limit}`);
  return rows.map((row) => ({
    id: Number(row.id),
    eventId: Number(row.event_id),
    endpointId: row.endpoint_id,
    endpointUrl: row.url,
    webhookId: row.webhook_id,
    type: row.type,
    jobId: row.job_id,
    sequence: Number(row.sequence),
    attempt: row.attempt,
    status: row.status,
    error: row.error,
    latencyMs: row.latency_ms,
    at: new Date(row.at),
    deliveryState: row.state ?? 'pending',
  }));
}

/**
 * Replays deliveries to one endpoint: one event, or every delivery created in [from, to) (only the
 * failed ones unless `includeDelivered`). Each is pending again, due now, with the whole schedule
 * ahead; the same webhook-id, so a consumer that de-duplicates sees a delivered event once. A
 * delivery still pending is left as it is. Returns how many were queued again.
 */
export async function replayDeliveries(
  db: DbOrTx,
  { endpointId, eventId, from, to, includeDelivered }: { endpointId: string; eventId?: number; from?: Date; to?: Date; includeDelivered: boolean },
): Promise<number> {
  const { rows } = await db.execute<{ n: number }>(sql`
    with replayed as (
      update webhook_deliveries set state = 'pending', attempts = 0, next_attempt_at = now(), done_at = null
      where endpoint_id = ${endpointId}::uuid and state <> 'pending'
        and (${includeDelivered} or state = 'failed')
        and (${eventId ?? null}::bigint is null or event_id = ${eventId ?? null}::bigint)
        and (${from?.toISOString() ?? null}::timestamptz is null or created_at >= ${from?.toISOString() ?? null}::timestamptz)
        and (${to?.toISOString() ?? null}::timestamptz is null or created_at < ${to?.toISOString() ?? null}::timestamptz)
      returning 1
    )
    select count(*)::int as n from replayed`);
  return rows[0]?.n ?? 0;
}

/** Per endpoint: deliveries pending, failed for good, and attempts in the last day. */
export async function endpointDeliveryCounts(db: DbOrTx): Promise<Map<string, { pending: number; failed: number; delivered: number }>> {
  const { rows } = await db.execute<{ endpoint_id: string; pending: number; failed: number; delivered: number }>(sql`
    select endpoint_id,
           count(*) filter (where state = 'pending')::int as pending,
           count(*) filter (where state = 'failed')::int as failed,
           count(*) filter (where state = 'delivered')::int as delivered
    from webhook_deliveries group by endpoint_id`);
  return new Map(rows.map((row) => [row.endpoint_id, { pending: row.pending, failed: row.failed, delivered: row.delivered }]));
}

/** Endpoints disabled for failures (410 or failing too long) or failing now: the console banner. */
export async function listTroubledEndpoints(
  db: DbOrTx,
): Promise<{ id: string; url: string; failingSince: Date | null; disabledAt: Date | null; disabledReason: string | null }[]> {
  return db
    .select({
      id: webhookEndpoints.id,
      url: webhookEndpoints.url,
      failingSince: webhookEndpoints.failingSince,
      disabledAt: webhookEndpoints.disabledAt,
      disabledReason: webhookEndpoints.disabledReason,
    })
    .from(webhookEndpoints)
    .where(
      sql`(${webhookEndpoints.disabledAt} is null and ${webhookEndpoints.failingSince} is not null) or ${webhookEndpoints.disabledReason} in ('gone', 'failing')`,
    )
    .orderBy(webhookEndpoints.createdAt);
}
