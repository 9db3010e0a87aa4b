import 'server-only';
import { countAcceptedVsDelivered, type DeliveryGapRow } from '@/db/queries/events';
import { channelOfProvider } from '@/lib/metrics/delivery-gap';
import type { DbOrTx } from '@/db/client';
import { attemptSeries, findOldestPending, providerEventSeries } from '@/db/queries/overview';
import { countQuarantined } from '@/db/queries/ledger/read';
import { configuredNoticeTypeNames, noticeTypeLabel } from '@/lib/windows/active';
import { loadPendingCounts, type LoadPendingCountsOptions } from './pending-counts';
import { loadWindowsSummary } from './windows';
import {
  dueBuckets,
  timeRanges,
  type DueBucketId,
  type PendingOverview,
  type SeriesOverview,
  type StatusOverview,
  type TimeRange,
} from '@/lib/api/console/overview';
import { CLAIM_OUTCOMES, deriveAlerts, densify, NEAR_DEADLINE_MS } from './overview-model';

/** The operator's configured label (NOTICE_CONFIG), or the name of a type no longer configured. */
const labelOf = noticeTypeLabel;

/** The bucket counts come from the shared snapshot (see pending-counts.ts); the oldest pending job is read live. */
export async function loadPendingOverview(db: DbOrTx, options: LoadPendingCountsOptions): Promise<PendingOverview> {
  const { now } = options;
  const [snapshot, oldest] = await Promise.all([
    loadPendingCounts(db, options),
    findOldestPending(db, { now, noticeTypes: configuredNoticeTypeNames(), nearMs: NEAR_DEADLINE_MS }),
  ]);
  const buckets = snapshot.counts;
  const types = [...new Set([...configuredNoticeTypeNames(), ...buckets.map((row) => row.noticeType)])];
  const rows = types.map((noticeType) => {
    const counts = Object.fromEntries(dueBuckets.map((bucket) => [bucket.id, 0])) as Record<DueBucketId, number>;
    for (const row of buckets) if (row.noticeType === noticeType) counts[row.bucket as DueBucketId] = row.count;
    return { noticeType, label: labelOf(noticeType), counts, total: Object.values(counts).reduce((sum, count) => sum + count, 0) };
  });
  return {
    generatedAt: now.toISOString(),
    countedAt: snapshot.countedAt.toISOString(),
    countMs: snapshot.countMs,
    rows,
    oldest: oldest.map((row) => ({ ...row, dueAt: row.dueAt.toISOString(), deadlineAt: row.deadlineAt.toISOString() })),
  };
}

export async function loadSeriesOverview(db: DbOrTx, { now, range }: { now: Date; range: TimeRange }): Promise<SeriesOverview> {
  const { rangeMs, bucketMs } = timeRanges[range];
  const from = new Date(now.getTime() - rangeMs);
  const [attempts, events] = await Promise.all([
    attemptSeries(db, { from, to: now, bucketMs, claimOutcomes: CLAIM_OUTCOMES }),
    providerEventSeries(db, { from, to: now, bucketMs }),
  ]);
  return { range, bucketMs, generatedAt: now.toISOString(), points: densify({ now, range, rows: [...attempts, ...events] }) };
}

/** The trend behind "p99 is rising" always reads the last 6 hours, whatever range the charts show. */
export const P99_TREND_RANGE: TimeRange = '6h';

/** Accepted vs delivered per channel (email, sms), summed over providers and notice types; both channels always listed. */
export function channelsOf(rows: DeliveryGapRow[]): StatusOverview['channels'] {
  return (['email', 'sms'] as const).map((channel) => {
    const mine = rows.filter((row) => channelOfProvider(row.provider) === channel);
    const sum = (field: 'accepted' | 'delivered' | 'bounced' | 'gap') => mine.reduce((total, row) => total + row[field], 0);
    return { channel, accepted: sum('accepted'), delivered: sum('delivered'), bounced: sum('bounced'), gap: sum('gap') };
  });
}

/** WINDOW_AT_RISK_WITHIN's default, for callers that do not pass the setting. */
const DEFAULT_AT_RISK_WITHIN_MS = 24 * 3_600_000;

export async function loadStatusOverview(
  db: DbOrTx,
  {
    now,
    quarantineAfterMs,
    atRiskWithinMs = DEFAULT_AT_RISK_WITHIN_MS,
    retryCeiling,
    countDeadLettered,
  }: {
    now: Date;
    quarantineAfterMs: number;
    atRiskWithinMs?: number;
    retryCeiling?: number;
    /** The queue's dead-letter count (QueueAdapter.deadLetteredCount); absent or failing, the count is unknown (null). */
    countDeadLettered?: () => Promise<number>;
  },
): Promise<StatusOverview> {
  const [quarantined, pending, series, windowsSummary, delivery, deadLettered] = await Promise.all([
    countQuarantined(db, { quarantineAfterMs }),
    findOldestPending(db, { now, noticeTypes: configuredNoticeTypeNames(), nearMs: NEAR_DEADLINE_MS }),
    loadSeriesOverview(db, { now, range: P99_TREND_RANGE }),
    loadWindowsSummary(db, { now, atRiskWithinMs, retryCeiling }),
    countAcceptedVsDelivered(db, { from: new Date(now.getTime() - 24 * 3_600_000), to: new Date(now.getTime() + 1) }),
    countDeadLettered ? countDeadLettered().catch(() => null) : Promise.resolve(null),
  ]);
  const windows = { atRiskWithinMs, ...windowsSummary.totals };
  const nearDeadline = pending.reduce((sum, row) => sum + row.nearDeadline, 0);
  return {
    generatedAt: now.toISOString(),
    quarantined,
    quarantineAfterMs,
    nearDeadline,
    windows,
    alerts: deriveAlerts({ quarantined, nearDeadline, series: series.points, windows }),
    channels: channelsOf(delivery),
    deadLettered,
  };
}
