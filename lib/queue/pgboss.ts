import PgBoss from 'pg-boss';
import type { Db, DbOrTx } from '@/db/client';
import {
  completeWakeups,
  countFailedWakeups,
  createQueueUnlessExists,
  drizzleExecutor,
  fetchDueWakeups,
  listLiveWakeupJobIds,
  type FetchedWakeup,
} from '@/db/queries/pgboss';
import { createLogger, type Logger } from '@/lib/log';
import { startDispatcher, type DispatcherHandle } from './dispatcher';
import { DEFAULT_QUEUE_HORIZON_MS, isWithinHorizon } from './horizon';
import { createDeliveryLifecycle, wakeupSchema, type DeliveryLifecycle, type DeliveryTransport } from './delivery';
import { DEFAULT_QUEUE_NAME, type ConsumeOptions, type QueueAdapter, type Wakeup, type WakeupHandler } from './types';

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
  /** Delay before an expired or handed-back wake-up is offered again. */
  retryDelaySeconds?: number;
  poolSize?: number;
  /** False for a publish-only process (the web app): expiry maintenance is the workers' job. */
  supervise?: boolean;
  /** QUEUE_HORIZON (./horizon.ts): later wake-ups stay in the job row. */
  horizonMs?: number;
  /** With a database the adapter runs the dispatcher that publishes jobs as they come within the horizon. */
  db?: Db;
  dispatchEveryMs?: number;
  logger?: Logger;
};

export type PgBossQueue = QueueAdapter & {
  readonly name: 'pgboss';
  readonly queueName: string;
  /** The underlying instance, for tests and diagnostics only. */
  readonly boss: PgBoss;
};

