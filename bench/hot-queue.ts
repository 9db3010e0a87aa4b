import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import { createDb, type Db } from '@/db/client';
import { enqueueNotice } from '@/lib/planning/enqueue-notice';
import { dispatchDueOnce } from '@/lib/queue/dispatcher';
import { DEFAULT_QUEUE_HORIZON_MS } from '@/lib/queue/horizon';
import { createPgBossQueue, type PgBossQueue } from '@/lib/queue/pgboss';
import { provisionDatabase } from '@/testing/database';
import { noticeDueAt } from '@/testing/queue/jobs';
import { printTable } from './support';

/**
 * `tsx bench/hot-queue.ts [pending] [due]`: the hot-queue horizon (lib/queue/horizon.ts) on
 * pg-boss, before and after. `pending` jobs (default 500 000; the figure is 5 M) wait 30
 * days out, loaded in bulk as scheduling would leave them (their rows, and before the horizon
 * one pg-boss wake-up each). Then, among them, `due` notices (default 20 000) are scheduled due
 * now through enqueueNotice (the scheduling rate) and drained by the adapter with a no-op
 * handler (the drain rate), and one dispatcher pass runs over the pending jobs.
 * - before: every wake-up enters pg-boss's job table at scheduling (a horizon longer than any
 *   delay, as enqueueNotice did before the horizon), and pg-boss ran no dispatcher;
 * - after: QUEUE_HORIZON (15 min): the 30-day jobs stay in their rows.
 * `BENCH_SETUPS=after` runs only the second.
 */
process.env.NOTICE_KEY_SECRET ??= 'bench-secret-0123456789abcdef0123456789abcdef';
process.env.LOG_LEVEL ??= 'silent';

const pendingCount = Number(process.argv[2] ?? 500_000);
const dueCount = Number(process.argv[3] ?? 20_000);
if (!Number.isInteger(pendingCount) || pendingCount < 0 || !Number.isInteger(dueCount) || dueCount < 1) {
  console.error('usage: tsx bench/hot-queue.ts [pending jobs 30 days out, default 500000] [due jobs to drain, default 20000]');
  process.exit(2);
}

const DAY = 86_400_000;
const BATCH = 500;
const PARALLEL = 8;

/** Schedules `count` notices due at `dueAt()`, BATCH per transaction, PARALLEL transactions at once; returns jobs/s. */
async function schedule(
  db: Db,
  publisher: { publishInTransaction: PgBossQueue['publishInTransaction']; horizonMs: number },
  count: number,
  dueAt: () => Date,
): Promise<number> {
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const size = Math.min(BATCH, count - next);
      next += size;
      await db.transaction(async (tx) => {
        for (let i = 0; i < size; i += 1) await enqueueNotice(tx, noticeDueAt(dueAt()), publisher, { now: new Date() });
      });
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, lane));
  return Math.round(count / ((performance.now() - started) / 1000));
}

type Row = Record<string, string | number>;

const CHUNK = 10_000;

/**
 * `count` pending jobs due over one day 30 days out, as scheduling leaves them: the rows, and
 * with `wakeups` one pg-boss wake-up each with its start time (what enqueueNotice published
 * before the horizon; pg-boss's own insert, 10 000 at a time).
 */
async function loadFarOff(pool: pg.Pool, queue: PgBossQueue, { count, wakeups }: { count: number; wakeups: boolean }): Promise<void> {
  for (let from = 0; from < count; from += CHUNK) {
    const size = Math.min(CHUNK, count - from);
    const tag = randomBytes(6).toString('hex');
    const { rows } = await pool.query<{ id: string; due_at: Date }>(
      `insert into reminder_jobs (notice_key, notice_type, identity, subject_id, recipient_email, due_at, deadline_at, state, next_attempt_at, wakeup_published_at, source, payload)
       select md5($1 || i) || md5($1 || '-' || i), 'renewal_notice_t72', jsonb_build_object('subscription_id', $1 || i, 'period_start', '2027-01-01'),
         $1 || i, 'bench' || i || '@example.test', due, due + interval '1 day', 'pending', due, case when $3::boolean then due end, 'bench', '{}'
       from (select i, now() + interval '30 days' + random() * interval '1 day' as due from generate_series(1, $2::int) as i) as spread
       returning id, due_at`,
      [tag, size, wakeups],
    );
    if (wakeups) await queue.boss.insert(rows.map((row) => ({ name: 'notice-wakeup', data: { jobId: row.id }, startAfter: row.due_at, expireInSeconds: 60 })));
  }
}

