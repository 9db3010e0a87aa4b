import type { Db, Tx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import {
  claimDueReplay,
  countReplayItems,
  finishReplayRun,
  getReplay,
  lockUnpublishedItems,
  markItemsPublished,
  markWakeupsPublished,
  setNextBatchAt,
  type PendingItem,
} from '@/db/queries/replays';
import { recordReplayEvidence } from '@/lib/evidence/replay-evidence';
import { startPeriodic, type PeriodicHandle } from '@/lib/periodic';
import { createLogger, type Logger } from '@/lib/log';
import type { WakeupPublisher } from '@/lib/planning/enqueue-notice';
import { publishDueWakeup } from '@/lib/queue/publish';
import type { QueueAdapter, Wakeup } from '@/lib/queue/types';
import { replayWakeupsPublished } from './metrics';
import { publishBudgetMs } from './pacing';

/**
 * Running replays are published by the workers, batch by batch; the console and the CLI only
 * move a replay to `running`. Each batch is one transaction that claims the replay row
 * `for update skip locked` (lib/jobs/sweeper.ts does the same with stale jobs): two workers
 * never publish one replay at once, a cancel waits for the batch in flight and the next claim
 * no longer sees the replay, and a worker killed mid-batch rolls the batch back for the next
 * worker to claim. Items are marked published in the same transaction, so no item is
 * published twice by committed batches; with pg-boss the wake-ups themselves commit in that
 * transaction too (with RabbitMQ a rolled-back batch leaves extra wake-ups the ledger absorbs).
 * Pacing is the replay's `next_batch_at`, so it holds across workers and restarts.
 */

type ScheduleItemParams = { item: PendingItem; batchId: string; publisher: WakeupPublisher; now: Date };

/** Makes the item's job through enqueueNotice, which publishes a new job's wake-up where the queue can. */
export type ScheduleItem = (tx: Tx, params: ScheduleItemParams) => Promise<{ jobId: string; created: boolean; published: boolean }>;

/** Where a test may SIGKILL the worker: the batch's wake-ups are published, its transaction is not committed. */
export type ReplayCrashPoint = 'replay_before_commit';

export type ReplayBatchParams = {
  db: Db;
  queue: QueueAdapter;
  /** Uploaded rows become jobs first, as a producer would schedule them (idempotent on the key). */
  scheduleItem: ScheduleItem;
  perDomainPerSecond: number;
  batchSize: number;
  now: Date;
  /** Only this replay (tests); otherwise whichever running replay is due first. */
  replayId?: string;
  logger?: Logger;
  checkpoint?: (point: ReplayCrashPoint) => void;
};

export type ReplayBatchResult = { replayId: string; batchId: string; published: number; state: 'running' | 'completed' };

type CommittedBatch = ReplayBatchResult & { afterCommit: Wakeup[] };

/** An uploaded item that could not become a job. */
class ReplayItemError extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

async function scheduleOrFail(scheduleItem: ScheduleItem, tx: Tx, params: ScheduleItemParams): ReturnType<ScheduleItem> {
  try {
    return await scheduleItem(tx, params);
  } catch (error) {
    throw new ReplayItemError(error);
  }
}

/**
 * Publishes the batch's wake-ups in `tx` where the queue can (pg-boss). Where it cannot
 * (RabbitMQ), a wake-up for a job that exists already goes at once, before the commit (a
 * rollback costs one extra wake-up, absorbed by the ledger); one for a job this transaction
 * just scheduled must wait for the commit, or a worker could take it before the job row is
 * visible and ack it as unknown. Those are returned for the caller to publish after commit.
 */
async function publishBatch(params: {
  tx: Tx;
  queue: QueueAdapter;
  batchId: string;
  items: PendingItem[];
  scheduleItem: ScheduleItem;
  now: Date;
}): Promise<{ published: { noticeKey: string; jobId: string }[]; afterCommit: Wakeup[] }> {
  const { tx, queue, batchId, items, scheduleItem, now } = params;
  const published: { noticeKey: string; jobId: string }[] = [];
  const afterCommit: Wakeup[] = [];
  for (const item of items) {
    if (item.jobId) {
      await publishDueWakeup({ queue, tx, wakeup: { jobId: item.jobId, batchId } });
      published.push({ noticeKey: item.noticeKey, jobId: item.jobId });
      continue;
    }
    const scheduled = await scheduleOrFail(scheduleItem, tx, { item, batchId, publisher: queue, now });
    const wakeup = { jobId: scheduled.jobId, batchId };
    if (scheduled.created) {
      if (!scheduled.published) afterCommit.push(wakeup);
    } else if ((await queue.publishInTransaction(tx, wakeup)) === null) afterCommit.push(wakeup);
    published.push({ noticeKey: item.noticeKey, jobId: scheduled.jobId });
  }
  return { published, afterCommit };
}

/** A run that cannot go on (an uploaded row that no longer parses, say) ends `failed`, audited. */
async function failReplay(db: Db, { replayId, error }: { replayId: string; error: unknown }): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  const replay = await getReplay(db, { id: replayId });
  if (!replay) return;
  await db.transaction(async (tx) => {
    const failed = await finishReplayRun(tx, { id: replayId, state: 'failed' });
    if (!failed) return;
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: 'system:replay-runner',
          action: 'replay.fail',
          targetType: 'replay',
          targetId: replay.batchId,
          reason: message.slice(0, 500),
          before: { state: 'running' },
          after: { state: 'failed', published: failed.published },
        },
      ],
    });
  });
}