/** The transport: pg-boss's job table, fetched by our own statement, settled by pg-boss's transitions. */
export function createPgBossQueue(options: PgBossQueueOptions): PgBossQueue {
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
  const schema = options.schema ?? 'pgboss';
  const log = options.logger ?? createLogger('queue-pgboss');
  const visibilitySeconds = Math.max(1, Math.ceil(options.visibilityTimeoutMs / 1000));
  const pollingIntervalMs = Math.max(50, options.pollingIntervalMs ?? 50);
  const maxBatchSize = options.maxBatchSize ?? 100;
  const retryDelaySeconds = options.retryDelaySeconds ?? 5;
  const horizonMs = options.horizonMs ?? DEFAULT_QUEUE_HORIZON_MS;
  const boss = new PgBoss({
    connectionString: options.url,
    schema,
    max: options.poolSize ?? 4,
    application_name: 'notice-ledger-pgboss',
    // Maintenance is what moves an expired `active` wake-up back to `retry` when its worker
    // died; run it at half the visibility window so a crash costs at most ~1.5 windows.
    supervise: options.supervise ?? true,
    maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.floor(visibilitySeconds / 2))),
    schedule: false,
  });
  boss.on('error', (error: Error) => log.warn({ err: error.message, queue: queueName }, 'pg-boss error'));

  const sendOptions = (at: Date | undefined): PgBoss.SendOptions => ({
    expireInSeconds: visibilitySeconds,
    // The job row is the obligation; these retries only cover crashed workers and wake-ups
    // handed back on stop (a throwing handler is acked, see decideSettlement), and the
    // sweeper re-publishes anything that runs out of them.
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
  let lifecycle: DeliveryLifecycle<FetchedWakeup> | null = null;
  let loop: Promise<void> | null = null;
  let dispatcher: DispatcherHandle | null = null;

  const publishWith = async (db: PgBoss.Db | undefined, wakeup: Wakeup, at?: Date): Promise<string | null> => {
    const data = wakeupSchema.parse(wakeup);
    const opts = sendOptions(at);
    return boss.send(queueName, data, db ? { ...opts, db } : opts);
  };

  // Acks go out together: while one completion is in flight, the wake-ups finishing meanwhile
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
          if (live.length > 0) await completeWakeups(boss.getDb(), { schema, queueName, ids: live });
          for (const entry of batch) entry.settle();
        } catch (error) {
          for (const entry of batch) entry.settle(error ?? new Error('complete failed'));
        }
      }
    } finally {
      acking = false;
    }
  };

  const transport: DeliveryTransport<FetchedWakeup> = {
    ack: (job, lease) =>
      new Promise((resolve, reject) => {
        pendingAcks.push({
          id: job.id,
          expired: lease.expired,
          settle: (error) => (error === undefined ? resolve() : reject(error instanceof Error ? error : new Error(String(error)))),
        });
        void flushAcks();
      }),
    discard: (job) => completeWakeups(boss.getDb(), { schema, queueName, ids: [job.id], output: { discarded: 'invalid payload' } }),
    // pg-boss's fail() offers it again after retryDelay, counting a retry.
    requeue: async (job) => {
      await boss.fail(queueName, job.id, { error: 'worker stopping' });
    },
    // Maintenance moves an expired `active` wake-up back to `retry` on its own.
    releaseExpired: async () => undefined,
    // A deferral past the horizon (quiet hours, a long backoff) stays in the row the handler
    // already moved; the dispatcher publishes it once within.
    publish: async (wakeup, at) => (isWithinHorizon({ at, now: new Date(), horizonMs }) ? publishWith(undefined, wakeup, at) : null),
  };

  const runLoop = async (current: DeliveryLifecycle<FetchedWakeup>, concurrency: number): Promise<void> => {
    // Under a backlog, refilling every slot the moment it frees made one fetch (a round trip
    // and a commit) per finished wake-up. Wait until a quarter of the slots are free and fill
    // them in one fetch (bench/worker-e2e.ts: see README, Performance).
    const lowWater = Math.max(1, Math.floor(concurrency / 4));
    while (!stopping) {
      const free = concurrency - current.inFlight;
      if (free < lowWater) {
        await current.nextSettled();
        continue;
      }
      let jobs: FetchedWakeup[] = [];
      try {
        jobs = await fetchDueWakeups(boss.getDb(), { schema, queueName, limit: Math.min(free, maxBatchSize) });
      } catch (error) {
        log.warn({ err: error instanceof Error ? error.message : String(error), queue: queueName }, 'fetch failed');
      }
      for (const job of jobs) {
        // pg-boss 10.4 hands out no AbortSignal; the lifecycle aborts at the same instant its
        // maintenance may give the wake-up to another worker.
        void current.deliver({
          message: job,
          payload: job.data,
          messageId: job.id,
          deliveryCount: job.retryCount + 1,
          visibilityMs: job.expireInSeconds * 1000,
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

  const adapter: PgBossQueue = {
    name: 'pgboss',
    queueName,
    boss,
    horizonMs,
    async start() {
      if (started) return;
      await boss.start();
      await createQueueUnlessExists({ boss, url: options.url, queueName });
      started = true;
      if (options.db) dispatcher = startDispatcher({ db: options.db, queue: adapter, every: options.dispatchEveryMs ?? 1_000, logger: log });
    },
    async publish(wakeup, at) {
      return publishWith(undefined, wakeup, at);
    },
    async publishInTransaction(tx: DbOrTx, wakeup, at) {
      return publishWith(drizzleExecutor(tx), wakeup, at);
    },
    async liveWakeupJobIds(jobIds) {
      return listLiveWakeupJobIds(boss.getDb(), { schema, queueName, jobIds });
    },
    async deadLetteredCount() {
      return countFailedWakeups(boss.getDb(), { schema, queueName });
    },
    async health() {
      if (!started || stopping) return { ok: false, reason: stopping ? 'pg-boss is stopping' : 'pg-boss not started' };
      try {
        await boss.getDb().executeSql('select 1', []);
        return { ok: true };
      } catch (error) {
        return { ok: false, reason: `pg-boss cannot reach PostgreSQL: ${error instanceof Error ? error.message : String(error)}` };
      }
    },
    async consume(handler: WakeupHandler, consumeOptions: ConsumeOptions) {
      if (!started) throw new Error('queue not started');
      if (lifecycle) throw new Error('already consuming');
      lifecycle = createDeliveryLifecycle({ transport, handler, queueName, logger: log });
      loop = runLoop(lifecycle, Math.max(1, consumeOptions.concurrency));
    },
    async stop() {
      if (!started) return;
      stopping = true;
      await dispatcher?.stop();
      dispatcher = null;
      const drained = lifecycle?.stop();
      wakeLoop?.();
      await loop;
      await drained;
      // Deliveries fetched while the loop was finishing started already aborted.
      await lifecycle?.stop();
      await boss.stop({ graceful: false, wait: true, close: true });
      started = false;
    },
  };
  return adapter;
}
