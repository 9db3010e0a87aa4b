import type { DbOrTx } from '@/db/client';
import type { QueueAdapter, Wakeup } from './types';

/**
 * Publishes a wake-up for a row the caller marks woken in `tx` (the sweeper, the dispatcher,
 * the replay runner): in the transaction where the queue can (pg-boss), else at once, still
 * before the commit (RabbitMQ). A transaction that then rolls back costs one harmless extra
 * wake-up; one that commits never leaves a row marked woken without one. `at` (a due time
 * within the queue's horizon) is for the dispatcher; the others publish for now.
 */
export async function publishDueWakeup({ queue, tx, wakeup, at }: { queue: QueueAdapter; tx: DbOrTx; wakeup: Wakeup; at?: Date }): Promise<string | null> {
  return (await queue.publishInTransaction(tx, wakeup, at)) ?? queue.publish(wakeup, at);
}

/** A job row's wake-up: its id, and its replay batch when it has one. */
export function wakeupFor(row: { id: string; batchId: string | null }): Wakeup {
  return row.batchId ? { jobId: row.id, batchId: row.batchId } : { jobId: row.id };
}

export type PublishTarget = {
  wakeup: Wakeup;
  at?: Date;
  /** False: no wake-up was ever recorded for this row, so the queue holds none and is not asked. */
  mayBeLive?: boolean;
};

/**
 * Publishes a wake-up for each target the queue does not already hold one for (pg-boss can
 * tell; RabbitMQ cannot and publishes them all, a duplicate being harmless). The sweeper's and
 * the dispatcher's one publishing step; returns how many it published.
 */
export async function publishUnlessLive({ queue, tx, targets }: { queue: QueueAdapter; tx: DbOrTx; targets: readonly PublishTarget[] }): Promise<number> {
  if (targets.length === 0) return 0;
  const asked = targets.filter((target) => target.mayBeLive !== false).map((target) => target.wakeup.jobId);
  const live = asked.length > 0 ? await queue.liveWakeupJobIds(asked) : new Set<string>();
  let published = 0;
  for (const target of targets) {
    if (live.has(target.wakeup.jobId)) continue;
    await publishDueWakeup({ queue, tx, wakeup: target.wakeup, ...(target.at ? { at: target.at } : {}) });
    published += 1;
  }
  return published;
}