async function measure(label: string, horizonMs: number, withDispatcher: boolean): Promise<Row> {
  const database = await provisionDatabase({ prefix: 'bench_hot_queue', serverUrl: process.env.DATABASE_URL });
  const pool = new pg.Pool({ connectionString: database.url, max: PARALLEL + 4 });
  const db = createDb(pool);
  const queue = createPgBossQueue({ url: database.url, queueName: 'notice-wakeup', visibilityTimeoutMs: 60_000, horizonMs, poolSize: PARALLEL + 2 });
  try {
    await queue.start();
    const publisher = { publishInTransaction: queue.publishInTransaction, horizonMs };
    const loadStarted = performance.now();
    await loadFarOff(pool, queue, { count: pendingCount, wakeups: horizonMs >= 30 * DAY + DAY });
    const loadSeconds = ((performance.now() - loadStarted) / 1000).toFixed(0);
    await pool.query('vacuum analyze reminder_jobs');
    await pool.query('vacuum analyze pgboss.job');
    const table = await pool.query<{ rows: number; bytes: string }>(
      `select (select count(*)::int from pgboss.job where name = 'notice-wakeup') as rows,
         pg_size_pretty((select sum(pg_total_relation_size(relid)) from pg_partition_tree('pgboss.job'))) as bytes`,
    );

    // Before the horizon pg-boss ran no dispatcher; after, every worker runs one pass a second.
    const dispatchStarted = performance.now();
    const dispatched = withDispatcher ? await dispatchDueOnce({ db, queue, now: new Date() }) : 'n/a';
    const dispatchMs = withDispatcher ? (performance.now() - dispatchStarted).toFixed(1) : 'n/a';

    const scheduleRate = await schedule(db, publisher, dueCount, () => new Date(Date.now() - 1_000));
    let seen = 0;
    const drainStarted = performance.now();
    await new Promise<void>((resolve) => {
      void queue.consume(
        async () => {
          seen += 1;
          if (seen === dueCount) resolve();
          return { ack: true };
        },
        { concurrency: 32 },
      );
    });
    const drainRate = Math.round(dueCount / ((performance.now() - drainStarted) / 1000));
    return {
      setup: label,
      pending: pendingCount,
      'job-table rows': table.rows[0]?.rows ?? 0,
      'job-table size': table.rows[0]?.bytes ?? '',
      'bulk load s': loadSeconds,
      'scheduled/s': scheduleRate,
      [`drained/s (${dueCount} due)`]: drainRate,
      'dispatch pass ms': dispatchMs,
      'dispatched now': dispatched,
    };
  } finally {
    await queue.stop();
    await pool.end();
    await database.release();
  }
}

// BENCH_SETUPS=after measures only the horizon (at 5 M pending the before side alone loads for about an hour).
const setups = (process.env.BENCH_SETUPS ?? 'before,after').split(',');
if (setups.length === 0 || setups.some((setup) => setup !== 'before' && setup !== 'after')) {
  console.error('BENCH_SETUPS: a comma-separated list of before and after');
  process.exit(2);
}
const rows: Row[] = [];
// Longer than any delay a notice may have: every wake-up enters the queue at scheduling.
if (setups.includes('before')) rows.push(await measure('before: every wake-up at scheduling', 3_650 * DAY, false));
if (setups.includes('after')) rows.push(await measure(`after: horizon ${DEFAULT_QUEUE_HORIZON_MS / 60_000} min`, DEFAULT_QUEUE_HORIZON_MS, true));
printTable(
  `Hot queue: ${pendingCount} pending jobs 30 days out on pg-boss (${os.cpus().length} CPUs, load ${os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')})`,
  rows,
);
