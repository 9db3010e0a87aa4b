import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '@/db/embedded';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { defineQueueContract } from '@/testing/queue/contract';
import { createQueue } from './index';
import { sweepOnce } from '@/lib/jobs/sweeper';
import { createLogger } from '@/lib/log';
import { startMetricsServer } from '@/worker/metrics-server';
import { createRabbitQueue, wakeupQueueArguments, type RabbitConnect, type RabbitQueue } from './rabbitmq';
import type { Delivery, WakeupHandler } from './types';
import { createTestAdapter } from '@/testing/queue/adapters';
import { makeQueueJob } from '@/testing/queue/jobs';
import { breakableRabbitConnect, deleteRabbitQueue } from '@/testing/queue/rabbitmq';

// Unset: the suite shows as skipped, with the reason in its name (the tests are still collected,
// so the empty URL below is never dialled: only hooks and tests connect).
const amqpUrl = process.env.AMQP_URL ?? '';

describe.skipIf(!amqpUrl)('RabbitMQ (needs AMQP_URL, e.g. amqp://guest:guest@127.0.0.1:5672: skipped without it)', () => {
  defineQueueContract({
    backend: 'rabbitmq',
    create: ({ t, queueName, visibilityTimeoutMs }) =>
      createTestAdapter({ backend: 'rabbitmq', db: t.db, databaseUrl: t.url, queueName, visibilityTimeoutMs, amqpUrl }),
    childEnv: () => ({ AMQP_URL: amqpUrl }),
    deleteQueue: ({ queueName }) => deleteRabbitQueue(amqpUrl, queueName),
  });

  describe('RabbitMQ adapter specifics', () => {
    let t: TestDatabase;
    let queue: RabbitQueue;
    const queueName = `rabbit-specific-${randomBytes(4).toString('hex')}`;
    const breakable = breakableRabbitConnect();

    beforeAll(async () => {
      t = await createTestDatabase();
      queue = createRabbitQueue({ url: amqpUrl, queueName, visibilityTimeoutMs: 5_000, connect: breakable.connect });
      await queue.start();
    });

    afterAll(async () => {
      await queue.stop();
      await deleteRabbitQueue(amqpUrl, queueName);
      await t.drop();
    });

    it('records nothing in the broker for a future wake-up: the job row holds the delay', async () => {
      expect(await queue.publish({ jobId: randomUUID() }, new Date(Date.now() + 60_000))).toBeNull();
      const connection = await amqp.connect(amqpUrl);
      const channel = await connection.createChannel();
      const info = await channel.checkQueue(queueName);
      await connection.close();
      expect(info.messageCount).toBe(0);
    });

    it('reconnects after the connection drops and keeps consuming', async () => {
      const seen: string[] = [];
      await queue.consume(
        async (delivery) => {
          seen.push(delivery.wakeup.jobId);
          return { ack: true };
        },
        { concurrency: 2 },
      );
      const before = randomUUID();
      await queue.publish({ jobId: before });
      await vi.waitFor(() => expect(seen).toContain(before), { timeout: 10_000, interval: 50 });
      breakable.dropConnection();
      const after = randomUUID();
      // publish waits for the recovered connection rather than failing.
      await queue.publish({ jobId: after });
      await vi.waitFor(() => expect(seen).toContain(after), { timeout: 15_000, interval: 50 });

      // A channel error leaves the connection up: the consumer channel is reopened on it.
      breakable.breakConsumeChannel();
      const afterChannelError = randomUUID();
      await vi.waitFor(
        async () => {
          await queue.publish({ jobId: afterChannelError });
          expect(seen).toContain(afterChannelError);
        },
        { timeout: 15_000, interval: 500 },
      );
    });
  });
});

/** A TCP hop to the broker that a test can cut (listener closed, every socket destroyed) and restore on the same port. */
async function brokerProxy(target: URL): Promise<{ url: string; cut: () => Promise<void>; restore: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const port = await freePort();
  let server: net.Server | null = null;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5672), target.hostname);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
      server = next;
    });
  await listen();
  const proxied = new URL(target.href);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  return {
    url: proxied.href,
    cut: async () => {
      const closing = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      for (const socket of sockets) socket.destroy();
      await closing;
    },
    restore: listen,
  };
}