/**
 * One batch of the running replay that is due first, in one transaction: claim it, publish up
 * to `batchSize` of its unpublished items, mark them, then either finish the replay (nothing
 * left) or set when its next batch may go. Null when no running replay is due or every due
 * one is being published by another worker.
 */
export async function runReplayBatch(params: ReplayBatchParams): Promise<ReplayBatchResult | null> {
  const { db, queue, scheduleItem, batchSize, now } = params;
  const claimed: { id: string | null } = { id: null };
  try {
    const committed = await db.transaction(async (tx): Promise<CommittedBatch | null> => {
      const replay = await claimDueReplay(tx, { now, replayId: params.replayId });
      if (!replay) return null;
      claimed.id = replay.id;
      const items = await lockUnpublishedItems(tx, { replayId: replay.id, limit: batchSize });
      const { published, afterCommit } = await publishBatch({ tx, queue, batchId: replay.batchId, items, scheduleItem, now });
      await markItemsPublished(tx, { replayId: replay.id, published });
      await markWakeupsPublished(tx, { jobIds: published.map((p) => p.jobId) });
      // Who asked for this replay and who approved it, in the record of each woken notice that keeps one.
      await recordReplayEvidence(tx, { replayId: replay.id, published, now });
      params.checkpoint?.('replay_before_commit');
      const counts = await countReplayItems(tx, { replayId: replay.id });
      const base = { replayId: replay.id, batchId: replay.batchId, published: published.length, afterCommit };
      if (counts.published < counts.total) {
        const budget = publishBudgetMs({ emails: items.map((item) => item.recipientEmail), perDomainPerSecond: params.perDomainPerSecond });
        await setNextBatchAt(tx, { id: replay.id, at: new Date(now.getTime() + budget) });
        return { ...base, state: 'running' };
      }
      await finishReplayRun(tx, { id: replay.id, state: 'completed' });
      await insertAuditEntries(tx, {
        entries: [
          {
            actor: 'system:replay-runner',
            action: 'replay.complete',
            targetType: 'replay',
            targetId: replay.batchId,
            reason: 'every wake-up published',
            before: { state: 'running' },
            after: { state: 'completed', published: counts.published },
          },
        ],
      });
      return { ...base, state: 'completed' };
    });
    if (!committed) return null;
    const { afterCommit, ...result } = committed;
    // Lost if this process dies right here: the jobs are marked woken, so the sweeper wakes them
    // once their wake-up is older than its grace window.
    for (const wakeup of afterCommit) await queue.publish(wakeup);
    if (result.published > 0) replayWakeupsPublished.inc({ batch_id: result.batchId }, result.published);
    if (result.state === 'completed')
      (params.logger ?? createLogger('replay')).info({ replayId: result.replayId, batchId: result.batchId }, 'replay completed');
    return result;
  } catch (error) {
    // An item that cannot be scheduled will not schedule on the next pass either: the run
    // ends. A broker or database refusing is passing trouble: the batch rolled back, the
    // replay stays running and the next pass (on any worker) tries again.
    if (claimed.id && error instanceof ReplayItemError) await failReplay(db, { replayId: claimed.id, error: error.cause });
    throw error;
  }
}

export type ReplayRunnerHandle = PeriodicHandle;

/**
 * Every worker runs this: each `every` ms it publishes the running replays' due batches until
 * none is due (pacing then waits for the next look). Stopping waits for the batch in flight.
 */
export function startReplayRunner(params: {
  db: Db;
  queue: QueueAdapter;
  every: number;
  batchSize: number;
  perDomainPerSecond: number;
  scheduleItem: ScheduleItem;
  clock?: () => Date;
  logger?: Logger;
  checkpoint?: (point: ReplayCrashPoint) => void;
}): ReplayRunnerHandle {
  const log = params.logger ?? createLogger('replay-runner');
  const clock = params.clock ?? (() => new Date());
  return startPeriodic({
    every: params.every,
    runAtStart: true,
    run: async (isStopped) => {
      while (!isStopped()) {
        const batch = await runReplayBatch({
          db: params.db,
          queue: params.queue,
          scheduleItem: params.scheduleItem,
          perDomainPerSecond: params.perDomainPerSecond,
          batchSize: params.batchSize,
          now: clock(),
          logger: log,
          checkpoint: params.checkpoint,
        });
        if (!batch) return;
      }
    },
    onError: (error) => log.warn({ err: error instanceof Error ? error.message : String(error) }, 'replay batch failed'),
  });
}
