import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { setNextAttemptAt } from '@/db/queries/scheduling';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { sweepOnce } from '@/lib/jobs/sweeper';
import type { Delivery, QueueAdapter } from '@/lib/queue/types';
import { makeQueueJob } from './jobs';

/**
 * The one contract every queue adapter meets, run from pgboss.test.ts and rabbitmq.test.ts.
 * Each test gets its own queue name and deletes it afterwards.
 */

export type ContractTarget = {
  backend: 'pgboss' | 'rabbitmq';
  create: (params: { t: TestDatabase; queueName: string; visibilityTimeoutMs: number }) => QueueAdapter;
  /** Environment the crash-consumer child needs besides DATABASE_URL and QUEUE_NAME. */
  childEnv: () => Record<string, string>;
  deleteQueue: (params: { t: TestDatabase; queueName: string }) => Promise<void>;
};

type Seen = { delivery: Delivery; at: number };

const VISIBILITY_MS = 2_000;

function startChild(env: Record<string, string>): { child: ChildProcess; lines: string[] } {
  // node itself with tsx's loader: the tsx CLI would put a second process between us and the
  // consumer, and SIGKILL on the wrapper would leave the real consumer running.
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve(import.meta.dirname, 'crash-consumer.ts')], {
    env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    lines.push(...parts);
  });
  return { child, lines };
}

