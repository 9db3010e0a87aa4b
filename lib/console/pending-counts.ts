import type { DbOrTx, Tx } from '@/db/client';
import {
  countPendingByDueBucket,
  lockPendingRecount,
  readPendingDueSnapshot,
  storePendingDueSnapshot,
  tryLockPendingRecount,
  type PendingDueSnapshot,
} from '@/db/queries/overview';
import { configuredNoticeTypeNames } from '@/lib/windows/active';
import { createLogger } from '@/lib/log';
import { PENDING_FRESH_MS, PENDING_SERVE_STALE_MS } from './overview-model';

/**
 * Pending jobs by due bucket, counted at most once per freshness window across every console
 * process and read from pending_due_snapshot in between. The exact count walks the whole
 * pending index (45–55 ms at 1 M pending jobs on two cores); reading the snapshot is one row.
 *
 * Stale-while-revalidate: a snapshot past PENDING_FRESH_MS but within PENDING_SERVE_STALE_MS is
 * served as is and recounted after the response (`recountLater`, Next's `after()`), so no
 * viewer waits for the count. Recounting inline on staleness instead would put the count on
 * nearly every refresh of a lone viewer: the page refetches every 15 s, so the snapshot it
 * left behind is just over 15 s old when it comes back (bench/console-scale.ts, one viewer:
 * p95 54 ms that way, 1.4 ms this way). Only a missing or long-stale snapshot
 * (the console sat idle) is counted while the viewer waits.
 */

export type RecountResult =
  /** This call counted and stored a new snapshot. */
  | { outcome: 'recounted'; snapshot: PendingDueSnapshot }
  /** Another process counted while this one waited for the lock: its snapshot is fresh. */
  | { outcome: 'fresh'; snapshot: PendingDueSnapshot }
  /** Another process is counting right now; the previous snapshot stands. */
  | { outcome: 'busy' };
export type RecountOutcome = RecountResult['outcome'];

const log = createLogger('console');

function ageOf(snapshot: PendingDueSnapshot, now: Date): number {
  return now.getTime() - snapshot.countedAt.getTime();
}

/** A snapshot stamped ahead of `now` (another host's clock) counts as fresh only within the window too. */
function isFresh(snapshot: PendingDueSnapshot, now: Date): boolean {
  return Math.abs(ageOf(snapshot, now)) < PENDING_FRESH_MS;
}

/** Under the recount lock: a second look (someone may have counted meanwhile), then count and store. */
async function recountHoldingLock(tx: Tx, now: Date): Promise<Exclude<RecountResult, { outcome: 'busy' }>> {
  const current = await readPendingDueSnapshot(tx);
  if (current && isFresh(current, now)) return { outcome: 'fresh', snapshot: current };
  const started = performance.now();
  const counts = await countPendingByDueBucket(tx, { now, noticeTypes: configuredNoticeTypeNames() });
  const snapshot = { countedAt: now, countMs: Math.round(performance.now() - started), counts };
  await storePendingDueSnapshot(tx, snapshot);
  return { outcome: 'recounted', snapshot };
}

/**
 * Counts and stores a snapshot at `now` unless another process is counting (gives up at once:
 * 'busy') or has just counted ('fresh'). The lock, the second look and the store share one
 * transaction, so callers that all saw the same stale snapshot count once between them.
 */
export async function recountPendingCounts(db: DbOrTx, { now }: { now: Date }): Promise<RecountResult> {
  return db.transaction(async (tx) => ((await tryLockPendingRecount(tx)) ? recountHoldingLock(tx, now) : { outcome: 'busy' as const }));
}

/** Like recountPendingCounts, but waits for a running recount and then uses its snapshot. */
async function countPendingWaiting(db: DbOrTx, { now }: { now: Date }): Promise<PendingDueSnapshot> {
  return db.transaction(async (tx) => {
    await lockPendingRecount(tx);
    return (await recountHoldingLock(tx, now)).snapshot;
  });
}

export type LoadPendingCountsOptions = {
  now: Date;
  /** Runs a task after the response has gone (Next's `after`); the task never rejects. */
  recountLater: (task: () => Promise<RecountOutcome | 'failed'>) => void;
  /** The clock a deferred recount reads when it starts; tests pin it. */
  clock?: () => Date;
};

export async function loadPendingCounts(db: DbOrTx, { now, recountLater, clock = () => new Date() }: LoadPendingCountsOptions): Promise<PendingDueSnapshot> {
  const snapshot = await readPendingDueSnapshot(db);
  if (snapshot && isFresh(snapshot, now)) return snapshot;
  const age = snapshot ? ageOf(snapshot, now) : Number.POSITIVE_INFINITY;
  if (snapshot && age >= 0 && age < PENDING_SERVE_STALE_MS) {
    const recount = async (): Promise<RecountOutcome | 'failed'> => {
      try {
        return (await recountPendingCounts(db, { now: clock() })).outcome;
      } catch (error) {
        log.warn({ err: error }, 'pending-by-due-bucket recount failed; the previous snapshot stands');
        return 'failed';
      }
    };
    try {
      recountLater(recount);
    } catch {
      // Next's after() throws outside a request (a handler called directly, as the fuzz suites
      // do): recount in the background right away instead.
      void recount();
    }
    return snapshot;
  }
  return countPendingWaiting(db, { now });
}
