import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { defineQueueContract } from '@/testing/queue/contract';
import { createPgBossQueue, type PgBossQueue } from './pgboss';
import { createTestAdapter } from '@/testing/queue/adapters';

/** pg-boss 10's deleteQueue refuses while job rows reference the queue (ON DELETE RESTRICT). */
async function deletePgBossQueue(t: TestDatabase, queueName: string): Promise<void> {
  await t.pool.query('delete from pgboss.job where name = $1', [queueName]);
  await t.pool.query('select pgboss.delete_queue($1)', [queueName]);
}

defineQueueContract({
  backend: 'pgboss',
  create: ({ t, queueName, visibilityTimeoutMs }) => createTestAdapter({ backend: 'pgboss', db: t.db, databaseUrl: t.url, queueName, visibilityTimeoutMs }),
  childEnv: () => ({}),
  deleteQueue: ({ t, queueName }) => deletePgBossQueue(t, queueName),
});

describe('pg-boss adapter specifics', () => {
  let t: TestDatabase;
  let queue: PgBossQueue;
  const queueName = `pgboss-specific-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    t = await createTestDatabase();
    queue = createPgBossQueue({ url: t.url, queueName, visibilityTimeoutMs: 2_000, retryDelaySeconds: 0, pollingIntervalMs: 100 });
    await queue.start();
  });

  afterAll(async () => {
    await queue.stop();
    await deletePgBossQueue(t, queueName);
    await t.drop();
  });

  it('publishes inside a transaction: rolled back means no wake-up, committed means one', async () => {
    const rolledBack = randomUUID();
    const committed = randomUUID();
    await t.db
      .transaction(async (tx) => {
        await queue.publishInTransaction(tx, { jobId: rolledBack });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await t.db.transaction(async (tx) => {
      await queue.publishInTransaction(tx, { jobId: committed }, new Date(Date.now() + 60_000));
    });
    const live = await queue.liveWakeupJobIds([rolledBack, committed]);
    expect([...live]).toEqual([committed]);
  });

  it('holds a delayed wake-up until its start time', async () => {
    const jobId = randomUUID();
    const at = new Date(Date.now() + 1_200);
    const seen: { jobId: string; at: number }[] = [];
    const consumer = createPgBossQueue({ url: t.url, queueName, visibilityTimeoutMs: 2_000, pollingIntervalMs: 100 });
    await consumer.start();
    await consumer.consume(
      async (delivery) => {
        seen.push({ jobId: delivery.wakeup.jobId, at: Date.now() });
        return { ack: true };
      },
      { concurrency: 2 },
    );
    await queue.publish({ jobId }, at);
    await vi.waitFor(() => expect(seen.map((s) => s.jobId)).toContain(jobId), { timeout: 10_000, interval: 50 });
    expect(seen.find((s) => s.jobId === jobId)?.at).toBeGreaterThanOrEqual(at.getTime());
    await consumer.stop();
  });

  it('hands out the earliest due wake-up first, whatever the order they were published in', async () => {
    const ordered = `${queueName}-order`;
    const publisher = createPgBossQueue({ url: t.url, queueName: ordered, visibilityTimeoutMs: 2_000, supervise: false });
    await publisher.start();
    const base = Date.now() - 60_000;
    // Published out of due order; the fetch reads its index (name, start_after) in order.
    const dueOffsets = [30, 10, 50, 0, 20, 40];
    const byDue = new Map<string, number>();
    for (const offset of dueOffsets) {
      const jobId = randomUUID();
      byDue.set(jobId, offset);
      await publisher.publish({ jobId }, new Date(base + offset * 1_000));
    }
    const seen: number[] = [];
    const consumer = createPgBossQueue({ url: t.url, queueName: ordered, visibilityTimeoutMs: 2_000, pollingIntervalMs: 100 });
    await consumer.start();
    await consumer.consume(
      async (delivery) => {
        seen.push(byDue.get(delivery.wakeup.jobId) ?? -1);
        return { ack: true };
      },
      { concurrency: 1 },
    );
    await vi.waitFor(() => expect(seen).toHaveLength(dueOffsets.length), { timeout: 10_000, interval: 50 });
    expect(seen).toEqual([...dueOffsets].sort((a, b) => a - b));
    await consumer.stop();
    await publisher.stop();
    await deletePgBossQueue(t, ordered);
  });

  it('starts when several processes create the same new queue at once', async () => {
    // pg-boss 10 creates a queue with DDL (a partition with foreign keys to pgboss.queue):
    // two first starts at once deadlocked, and the loser's start threw "deadlock detected".
    const fresh = `${queueName}-race`;
    const adapters = Array.from({ length: 6 }, () => createPgBossQueue({ url: t.url, queueName: fresh, visibilityTimeoutMs: 2_000, supervise: false }));
    const started = await Promise.allSettled(adapters.map((adapter) => adapter.start()));
    await Promise.all(adapters.map((adapter) => adapter.stop()));
    await deletePgBossQueue(t, fresh);
    expect(started.map((result) => (result.status === 'rejected' ? String(result.reason) : 'started'))).toEqual(adapters.map(() => 'started'));
  });

  it('counts the wake-ups that ran out of retries as its dead letters', async () => {
    const before = await queue.deadLetteredCount();
    const id = await queue.publish({ jobId: randomUUID() });
    await queue.publish({ jobId: randomUUID() });
    // What pg-boss does to a wake-up past its retryLimit.
    await t.pool.query(`update pgboss.job set state = 'failed' where id = $1`, [id]);
    expect(await queue.deadLetteredCount()).toBe(before + 1);
  });

  it('refuses a wake-up without a job id', async () => {
    await expect(queue.publish({ jobId: 'not-a-uuid' })).rejects.toThrow();
  });
});
