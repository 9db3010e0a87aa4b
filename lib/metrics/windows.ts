import type { DbOrTx } from '@/db/client';
import { countComplianceGaps, countWindowsAtRisk } from '@/db/queries/windows';
import { complianceGaps, windowAtRisk } from './registry';

/** WINDOW_AT_RISK_WITHIN's default, for callers (tests) that do not pass the setting. */
export const DEFAULT_AT_RISK_WITHIN_MS = 24 * 3_600_000;

/**
 * Windows at risk and open compliance gaps, read at scrape time by both /metrics endpoints (the
 * worker's and the console's), from the same queries as the console's Windows page. A type ×
 * region with nothing at risk has no series, so a figure is never stale.
 * notice_ledger_window_missed_total is a counter the send path adds to, not read here.
 */
export async function refreshWindowGauges(
  db: DbOrTx,
  { withinMs = DEFAULT_AT_RISK_WITHIN_MS, now = new Date(), retryCeiling }: { withinMs?: number; now?: Date; retryCeiling?: number } = {},
): Promise<void> {
  const [atRisk, gaps] = await Promise.all([countWindowsAtRisk(db, { now, withinMs, retryCeiling }), countComplianceGaps(db)]);
  windowAtRisk.reset();
  for (const row of atRisk) windowAtRisk.set({ notice_type: row.noticeType, region: row.region }, row.count);
  complianceGaps.reset();
  for (const row of gaps) complianceGaps.set({ notice_type: row.noticeType, region: row.region }, row.count);
}
