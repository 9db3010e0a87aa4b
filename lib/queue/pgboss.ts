import pg from 'pg';
import PgBoss from 'pg-boss';
import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../../db/client';
import { createLogger, type Logger } from '../log';
import type { ConsumeOptions, Delivery, HandlerResult, QueueAdapter, Wakeup, WakeupHandler } from './types';

export const DEFAULT_QUEUE_NAME = 'notice-wakeup';

export const wakeupSchema = z.object({
  jobId: z.uuid(),
  // NUL could never be written to an attempt row: refuse it here, as a permanent failure.
  batchId: z.string().min(1).max(200).regex(/^[^\0]*$/).optional(),
});

export type PgBossQueueOptions = {
  url: string;
  /** The visibility window: an in-flight wake-up older than this is handed to another worker. */
  visibilityTimeoutMs: number;
  queueName?: string;
  schema?: string;
  /**
   * pg-boss's defaults (batch 1, 2 s polling) drain about 0.5 wake-ups/s per worker. We poll
   * only while idle (every 50 ms by default, QUEUE_POLL_INTERVAL; at least 50) and fetch as
   * many as we have free slots, so a backlog drains at handler speed × concurrency.
   */
  pollingIntervalMs?: number;
  /** Upper bound for one fetch; never more than the free handler slots (fetching starts the expiry clock). */
  maxBatchSize?: number;
  /** Delay before an expired or failed wake-up is offered again. */
  retryDelaySeconds?: number;
  poolSize?: number;
  /** False for a publish-only process (the web app): expiry maintenance is the workers' job. */
  supervise?: boolean;
  logger?: Logger;
};

/** A wake-up as our fetch returns it: what the adapter needs of pg-boss's job row. */
type FetchedWakeup = { id: string; data: unknown; retryCount: number; expireInSeconds: number };

export type PgBossQueue = QueueAdapter & {
  readonly name: 'pgboss';
  readonly queueName: string;
  /** Publishes in the caller's transaction, so the job row and its wake-up commit (or roll back) together. */
  publishInTransaction(tx: DbOrTx, wakeup: Wakeup, at?: Date): Promise<string | null>;
  /** Wake-ups not yet completed (created, retry or active) for these jobs; the sweeper skips them. */
  liveWakeupJobIds(jobIds: readonly string[]): Promise<Set<string>>;
  /** The underlying instance, for tests and diagnostics only. */
  readonly boss: PgBoss;
};

/**
 * pg-boss runs a text with `$n` placeholders through an executor; this runs it on a drizzle
 * connection (pool or open transaction) by splitting the text into raw chunks and params.
 * Each occurrence of `$n` becomes its own parameter, which PostgreSQL treats alike.
 */
export function drizzleExecutor(db: DbOrTx): PgBoss.Db {
  return {
    executeSql: async (text: string, values: unknown[]) => {
      const chunks: SQL[] = [];
      let last = 0;
      for (const match of text.matchAll(/\$(\d+)/g)) {
        const index = Number(match[1]) - 1;
        chunks.push(sql.raw(text.slice(last, match.index)));
        chunks.push(sql`${normaliseParam(values[index])}`);
        last = match.index + match[0].length;
      }
      chunks.push(sql.raw(text.slice(last)));
      const result = await db.execute(sql.join(chunks));
      return { rows: result.rows };
    },
  };
}

function normaliseParam(value: unknown): unknown {
  if (value === undefined) return null;
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !Array.isArray(value)) return JSON.stringify(value);
  return value;
}