describe.skipIf(!amqpUrl)('RabbitMQ health (needs AMQP_URL: skipped without it)', () => {
  it('reports the connection down while the broker is unreachable, and up again once it reconnects', async () => {
    const proxy = await brokerProxy(new URL(amqpUrl || 'amqp://127.0.0.1'));
    const queueName = `rabbit-health-${randomBytes(4).toString('hex')}`;
    const queue = createRabbitQueue({ url: proxy.url, queueName, visibilityTimeoutMs: 5_000 });
    expect(await queue.health()).toEqual({ ok: false, reason: 'RabbitMQ queue not started' });
    await queue.start();
    try {
      await queue.consume(async () => ({ ack: true }), { concurrency: 1 });
      expect(await queue.health()).toEqual({ ok: true });
      await proxy.cut();
      await vi.waitFor(async () => expect(await queue.health()).toEqual({ ok: false, reason: 'RabbitMQ connection lost; reconnecting' }), {
        timeout: 10_000,
        interval: 50,
      });
      await proxy.restore();
      await vi.waitFor(async () => expect(await queue.health()).toEqual({ ok: true }), { timeout: 20_000, interval: 100 });
    } finally {
      await queue.stop();
      await proxy.cut();
      await deleteRabbitQueue(amqpUrl, queueName);
    }
  }, 40_000);
});

describe.skipIf(!amqpUrl)('RabbitMQ at start (needs AMQP_URL: skipped without it)', () => {
  /** amqplib's connect, counted: how many times start() dialled. */
  const countedConnect = () => {
    const counter: { dials: number; connect: RabbitConnect } = {
      dials: 0,
      connect: (url, options) => {
        counter.dials += 1;
        return amqp.connect(url, options);
      },
    };
    return counter;
  };

  it('a worker started while the broker is down waits for it (connectWaitMs) and consumes once it is back', async () => {
    const proxy = await brokerProxy(new URL(amqpUrl || 'amqp://127.0.0.1'));
    await proxy.cut();
    const queueName = `rabbit-start-${randomBytes(4).toString('hex')}`;
    const counter = countedConnect();
    const queue = createRabbitQueue({ url: proxy.url, queueName, visibilityTimeoutMs: 5_000, connectWaitMs: 60_000, connect: counter.connect });
    const starting = queue.start();
    try {
      // Refused at least twice (the broker is down), then back: start() resolves on the next try.
      await vi.waitFor(() => expect(counter.dials).toBeGreaterThanOrEqual(2), { timeout: 20_000, interval: 50 });
      await proxy.restore();
      await starting;
      const received: string[] = [];
      await queue.consume(
        async (delivery) => {
          received.push(delivery.wakeup.jobId);
          return { ack: true };
        },
        { concurrency: 1 },
      );
      const jobId = randomUUID();
      await queue.publish({ jobId });
      await vi.waitFor(() => expect(received).toEqual([jobId]), { timeout: 10_000, interval: 50 });
    } finally {
      await starting.catch(() => undefined);
      await queue.stop();
      await proxy.cut();
      await deleteRabbitQueue(amqpUrl, queueName);
    }
  }, 60_000);

  it('without a wait a refused connection fails start at once, and a refused login fails at once even with one', async () => {
    const proxy = await brokerProxy(new URL(amqpUrl || 'amqp://127.0.0.1'));
    await proxy.cut();
    const down = createRabbitQueue({ url: proxy.url, queueName: `rabbit-start-${randomBytes(4).toString('hex')}`, visibilityTimeoutMs: 5_000 });
    await expect(down.start()).rejects.toThrow(/ECONNREFUSED/);
    await proxy.restore();
    const wrongLogin = new URL(amqpUrl || 'amqp://127.0.0.1');
    wrongLogin.password = 'not-the-password';
    const counter = countedConnect();
    const refused = createRabbitQueue({
      url: wrongLogin.href,
      queueName: `rabbit-start-${randomBytes(4).toString('hex')}`,
      visibilityTimeoutMs: 5_000,
      connectWaitMs: 60_000,
      connect: counter.connect,
    });
    try {
      await expect(refused.start()).rejects.toThrow(/ACCESS[-_]REFUSED|403/);
      expect(counter.dials).toBe(1);
    } finally {
      await proxy.cut();
    }
  }, 60_000);
});

describe("the console's RabbitMQ publisher (createQueue, role publisher)", () => {
  let t: TestDatabase;

  beforeAll(async () => {
    t = await createTestDatabase();
  });

  afterAll(async () => {
    await t.drop();
  });

  it('starts and schedules with no broker listening: publishInTransaction records nothing; only a real publish tries to connect', async () => {
    const port = await freePort();
    const queue = createQueue({
      config: { QUEUE_BACKEND: 'rabbitmq', AMQP_URL: `amqp://guest:guest@127.0.0.1:${String(port)}`, VISIBILITY_TIMEOUT: 2_000 },
      databaseUrl: t.url,
      queueName: `publisher-${randomBytes(4).toString('hex')}`,
      role: 'publisher',
    });
    await queue.start();
    try {
      const published = await t.db.transaction((tx) => queue.publishInTransaction(tx, { jobId: randomUUID() }));
      expect(published).toBeNull();
      expect(await queue.liveWakeupJobIds([randomUUID()])).toEqual(new Set());
      await expect(queue.publish({ jobId: randomUUID() })).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await queue.stop();
    }
  });
});

