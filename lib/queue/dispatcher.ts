import type { Db } from '@/db/client';
import { takeDueUndispatched } from '@/db/queries/scheduling';
import { createLogger, type Logger } from '@/lib/log';
import { wakeupsDispatched } from '@/lib/metrics/registry';
import type { QueueAdapter } from './types';

/**
 * For brokers without durable delays (RabbitMQ) the job row's next_attempt_at holds the
 * delay and only due wake-ups enter the broker. Rows are marked in the same transaction that
 * publishes: a refused publish rolls the marks back for the next pass; a commit lost after a
 * publish costs one duplicate wake-up, which the send path absorbs.
 */
export async function dispatchDueOnce({ db, queue, now, limit = 500 }: { db: Db; queue: QueueAdapter; now: Date; limit?: number }): Promise<number> {
  const dispatched = await db.transaction(async (tx) => {
    const targets = await takeDueUndispatched(tx, { now, limit });
    for (const target of targets) await queue.publish(target.batchId ? { jobId: target.id, batchId: target.batchId } : { jobId: target.id });
    return targets.length;
  });
  wakeupsDispatched.inc(dispatched);
  return dispatched;
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
        while (!stopped && (await dispatchDueOnce({ db: params.db, queue: params.queue, now: clock() })) === 500) {
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
