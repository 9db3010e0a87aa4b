import type { Db } from '@/db/client';
import { takeDueUndispatched } from '@/db/queries/scheduling';
import { createLogger, type Logger } from '@/lib/log';
import { wakeupsDispatched } from '@/lib/metrics/registry';
import { horizonEnd } from './horizon';
import { publishUnlessLive, wakeupFor } from './publish';
import type { QueueAdapter } from './types';

/**
 * The hot-queue policy's publisher (./horizon.ts), the same for every queue: a pending job
 * with no wake-up for its current due time gets one once it is due within the queue's horizon
 * (pg-boss: QUEUE_HORIZON, published with its start time; RabbitMQ: 0, published when due).
 * Rows are marked in the same transaction that publishes: a refused publish rolls the marks
 * back for the next pass; a commit lost after a broker publish costs one duplicate wake-up,
 * which the send path absorbs. A job whose wake-up the queue still holds (a deferral within the
 * horizon that the delivery lifecycle already published) is marked and skipped.
 */

const DISPATCH_BATCH = 500;

export async function dispatchDueOnce({
  db,
  queue,
  now,
  limit = DISPATCH_BATCH,
  horizonMs = queue.horizonMs,
}: {
  db: Db;
  queue: QueueAdapter;
  now: Date;
  limit?: number;
  /** Default: the queue's own. */
  horizonMs?: number;
}): Promise<number> {
  const { taken, published } = await db.transaction(async (tx) => {
    const targets = await takeDueUndispatched(tx, { now, until: horizonEnd({ now, horizonMs }), limit });
    // A row never woken that comes within the horizon before it is due (scheduled beyond it: the
    // bulk) has nothing in the queue, and pg-boss is not asked. One woken before (deferred) may
    // still hold the wake-up its delivery published, and one already due but never marked (a
    // released claim, a job whose wake-up was published without marking it) may hold one too.
    const wakeups = targets.map((target) => ({
      wakeup: wakeupFor(target),
      mayBeLive: target.woken || target.nextAttemptAt <= now,
      ...(target.nextAttemptAt > now ? { at: target.nextAttemptAt } : {}),
    }));
    return { taken: targets.length, published: await publishUnlessLive({ queue, tx, targets: wakeups }) };
  });
  wakeupsDispatched.inc(published);
  return taken;
}

export type DispatcherHandle = { stop: () => Promise<void> };

/** Every worker may run one; `skip locked` keeps them from waiting on each other. */
export function startDispatcher(params: { db: Db; queue: QueueAdapter; every: number; clock?: () => Date; logger?: Logger }): DispatcherHandle {
  const log = params.logger ?? createLogger('dispatcher');
  const clock = params.clock ?? (() => new Date());
  let stopped = false;
  let busy = false;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    if (busy || stopped) return;
    busy = true;
    running = (async () => {
      try {
        // Drain a backlog in full passes rather than one batch per interval.
        while (!stopped && (await dispatchDueOnce({ db: params.db, queue: params.queue, now: clock() })) === DISPATCH_BATCH) {
          /* next batch */
        }
      } catch (error) {
        log.warn({ err: error instanceof Error ? error.message : String(error) }, 'dispatch failed');
      } finally {
        busy = false;
      }
    })();
  };
  const timer = setInterval(tick, params.every);
  tick();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