export function createPgBossQueue(options: PgBossQueueOptions): PgBossQueue {
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
  const log = options.logger ?? createLogger('queue-pgboss');
  const visibilitySeconds = Math.max(1, Math.ceil(options.visibilityTimeoutMs / 1000));
  const pollingIntervalMs = Math.max(50, options.pollingIntervalMs ?? 50);
  const maxBatchSize = options.maxBatchSize ?? 100;
  const retryDelaySeconds = options.retryDelaySeconds ?? 5;
  const boss = new PgBoss({
    connectionString: options.url,
    schema: options.schema ?? 'pgboss',
    max: options.poolSize ?? 4,
    application_name: 'notice-ledger-pgboss',
    // Maintenance is what moves an expired `active` wake-up back to `retry` when its worker
    // died; run it at half the visibility window so a crash costs at most ~1.5 windows.
    supervise: options.supervise ?? true,
    maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.floor(visibilitySeconds / 2))),
    schedule: false,
  });
  boss.on('error', (error: Error) => log.warn({ err: error.message, queue: queueName }, 'pg-boss error'));

  /**
   * Queues must exist in pg-boss 10 before send/fetch. Creating one is DDL (a partition with
   * foreign keys to pgboss.queue), and two processes creating the same new queue at once
   * deadlock: the loser's start failed with "deadlock detected" (workers starting together on a
   * fresh database). So: nothing to do when it exists, else create it under an advisory lock,
   * held on a connection of its own because pg-boss runs the DDL on its pool.
   */
  const ensureQueue = async () => {
    if (await boss.getQueue(queueName)) return;
    const client = new pg.Client({ connectionString: options.url, application_name: 'notice-ledger-pgboss' });
    await client.connect();
    try {
      await client.query("select pg_advisory_lock(hashtext('notice-ledger:pgboss.create_queue'))");
      if (!(await boss.getQueue(queueName))) await boss.createQueue(queueName, { name: queueName, policy: 'standard' });
    } finally {
      // Ending the session releases the lock.
      await client.end();
    }
  };

  const sendOptions = (at: Date | undefined): PgBoss.SendOptions => ({
    expireInSeconds: visibilitySeconds,
    // The job row is the obligation; these retries only cover crashed or throwing handlers,
    // and the sweeper re-publishes anything that runs out of them.
    retryLimit: 20,
    retryDelay: retryDelaySeconds,
    retryBackoff: false,
    // Long delays: keep the wake-up well past its start time.
    retentionDays: 7,
    ...(at ? { startAfter: at } : {}),
  });

  let started = false;
  let stopping = false;
  let wakeLoop: (() => void) | null = null;
  const inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  let loop: Promise<void> | null = null;

  const publishWith = async (db: PgBoss.Db | undefined, wakeup: Wakeup, at?: Date): Promise<string | null> => {
    const data = wakeupSchema.parse(wakeup);
    const opts = sendOptions(at);
    return boss.send(queueName, data, db ? { ...opts, db } : opts);
  };

  // Acks go out together: while one complete() is in flight, the wake-ups finishing meanwhile
  // wait for the next one, so under load one statement acks many and idle adds no delay.
  // Each is still acked only after its handler returned, i.e. after its result commit.
  type PendingAck = { id: string; expired: () => boolean; settle: (error?: unknown) => void };
  let pendingAcks: PendingAck[] = [];
  let acking = false;
  const flushAcks = async (): Promise<void> => {
    if (acking) return;
    acking = true;
    try {
      while (pendingAcks.length > 0) {
        const batch = pendingAcks;
        pendingAcks = [];
        const live = batch.filter((entry) => !entry.expired()).map((entry) => entry.id);
        try {
          if (live.length > 0) await boss.complete(queueName, live);
          for (const entry of batch) entry.settle();
        } catch (error) {
          for (const entry of batch) entry.settle(error ?? new Error('complete failed'));
        }
      }
    } finally {
      acking = false;
    }
  };
  const ack = (id: string, expired: () => boolean): Promise<void> =>
    new Promise((resolve, reject) => {
      pendingAcks.push({ id, expired, settle: (error) => (error === undefined ? resolve() : reject(error instanceof Error ? error : new Error(String(error)))) });
      void flushAcks();
    });

  // pg-boss's own fetch orders due wake-ups by (priority, created_on), which its index
  // (name, start_after) cannot give: every fetch read and sorted the whole due backlog
  // (bench/worker-e2e.ts: the costliest statement on the server). We never set priorities, so
  // we take the earliest due first, in index order, reading only the rows we take. The
  // transition is pg-boss's own (state, started_on, retry_count), so its expiry maintenance,
  // retries and complete() work unchanged.
  const schemaName = options.schema ?? 'pgboss';
  const fetchDueSql = `
    with next as (
      select id from ${schemaName}.job
      where name = $1 and state < 'active' and start_after < now()
      order by start_after
      limit $2
      for update skip locked
    )
    update ${schemaName}.job j set state = 'active', started_on = now(),
      retry_count = case when j.started_on is not null then j.retry_count + 1 else j.retry_count end
    from next where j.name = $1 and j.id = next.id
    returning j.id, j.data, j.retry_count as "retryCount", extract(epoch from j.expire_in)::int as "expireInSeconds"`;
  const fetchDue = async (batchSize: number): Promise<FetchedWakeup[]> => {
    const { rows } = await boss.getDb().executeSql(fetchDueSql, [queueName, batchSize]);
    return rows as FetchedWakeup[];
  };

  const handleOne = async (job: FetchedWakeup, handler: WakeupHandler): Promise<void> => {
    const parsed = wakeupSchema.safeParse(job.data);
    if (!parsed.success) {
      // A payload we cannot read never becomes readable: a permanent failure, not a retry.
      log.error({ queueMessageId: job.id, queue: queueName }, 'wake-up payload invalid; discarded');
      await boss.complete(queueName, job.id, { discarded: 'invalid payload' });
      return;
    }
    const controller = new AbortController();
    // pg-boss 10.4 hands the handler no AbortSignal; we abort at the same instant its
    // maintenance may give the wake-up to another worker.
    let expired = false;
    const expiry = setTimeout(() => {
      expired = true;
      controller.abort(new Error('visibility timeout expired'));
    }, job.expireInSeconds * 1000);
    const delivery: Delivery = {
      wakeup: parsed.data,
      messageId: job.id,
      deliveryCount: job.retryCount + 1,
      signal: controller.signal,
    };
    const done = (async () => {
      try {
        const result: HandlerResult = await handler(delivery);
        if ('wakeAt' in result) await publishWith(undefined, parsed.data, result.wakeAt);
        // Past its expiry the wake-up may already be another worker's; completing it could
        // cut that delivery short, and a handler that gave up on the abort has not done the
        // work. Leave it to expire: at worst one more harmless delivery.
        if (expired) return;
        await ack(job.id, () => expired);
      } catch (error) {
        log.warn({ queueMessageId: job.id, jobId: parsed.data.jobId, err: error instanceof Error ? error.message : String(error) }, 'wake-up handler failed; will be retried');
        if (expired) return;
        await boss.fail(queueName, job.id, { error: error instanceof Error ? error.name : 'error' }).catch(() => undefined);
      } finally {
        clearTimeout(expiry);
      }
    })();
    inFlight.set(job.id + ':' + String(job.retryCount), { controller, done });
    await done;
    inFlight.delete(job.id + ':' + String(job.retryCount));
  };

  const runLoop = async (handler: WakeupHandler, concurrency: number): Promise<void> => {
    // Under a backlog, refilling every slot the moment it frees made one fetch (a round trip
    // and a commit) per finished wake-up. Wait until a quarter of the slots are free and fill
    // them in one fetch (bench/worker-e2e.ts: see README, Performance).
    const lowWater = Math.max(1, Math.floor(concurrency / 4));
    while (!stopping) {
      const free = concurrency - inFlight.size;
      if (free < lowWater) {
        await Promise.race([...inFlight.values()].map((entry) => entry.done));
        continue;
      }
      let jobs: FetchedWakeup[] = [];
      try {
        jobs = await fetchDue(Math.min(free, maxBatchSize));
      } catch (error) {
        log.warn({ err: error instanceof Error ? error.message : String(error), queue: queueName }, 'fetch failed');
      }
      for (const job of jobs) {
        void handleOne(job, handler).catch((error: unknown) => {
          log.error({ queueMessageId: job.id, err: error instanceof Error ? error.message : String(error) }, 'wake-up completion failed');
        });
      }
      if (jobs.length > 0) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollingIntervalMs);
        wakeLoop = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeLoop = null;
    }
  };

  return {
    name: 'pgboss',
    durableDelays: true,
    queueName,
    boss,
    async start() {
      if (started) return;
      await boss.start();
      await ensureQueue();
      started = true;
    },
    async publish(wakeup, at) {
      return publishWith(undefined, wakeup, at);
    },
    async publishInTransaction(tx, wakeup, at) {
      return publishWith(drizzleExecutor(tx), wakeup, at);
    },
    async liveWakeupJobIds(jobIds) {
      if (jobIds.length === 0) return new Set();
      const { rows } = await boss.getDb().executeSql(
        `select distinct data->>'jobId' as "jobId" from ${options.schema ?? 'pgboss'}.job
          where name = $1 and state in ('created', 'retry', 'active') and data->>'jobId' = any($2::text[])`,
        [queueName, [...jobIds]],
      );
      return new Set(rows.map((row: { jobId: string }) => row.jobId));
    },
    async consume(handler: WakeupHandler, consumeOptions: ConsumeOptions) {
      if (!started) throw new Error('queue not started');
      if (loop) throw new Error('already consuming');
      loop = runLoop(handler, Math.max(1, consumeOptions.concurrency));
    },
    async stop() {
      if (!started) return;
      stopping = true;
      for (const entry of inFlight.values()) entry.controller.abort(new Error('worker stopping'));
      wakeLoop?.();
      await loop;
      await Promise.allSettled([...inFlight.values()].map((entry) => entry.done));
      await boss.stop({ graceful: false, wait: true, close: true });
      started = false;
    },
  };
}
