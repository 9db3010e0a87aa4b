import type { Db } from '@/db/client';
import { startPeriodic, type PeriodicHandle } from '@/lib/periodic';
import { takeStaleWakeups } from '@/db/queries/scheduling';
import { createLogger, type Logger } from '@/lib/log';
import { wakeupsRepublished } from '@/lib/metrics/registry';
import { publishUnlessLive, wakeupFor } from '@/lib/queue/publish';
import type { QueueAdapter } from '@/lib/queue/types';

/**
 * The queue may lose a wake-up (publish failed after commit, broker lost a message, queue
 * purged). The job row is the obligation, so a pending job that is due and has not been
 * woken within the visibility window gets a fresh wake-up. A duplicate is harmless: the send
 * path is idempotent on the notice key.
 */

export type SweepParams = {
  db: Db;
  queue: QueueAdapter;
  now: Date;
  /** A wake-up younger than this may still be in flight; default: twice the visibility window. */
  graceMs: number;
  limit?: number;
};

/** One pass: re-publishes wake-ups for stale due jobs. Safe on every worker at once (skip locked). */
export async function sweepOnce({ db, queue, now, graceMs, limit = 500 }: SweepParams): Promise<{ found: number; republished: number }> {
  const result = await db.transaction(async (tx) => {
    const targets = await takeStaleWakeups(tx, { now, staleBefore: new Date(now.getTime() - graceMs), limit });
    if (targets.length === 0) return { found: 0, republished: 0 };
    // Publishing inside the transaction: if the broker refuses, the marks roll back and the
    // next pass tries again.
    const republished = await publishUnlessLive({ queue, tx, targets: targets.map((target) => ({ wakeup: wakeupFor(target) })) });
    return { found: targets.length, republished };
  });
  wakeupsRepublished.inc(result.republished);
  return result;
}

const SWEEP_BATCH = 500;

export type SweeperHandle = PeriodicHandle;

/**
 * Runs `sweepOnce` every `every` ms until stopped. `clock` is injectable for tests.
 * worker/main.ts: `const sweeper = startSweeper({ db, queue, every: config().SWEEP_EVERY, graceMs: 2 * config().VISIBILITY_TIMEOUT })`
 * and `await sweeper.stop()` on shutdown.
 */
export function startSweeper(params: { db: Db; queue: QueueAdapter; every: number; graceMs: number; clock?: () => Date; logger?: Logger }): SweeperHandle {
  const log = params.logger ?? createLogger('sweeper');
  const clock = params.clock ?? (() => new Date());
  return startPeriodic({
    every: params.every,
    runAtStart: true,
    run: async (isStopped) => {
      // A mass loss (queue purged, broker restored from backup) is drained in consecutive
      // passes, not one batch per interval: 100k lost wake-ups would otherwise take hours.
      for (let pass = 0; pass < 200 && !isStopped(); pass += 1) {
        const result = await sweepOnce({ db: params.db, queue: params.queue, now: clock(), graceMs: params.graceMs, limit: SWEEP_BATCH });
        if (result.found > 0) log.info(result, 'sweeper re-published lost wake-ups');
        if (result.found < SWEEP_BATCH) break;
      }
    },
    onError: (error) => log.warn({ err: error instanceof Error ? error.message : String(error) }, 'sweep failed'),
  });
}
