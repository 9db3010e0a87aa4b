import { randomUUID } from 'node:crypto';
import PgBoss from 'pg-boss';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { createRabbitQueue } from '@/lib/queue/rabbitmq';
import type { QueueAdapter } from '@/lib/queue/types';
import { provisionDatabase } from '@/testing/database';
import { printTable } from './support';

/**
 * `tsx bench/queue-drain.ts`: how fast a backlog of due wake-ups drains through each queue
 * adapter with a no-op handler (the queue's own ceiling, not the send path's), against
 * pg-boss's `work()` with its defaults and with batch 100 + 0.5 s polling.
 * BENCH_WAKEUPS (default 2000); RabbitMQ is measured when AMQP_URL is set.
 */
process.env.NOTICE_KEY_SECRET ??= 'bench-secret-0123456789abcdef0123456789abcdef';
process.env.LOG_LEVEL ??= 'silent';
const total = Number(process.env.BENCH_WAKEUPS ?? 2_000);

type Row = { setup: string; wakeups: number; seconds: string; perSecond: number };

async function backlog(boss: PgBoss, name: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 500) {
    const jobs = Array.from({ length: Math.min(500, count - i) }, () => ({ name, data: { jobId: randomUUID() }, expireInSeconds: 60 }));
    await boss.insert(jobs);
  }
}

async function drainAdapter(label: string, queue: QueueAdapter, fill: () => Promise<void>, concurrency: number): Promise<Row> {
  await queue.start();
  await fill();
  let seen = 0;
  const started = performance.now();
  const done = new Promise<void>((resolve) => {
    void queue.consume(
      async () => {
        seen += 1;
        if (seen === total) resolve();
        return { ack: true };
      },
      { concurrency },
    );
  });
  await done;
  const seconds = (performance.now() - started) / 1000;
  await queue.stop();
  return { setup: label, wakeups: total, seconds: seconds.toFixed(2), perSecond: Math.round(total / seconds) };
}

async function workWindow(label: string, boss: PgBoss, name: string, options: PgBoss.WorkOptions, windowMs: number): Promise<Row> {
  let seen = 0;
  let finish: () => void = () => undefined;
  const drained = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const started = performance.now();
  const id = await boss.work(name, options, async (jobs) => {
    seen += jobs.length;
    if (seen >= total) finish();
  });
  // Stops at the window or when the backlog is empty, whichever comes first.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, windowMs)))]);
  clearTimeout(timer);
  await boss.offWork({ id });
  const seconds = (performance.now() - started) / 1000;
  return { setup: label, wakeups: seen, seconds: seconds.toFixed(2), perSecond: Math.round((seen / seconds) * 10) / 10 };
}

const database = await provisionDatabase({ prefix: 'bench_queue_drain', serverUrl: process.env.DATABASE_URL });
const rows: Row[] = [];
try {
  const boss = new PgBoss({ connectionString: database.url, supervise: false, schedule: false });
  await boss.start();
  for (const concurrency of [8, 32]) {
    const name = `drain-adapter-${concurrency}`;
    await boss.createQueue(name);
    const queue = createPgBossQueue({ url: database.url, queueName: name, visibilityTimeoutMs: 60_000 });
    rows.push(await drainAdapter(`pg-boss adapter, concurrency ${concurrency}`, queue, () => backlog(boss, name, total), concurrency));
  }
  for (const [label, options] of [
    ['pg-boss work() defaults (batch 1, 2 s polling)', {}],
    ['pg-boss work() batch 100, 0.5 s polling', { batchSize: 100, pollingIntervalSeconds: 0.5 }],
  ] as const) {
    const name = `drain-work-${rows.length}`;
    await boss.createQueue(name);
    await backlog(boss, name, total);
    rows.push(await workWindow(label, boss, name, options, 10_000));
  }
  await boss.stop({ graceful: false, wait: true });

  const amqpUrl = process.env.AMQP_URL;
  if (amqpUrl) {
    const name = `drain-rabbit-${randomUUID().slice(0, 8)}`;
    const queue = createRabbitQueue({ url: amqpUrl, queueName: name, visibilityTimeoutMs: 60_000 });
    const publisher = createRabbitQueue({ url: amqpUrl, queueName: name, visibilityTimeoutMs: 60_000 });
    await publisher.start();
    rows.push(
      await drainAdapter(
        'RabbitMQ adapter, prefetch 32',
        queue,
        async () => {
          for (let i = 0; i < total; i += 100)
            await Promise.all(Array.from({ length: Math.min(100, total - i) }, () => publisher.publish({ jobId: randomUUID() })));
        },
        32,
      ),
    );
    await publisher.stop();
    const amqp = await import('amqplib');
    const connection = await amqp.connect(amqpUrl);
    await (await connection.createChannel()).deleteQueue(name);
    await connection.close();
  }
  printTable(`Queue drain, ${total} due wake-ups, no-op handler`, rows);
} finally {
  await database.release();
}