export function defineQueueContract(target: ContractTarget): void {
  describe(`queue contract: ${target.backend}`, () => {
    let t: TestDatabase;
    const open: { queue: QueueAdapter; queueName: string }[] = [];
    const children: ChildProcess[] = [];
    const runId = randomBytes(4).toString('hex');
    let counter = 0;

    const newQueue = async (): Promise<{ queue: QueueAdapter; queueName: string }> => {
      counter += 1;
      const queueName = `contract-${runId}-${counter}`;
      const queue = target.create({ t, queueName, visibilityTimeoutMs: VISIBILITY_MS });
      await queue.start();
      const entry = { queue, queueName };
      open.push(entry);
      return entry;
    };

    const consumeInto = async (queue: QueueAdapter, seen: Seen[], handle?: (delivery: Delivery, nth: number) => Promise<Date | null>): Promise<void> => {
      await queue.consume(
        async (delivery) => {
          seen.push({ delivery, at: Date.now() });
          const nth = seen.filter((s) => s.delivery.wakeup.jobId === delivery.wakeup.jobId).length;
          const wakeAt = handle ? await handle(delivery, nth) : null;
          return wakeAt ? { ack: true, wakeAt } : { ack: true };
        },
        { concurrency: 4 },
      );
    };

    beforeAll(async () => {
      t = await createTestDatabase();
    });

    afterEach(async () => {
      for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      for (const entry of open.splice(0)) {
        await entry.queue.stop();
        await target.deleteQueue({ t, queueName: entry.queueName });
      }
    });

    afterAll(async () => {
      await t.drop();
    });

    it('delivers a wake-up published for now, with its batch id', async () => {
      const { queue } = await newQueue();
      const seen: Seen[] = [];
      await consumeInto(queue, seen);
      const jobId = randomUUID();
      await queue.publish({ jobId, batchId: 'batch-7' });
      await vi.waitFor(() => expect(seen.map((s) => s.delivery.wakeup)).toContainEqual({ jobId, batchId: 'batch-7' }), { timeout: 10_000, interval: 50 });
      expect(seen[0]?.delivery.messageId).toBeTruthy();
      expect(seen[0]?.delivery.signal.aborted).toBe(false);
    });

    it('delivers a duplicate wake-up twice, each acknowledged on its own', async () => {
      const { queue } = await newQueue();
      const seen: Seen[] = [];
      await consumeInto(queue, seen);
      const jobId = randomUUID();
      await queue.publish({ jobId });
      await queue.publish({ jobId });
      await vi.waitFor(() => expect(seen.filter((s) => s.delivery.wakeup.jobId === jobId)).toHaveLength(2), { timeout: 10_000, interval: 50 });
      const ids = seen.map((s) => s.delivery.messageId);
      expect(new Set(ids).size).toBe(2);
      // Both were acknowledged: nothing comes back after the visibility window.
      const settledAt = Date.now();
      await vi.waitFor(() => expect(Date.now() - settledAt).toBeGreaterThan(VISIBILITY_MS * 2), { timeout: 10_000, interval: 200 });
      expect(seen.filter((s) => s.delivery.wakeup.jobId === jobId)).toHaveLength(2);
    });

    it('an early wake-up that asks for wakeAt is delivered again, no earlier than that', async () => {
      const { queue } = await newQueue();
      const jobId = await makeQueueJob(t, { nextAttemptAt: new Date(), wakeupPublishedAt: new Date() });
      const seen: Seen[] = [];
      let wakeAt = new Date(0);
      await consumeInto(queue, seen, async (delivery, nth) => {
        if (nth > 1) return null;
        wakeAt = new Date(Date.now() + 1_500);
        // What the send path does on a deferral: the row holds the new time, then the queue is told.
        await setNextAttemptAt(t.db, { id: delivery.wakeup.jobId, at: wakeAt });
        return wakeAt;
      });
      await queue.publish({ jobId });
      await vi.waitFor(() => expect(seen.filter((s) => s.delivery.wakeup.jobId === jobId).length).toBeGreaterThanOrEqual(2), { timeout: 15_000, interval: 50 });
      const second = seen.filter((s) => s.delivery.wakeup.jobId === jobId)[1];
      expect(second?.at).toBeGreaterThanOrEqual(wakeAt.getTime());
    });

    it('a handler that throws: its wake-up is acked, never handed out again; the job stays pending and the sweeper re-wakes it', async () => {
      const { queue } = await newQueue();
      const now = Date.now();
      // Due, and last woken long ago: once no wake-up is live, a sweep re-publishes it.
      const jobId = await makeQueueJob(t, { nextAttemptAt: new Date(now - 20_000), wakeupPublishedAt: new Date(now - 10_000) });
      const seen: Seen[] = [];
      let threwAt = 0;
      await consumeInto(queue, seen, async (_delivery, nth) => {
        if (nth > 1) return null;
        threwAt = Date.now();
        throw new Error('database unavailable');
      });
      await queue.publish({ jobId });
      await vi.waitFor(() => expect(threwAt).toBeGreaterThan(0), { timeout: 10_000, interval: 50 });
      // Neither a retry nor the visibility expiry (past pg-boss's maintenance too) hands it out again.
      await vi.waitFor(() => expect(Date.now() - threwAt).toBeGreaterThan(VISIBILITY_MS * 3), { timeout: 15_000, interval: 200 });
      expect(seen.filter((s) => s.delivery.wakeup.jobId === jobId)).toHaveLength(1);

      const swept = await sweepOnce({ db: t.db, queue, now: new Date(), graceMs: 2 * VISIBILITY_MS });
      expect(swept.republished).toBeGreaterThanOrEqual(1);
      await vi.waitFor(() => expect(seen.filter((s) => s.delivery.wakeup.jobId === jobId)).toHaveLength(2), { timeout: 10_000, interval: 50 });
      const [first, second] = seen.filter((s) => s.delivery.wakeup.jobId === jobId);
      // A new wake-up, not a redelivery of the one that failed.
      expect(second?.delivery.messageId).not.toBe(first?.delivery.messageId);
    });

    it('a delivery whose handler outlives the visibility window is aborted and handed out again', async () => {
      const { queue } = await newQueue();
      const seen: Seen[] = [];
      let firstSignal: AbortSignal | null = null;
      await consumeInto(queue, seen, async (delivery, nth) => {
        if (nth > 1) return null;
        firstSignal = delivery.signal;
        await new Promise<void>((resolve) => delivery.signal.addEventListener('abort', () => resolve(), { once: true }));
        return null;
      });
      const jobId = randomUUID();
      await queue.publish({ jobId });
      await vi.waitFor(() => expect(seen.filter((s) => s.delivery.wakeup.jobId === jobId).length).toBeGreaterThanOrEqual(2), {
        timeout: 20_000,
        interval: 100,
      });
      expect(firstSignal).not.toBeNull();
      expect((firstSignal as AbortSignal | null)?.aborted).toBe(true);
    });

    it('redelivers a wake-up whose consumer process was killed mid-handle', async () => {
      const { queue, queueName } = await newQueue();
      const { child, lines } = startChild({
        ...target.childEnv(),
        QUEUE_BACKEND: target.backend,
        DATABASE_URL: t.url,
        QUEUE_NAME: queueName,
        VISIBILITY_MS: String(VISIBILITY_MS),
      });
      children.push(child);
      await vi.waitFor(() => expect(lines).toContain('ready'), { timeout: 20_000, interval: 100 });
      const jobId = randomUUID();
      await queue.publish({ jobId });
      await vi.waitFor(() => expect(lines).toContain(`delivered ${jobId}`), { timeout: 10_000, interval: 50 });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;

      const seen: Seen[] = [];
      await consumeInto(queue, seen);
      await vi.waitFor(() => expect(seen.map((s) => s.delivery.wakeup.jobId)).toContain(jobId), { timeout: 20_000, interval: 100 });
      const redelivery = seen.find((s) => s.delivery.wakeup.jobId === jobId);
      if (redelivery?.delivery.deliveryCount !== undefined) expect(redelivery.delivery.deliveryCount).toBeGreaterThanOrEqual(2);
    });

    it('a lost wake-up: the sweeper finds the pending due job and re-publishes it', async () => {
      const { queue } = await newQueue();
      const now = Date.now();
      // Due 20 s ago, last woken 10 s ago, and nothing in the queue: the wake-up was lost.
      const jobId = await makeQueueJob(t, { nextAttemptAt: new Date(now - 20_000), wakeupPublishedAt: new Date(now - 10_000) });
      const seen: Seen[] = [];
      await consumeInto(queue, seen);
      const result = await sweepOnce({ db: t.db, queue, now: new Date(), graceMs: 2 * VISIBILITY_MS });
      expect(result.found).toBeGreaterThanOrEqual(1);
      await vi.waitFor(() => expect(seen.map((s) => s.delivery.wakeup.jobId)).toContain(jobId), { timeout: 10_000, interval: 50 });
      // Marked as woken: an immediate second pass leaves it alone.
      const again = await sweepOnce({ db: t.db, queue, now: new Date(), graceMs: 2 * VISIBILITY_MS });
      expect(again.found).toBe(0);
    });
  });
}
