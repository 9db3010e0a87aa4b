import type { Db } from '@/db/client';
import { countReplayItems, getReplay } from '@/db/queries/replays';
import type { ReplayState } from '@/db/schema/states';
import type { Logger } from '@/lib/log';
import type { QueueAdapter } from '@/lib/queue/types';
import { runReplayBatch } from '@/lib/replay/runner';
import { scheduleUploadedItem } from '@/lib/replay/schedule-item';

/**
 * Tests drive the workers' own batch function (lib/replay/runner.ts) in their process, one
 * replay only, until the replay is no longer running: what a worker's periodic pass does,
 * without its interval. A batch not yet due (pacing) is asked for again.
 */
export async function runReplayToEnd(params: {
  db: Db;
  queue: QueueAdapter;
  replayId: string;
  batchSize?: number;
  perDomainPerSecond?: number;
  logger?: Logger;
  onBatch?: (progress: { published: number; total: number }) => void | Promise<void>;
  timeoutMs?: number;
}): Promise<{ state: ReplayState; published: number }> {
  const { db, replayId } = params;
  const deadline = Date.now() + (params.timeoutMs ?? 20_000);
  let published = 0;
  for (;;) {
    const batch = await runReplayBatch({
      db,
      queue: params.queue,
      scheduleItem: scheduleUploadedItem,
      perDomainPerSecond: params.perDomainPerSecond ?? 10_000,
      batchSize: params.batchSize ?? 200,
      now: new Date(),
      replayId,
      logger: params.logger,
    });
    if (batch) {
      published += batch.published;
      await params.onBatch?.(await countReplayItems(db, { replayId }));
      continue;
    }
    const replay = await getReplay(db, { id: replayId });
    if (!replay) throw new Error(`replay ${replayId} not found`);
    if (replay.state !== 'running') return { state: replay.state, published };
    if (Date.now() > deadline) throw new Error(`replay ${replayId} still running after ${params.timeoutMs ?? 20_000} ms (${published} published here)`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