/** Due 20 s ago, woken 10 s ago: the wake-up the test publishes. */
function pendingDueJob(t: TestDatabase): Promise<string> {
  const now = Date.now();
  return makeQueueJob(t, { nextAttemptAt: new Date(now - 20_000), wakeupPublishedAt: new Date(now - 10_000) });
}

/** A handler that fails one job's delivery every time, the way a crash would: it never finishes inside the window. */
function poisonHandler(poisonJobId: string): { handler: WakeupHandler; poisoned: Delivery[]; healthy: Delivery[]; cure: () => void } {
  const poisoned: Delivery[] = [];
  const healthy: Delivery[] = [];
  let cured = false;
  return {
    poisoned,
    healthy,
    cure: () => {
      cured = true;
    },
    handler: async (delivery) => {
      if (delivery.wakeup.jobId !== poisonJobId || cured) {
        healthy.push(delivery);
        return { ack: true };
      }
      poisoned.push(delivery);
      await new Promise<void>((resolve) => delivery.signal.addEventListener('abort', () => resolve(), { once: true }));
      return { ack: true };
    },
  };
}

async function readyMessages(url: string, queueName: string): Promise<number> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    return (await channel.checkQueue(queueName)).messageCount;
  } finally {
    await connection.close();
  }
}

describe.skipIf(!amqpUrl)('RabbitMQ delivery limit and dead letters (needs AMQP_URL: skipped without it)', () => {
  let t: TestDatabase;
  const cleanup: (() => Promise<void>)[] = [];
  const VISIBILITY_MS = 400;
  const LIMIT = 3;

  beforeAll(async () => {
    t = await createTestDatabase();
  });

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    await t.drop();
  });

  it('a poison wake-up is dead-lettered after the delivery limit, counted by the metric, and its still-pending job is found by the sweeper', async () => {
    const queueName = `rabbit-poison-${randomBytes(4).toString('hex')}`;
    const queue = createRabbitQueue({ url: amqpUrl, queueName, visibilityTimeoutMs: VISIBILITY_MS, deliveryLimit: LIMIT });
    cleanup.push(() => deleteRabbitQueue(amqpUrl, queueName));
    await queue.start();
    cleanup.push(() => queue.stop());
    const jobId = await pendingDueJob(t);
    const poison = poisonHandler(jobId);
    await queue.consume(poison.handler, { concurrency: 2 });
    expect(await queue.deadLetteredCount()).toBe(0);

    await queue.publish({ jobId });
    await vi.waitFor(async () => expect(await queue.deadLetteredCount()).toBe(1), { timeout: 30_000, interval: 100 });
    // The first delivery and one per return up to the limit (each outlived its window and was
    // rejected back), then the broker moved it to the dead-letter queue.
    expect(poison.poisoned).toHaveLength(LIMIT + 1);
    expect(poison.poisoned.map((d) => d.deliveryCount)).toEqual(Array.from({ length: LIMIT + 1 }, (_, i) => i + 1));
    expect(await readyMessages(amqpUrl, queueName)).toBe(0);
    expect(await readyMessages(amqpUrl, queue.deadLetterName)).toBe(1);

    // Visible to Prometheus, from the worker's /metrics.
    const server = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      db: t.db,
      queue,
      quarantineAfterMs: 15 * 60_000,
      logger: createLogger('poison-test', 'silent'),
    });
    try {
      const body = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      expect(body).toMatch(/^notice_ledger_wakeups_dead_lettered 1$/m);
    } finally {
      await server.close();
    }

    // The job row is the truth: still pending and due, so the sweeper wakes it again.
    poison.cure();
    const swept = await sweepOnce({ db: t.db, queue, now: new Date(), graceMs: 2 * VISIBILITY_MS });
    expect(swept).toEqual({ found: 1, republished: 1 });
    await vi.waitFor(() => expect(poison.healthy.map((d) => d.wakeup.jobId)).toContain(jobId), { timeout: 10_000, interval: 50 });
  }, 60_000);

  it('a worker stopping hands its delivery back to the next worker, not to the dead-letter queue', async () => {
    // Requeued with basic.nack, which RabbitMQ 4.3+ does not count towards the limit (3.x and
    // 4.0–4.2 count every return, so here a limit of 1 still leaves room for this one).
    const queueName = `rabbit-stop-${randomBytes(4).toString('hex')}`;
    cleanup.push(() => deleteRabbitQueue(amqpUrl, queueName));
    const first = createRabbitQueue({ url: amqpUrl, queueName, visibilityTimeoutMs: 30_000, deliveryLimit: 1 });
    await first.start();
    const jobId = randomUUID();
    const held: Delivery[] = [];
    await first.consume(
      async (delivery) => {
        held.push(delivery);
        await new Promise<void>((resolve) => delivery.signal.addEventListener('abort', () => resolve(), { once: true }));
        throw new Error('stopping');
      },
      { concurrency: 1 },
    );
    await first.publish({ jobId });
    await vi.waitFor(() => expect(held).toHaveLength(1), { timeout: 10_000, interval: 50 });
    await first.stop();

    const second = createRabbitQueue({ url: amqpUrl, queueName, visibilityTimeoutMs: 30_000, deliveryLimit: 1 });
    await second.start();
    cleanup.push(() => second.stop());
    const seen: Delivery[] = [];
    await second.consume(
      async (delivery) => {
        seen.push(delivery);
        return { ack: true };
      },
      { concurrency: 1 },
    );
    await vi.waitFor(() => expect(seen.map((d) => d.wakeup.jobId)).toContain(jobId), { timeout: 10_000, interval: 50 });
    expect(await second.deadLetteredCount()).toBe(0);
  }, 30_000);

  it('upgrade: a queue declared by an earlier version keeps working, refuses the new arguments (PRECONDITION_FAILED), and gains the limit from a policy', async () => {
    const queueName = `rabbit-upgrade-${randomBytes(4).toString('hex')}`;
    const deadLetterName = `${queueName}.dead-letter`;
    cleanup.push(() => deleteRabbitQueue(amqpUrl, queueName));
    // Today's declaration (before the delivery limit).
    const connection = await amqp.connect(amqpUrl);
    try {
      const channel = await connection.createChannel();
      await channel.assertQueue(queueName, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      const redeclare = await connection.createChannel();
      redeclare.on('error', () => undefined);
      await expect(
        redeclare.assertQueue(queueName, { durable: true, arguments: wakeupQueueArguments({ deadLetterName, deliveryLimit: LIMIT }) }),
      ).rejects.toThrow(/PRECONDITION_FAILED/);
    } finally {
      await connection.close();
    }

    // The adapter starts on it (the queue is used as it is) and delivers.
    const queue = createRabbitQueue({ url: amqpUrl, queueName, visibilityTimeoutMs: VISIBILITY_MS, deliveryLimit: LIMIT });
    await queue.start();
    cleanup.push(() => queue.stop());
    const jobId = await pendingDueJob(t);
    const control = randomUUID();
    const poison = poisonHandler(jobId);
    await queue.consume(poison.handler, { concurrency: 2 });
    await queue.publish({ jobId: control });
    await vi.waitFor(() => expect(poison.healthy.map((d) => d.wakeup.jobId)).toContain(control), { timeout: 10_000, interval: 50 });

    // The documented upgrade (README, "Queues: the horizon and dead letters").
    const policy = `${queueName}-limits`;
    await rabbitmqctl([
      'set_policy',
      '--apply-to',
      'queues',
      policy,
      `^${queueName}$`,
      JSON.stringify({ 'delivery-limit': LIMIT, 'dead-letter-exchange': deadLetterName }),
    ]);
    cleanup.push(() => rabbitmqctl(['clear_policy', policy]).then(() => undefined));
    await queue.publish({ jobId });
    await vi.waitFor(async () => expect(await queue.deadLetteredCount()).toBe(1), { timeout: 30_000, interval: 100 });
    expect(poison.poisoned).toHaveLength(LIMIT + 1);
  }, 60_000);
});

/** The broker's CLI (RABBITMQCTL, e.g. `docker exec rabbitmq rabbitmqctl` where the broker runs in a container). */
async function rabbitmqctl(args: string[]): Promise<string> {
  const [command = 'rabbitmqctl', ...prefix] = (process.env.RABBITMQCTL ?? 'rabbitmqctl').split(' ').filter(Boolean);
  const { stdout } = await promisify(execFile)(command, [...prefix, ...args], { timeout: 20_000 });
  return stdout;
}
