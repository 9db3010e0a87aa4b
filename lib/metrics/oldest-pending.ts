import type { DbOrTx } from '@/db/client';
import { findOldestPending } from '@/db/queries/overview';
import { NEAR_DEADLINE_MS } from '@/lib/console/overview-model';
import { configuredNoticeTypeNames } from '@/lib/windows/active';
import { oldestPendingAge, oldestPendingToDeadline, pendingNearDeadline } from './registry';

/**
 * The overview's oldest pending job per notice type, against its deadline, read at scrape time
 * by both /metrics endpoints (one lateral index read per type, as the overview does). A type
 * with nothing pending has no series, so "past its deadline" is never a stale figure.
 */
export async function refreshPendingDeadlineGauges(db: DbOrTx, { now = new Date() }: { now?: Date } = {}): Promise<void> {
  const rows = await findOldestPending(db, { now, noticeTypes: configuredNoticeTypeNames(), nearMs: NEAR_DEADLINE_MS });
  oldestPendingAge.reset();
  oldestPendingToDeadline.reset();
  pendingNearDeadline.reset();
  for (const row of rows) {
    const labels = { notice_type: row.noticeType };
    oldestPendingAge.set(labels, Math.max(0, now.getTime() - row.dueAt.getTime()) / 1000);
    oldestPendingToDeadline.set(labels, (row.deadlineAt.getTime() - now.getTime()) / 1000);
    pendingNearDeadline.set(labels, row.nearDeadline);
  }
}
