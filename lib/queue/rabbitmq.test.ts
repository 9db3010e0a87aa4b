import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import amqp from 'amqplib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '@/db/embedded';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { defineQueueContract } from '@/testing/queue/contract';
import { createQueue } from './index';
import { createRabbitQueue, type RabbitQueue } from './rabbitmq';
import { createTestAdapter } from '@/testing/queue/adapters';
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
