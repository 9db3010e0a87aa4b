import type { DbOrTx } from '@/db/client';
import { findNearestDuePendingDeadline, findOldestPending } from '@/db/queries/overview';
import { NEAR_DEADLINE_MS } from '@/lib/console/overview-model';
import { configuredNoticeTypeNames } from '@/lib/windows/active';
import { duePendingToDeadline, oldestPendingAge, oldestPendingToDeadline, pendingNearDeadline } from './registry';

/**
 * How long a due job may be pending before it counts in notice_ledger_due_pending_seconds_to_deadline.
 * A healthy worker claims a due job within a second (queue poll 50 ms, claim-to-commit p99 ~30 ms)
 * and the sweeper re-wakes a lost one within 2 × VISIBILITY_TIMEOUT; a job still pending a minute
 * after it fell due is waiting on something (a retry's backoff, quiet hours, a rate limit, workers
 * behind). Without it a stream of short-window notices would keep the figure low while every one
 * of them goes out on time.
 */
export const DUE_PENDING_GRACE_MS = 60_000;

/**
 * The overview's oldest pending job per notice type, against its deadline, read at scrape time
 * by both /metrics endpoints (one lateral index read per type, as the overview does), and the
 * nearest deadline among due pending jobs, which the alert NoticeLedgerPendingNearDeadline reads
 * to page before a window closes. A type with nothing pending has no series, so "past its
 * deadline" is never a stale figure.
 */
export async function refreshPendingDeadlineGauges(db: DbOrTx, { now = new Date() }: { now?: Date } = {}): Promise<void> {
  const noticeTypes = configuredNoticeTypeNames();
  const [rows, nearest] = await Promise.all([
    findOldestPending(db, { now, noticeTypes, nearMs: NEAR_DEADLINE_MS }),
    findNearestDuePendingDeadline(db, { noticeTypes, dueBefore: new Date(now.getTime() - DUE_PENDING_GRACE_MS) }),
  ]);
  oldestPendingAge.reset();
  oldestPendingToDeadline.reset();
  pendingNearDeadline.reset();
  duePendingToDeadline.reset();
  for (const row of rows) {
    const labels = { notice_type: row.noticeType };
    oldestPendingAge.set(labels, Math.max(0, now.getTime() - row.dueAt.getTime()) / 1000);
    oldestPendingToDeadline.set(labels, (row.deadlineAt.getTime() - now.getTime()) / 1000);
    pendingNearDeadline.set(labels, row.nearDeadline);
  }
  for (const row of nearest) duePendingToDeadline.set({ notice_type: row.noticeType }, (row.deadlineAt.getTime() - now.getTime()) / 1000);
}
