import type { DbOrTx } from '@/db/client';
import type { QueueAdapter, Wakeup } from './types';

/**
 * Publishes a due wake-up for a row the caller marks woken in `tx` (the sweeper, the replay
 * runner): in the transaction where the queue can (pg-boss), else at once, still before the
 * commit (RabbitMQ). A transaction that then rolls back costs one harmless extra wake-up; one
 * that commits never leaves a row marked woken without one.
 */
export async function publishDueWakeup({ queue, tx, wakeup }: { queue: QueueAdapter; tx: DbOrTx; wakeup: Wakeup }): Promise<string | null> {
  return (await queue.publishInTransaction(tx, wakeup)) ?? queue.publish(wakeup);
}
