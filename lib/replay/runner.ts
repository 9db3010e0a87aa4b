import type { Db, Tx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import {
  countReplayItems,
  finishReplayRun,
  getReplay,
  lockReplayState,
  lockUnpublishedItems,
  markItemsPublished,
  markWakeupsPublished,
  type PendingItem,
} from '@/db/queries/replays';
import { createLogger, type Logger } from '@/lib/log';
import { publishDueWakeup } from '@/lib/queue/publish';
import type { QueueAdapter } from '@/lib/queue/types';
import { replayWakeupsPublished } from './metrics';
import { publishBudgetMs } from './pacing';

/**
 * Publishes a running replay's wake-ups batch by batch. Each batch is one transaction that
 * holds the replay row `for share`: a cancel waits for the batch in flight and the next batch
 * sees `cancelled` and stops. Items are marked published in the same transaction, so a
 * resumed run never publishes an item twice; with pg-boss the wake-ups themselves commit in
 * that transaction too.
 */

export type ScheduleItem = (tx: Tx, params: { item: PendingItem; batchId: string }) => Promise<string>;

export type RunReplayParams = {
  db: Db;
  queue: QueueAdapter;
  replayId: string;
  /** Uploaded rows become jobs first, as a producer would schedule them (idempotent on the key). */
  scheduleItem: ScheduleItem;
  perDomainPerSecond: number;
  batchSize?: number;
  logger?: Logger;
  wait?: (ms: number) => Promise<void>;
  /** Stops between batches (process shutdown); the replay stays `running` and can be resumed. */
  signal?: AbortSignal;
  /** Called after each committed batch (progress output, tests). */
  onBatch?: (progress: { published: number; total: number }) => void | Promise<void>;
};

export type RunResult = { state: 'completed' | 'cancelled' | 'stopped'; published: number };

const defaultWait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function publishBatch(params: {
  tx: Tx;
  queue: QueueAdapter;
  batchId: string;
  items: PendingItem[];
  scheduleItem: ScheduleItem;
}): Promise<{ noticeKey: string; jobId: string }[]> {
  const { tx, queue, batchId, items, scheduleItem } = params;
  const published: { noticeKey: string; jobId: string }[] = [];
  for (const item of items) {
    const jobId = item.jobId ?? (await scheduleItem(tx, { item, batchId }));
    await publishDueWakeup({ queue, tx, wakeup: { jobId, batchId } });
    published.push({ noticeKey: item.noticeKey, jobId });
  }
  return published;
}

export async function runReplay(params: RunReplayParams): Promise<RunResult> {
  const { db, queue, replayId, scheduleItem } = params;
  const batchSize = params.batchSize ?? 200;
  const wait = params.wait ?? defaultWait;
  const replay = await getReplay(db, { id: replayId });
  if (!replay) throw new Error(`replay ${replayId} not found`);
  const { batchId } = replay;
  const log = (params.logger ?? createLogger('replay')).child({ replayId, batchId });
  let publishedNow = 0;
  log.info({ total: replay.total }, 'replay run started');

  for (;;) {
    if (params.signal?.aborted) {
      log.info({ published: publishedNow }, 'replay run interrupted; resume with --run');
      return { state: 'stopped', published: publishedNow };
    }
    const started = Date.now();
    const batch = await db.transaction(async (tx) => {
      const state = await lockReplayState(tx, { id: replayId });
      if (state !== 'running') return { stop: state === 'cancelled' ? ('cancelled' as const) : ('stopped' as const), emails: [], count: 0 };
      const items = await lockUnpublishedItems(tx, { replayId, limit: batchSize });
      if (items.length === 0) return { stop: null, emails: [], count: 0 };
      const published = await publishBatch({ tx, queue, batchId, items, scheduleItem });
      await markItemsPublished(tx, { replayId, published });
      await markWakeupsPublished(tx, { jobIds: published.map((p) => p.jobId) });
      return { stop: null, emails: items.map((item) => item.recipientEmail), count: published.length };
    });
    if (batch.stop) {
      log.info({ published: publishedNow, state: batch.stop }, 'replay run stopped');
      return { state: batch.stop, published: publishedNow };
    }
    if (batch.count === 0) break;
    publishedNow += batch.count;
    replayWakeupsPublished.inc({ batch_id: batchId }, batch.count);
    const items = await countReplayItems(db, { replayId });
    await params.onBatch?.({ published: items.published, total: items.total });
    const remaining = publishBudgetMs({ emails: batch.emails, perDomainPerSecond: params.perDomainPerSecond }) - (Date.now() - started);
    if (remaining > 0) await wait(remaining);
  }

  const finished = await db.transaction(async (tx) => {
    const items = await countReplayItems(tx, { replayId });
    // Another runner may still hold a locked batch (skip locked hid it); it finishes the replay.
    if (items.published < items.total) return null;
    const row = await finishReplayRun(tx, { id: replayId, state: 'completed' });
    if (row) {
      await insertAuditEntries(tx, {
        entries: [
          {
            actor: 'system:replay-runner',
            action: 'replay.complete',
            targetType: 'replay',
            targetId: batchId,
            reason: 'every wake-up published',
            before: { state: 'running' },
            after: { state: 'completed', published: items.published },
          },
        ],
      });
    }
    return row;
  });
  const state = finished ? 'completed' : 'stopped';
  log.info({ published: publishedNow, state }, 'replay run finished publishing');
  return { state, published: publishedNow };
}
