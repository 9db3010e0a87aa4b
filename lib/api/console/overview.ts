import { z } from 'zod';
import { consoleContract, noInput } from '@/lib/http/contract';
import { instant } from '@/lib/api/fields';

/** The overview's vocabulary: its time ranges and the pending due-time buckets. */
export const timeRanges = {
  '1h': { label: 'Last hour', rangeMs: 3_600_000, bucketMs: 5 * 60_000 },
  '6h': { label: 'Last 6 hours', rangeMs: 6 * 3_600_000, bucketMs: 15 * 60_000 },
  '24h': { label: 'Last 24 hours', rangeMs: 24 * 3_600_000, bucketMs: 3_600_000 },
  '7d': { label: 'Last 7 days', rangeMs: 7 * 86_400_000, bucketMs: 6 * 3_600_000 },
} as const;
export type TimeRange = keyof typeof timeRanges;
export const timeRangeNames = Object.keys(timeRanges) as TimeRange[];
export const DEFAULT_RANGE: TimeRange = '24h';

/** Upper bounds (ms from now) of the pending due-time buckets; `overdue` is due_at < now. */
export const dueBuckets = [
  { id: 'overdue', label: 'Overdue', untilMs: 0 },
  { id: 'lt_1h', label: '< 1 h', untilMs: 3_600_000 },
  { id: 'h1_6', label: '1–6 h', untilMs: 6 * 3_600_000 },
  { id: 'h6_24', label: '6–24 h', untilMs: 24 * 3_600_000 },
  { id: 'd1_3', label: '1–3 d', untilMs: 3 * 86_400_000 },
  { id: 'gt_3d', label: '> 3 d', untilMs: Number.POSITIVE_INFINITY },
] as const;
export type DueBucketId = (typeof dueBuckets)[number]['id'];

export const rangeQuery = z.object({ range: z.enum(timeRangeNames as [TimeRange, ...TimeRange[]]).default(DEFAULT_RANGE) });

const dueBucketId = z.enum(dueBuckets.map((bucket) => bucket.id) as [DueBucketId, ...DueBucketId[]]);
const count = z.number().int().nonnegative();

export const pendingOverview = z.object({
  generatedAt: instant,
  /** The instant the bucket counts (`rows`) were counted; exact then, up to a minute before generatedAt. */
  countedAt: instant,
  /** What that count cost. */
  countMs: z.number().nonnegative(),
  rows: z.array(z.object({ noticeType: z.string(), label: z.string(), counts: z.record(dueBucketId, count), total: count })),
  oldest: z.array(z.object({ noticeType: z.string(), noticeKey: z.string(), subjectId: z.string(), dueAt: instant, deadlineAt: instant, nearDeadline: count })),
});
export type PendingOverview = z.infer<typeof pendingOverview>;

export const seriesPoint = z.object({
  at: instant,
  p50: z.number().nullable(),
  p99: z.number().nullable(),
  claims: count,
  duplicates: count,
  wouldSuppress: count,
  retryable: count,
  permanent: count,
  accepted: count,
  delivered: count,
});
export type SeriesPoint = z.infer<typeof seriesPoint>;

export const seriesOverview = z.object({
  range: rangeQuery.shape.range.unwrap(),
  bucketMs: z.number().int().positive(),
  generatedAt: instant,
  points: z.array(seriesPoint),
});
export type SeriesOverview = z.infer<typeof seriesOverview>;

export const alert = z.object({
  id: z.enum(['quarantine', 'deadline', 'p99', 'compliance_gap', 'window_at_risk', 'window_missed']),
  severity: z.enum(['critical', 'warning']),
  message: z.string(),
  href: z.string(),
});
export type Alert = z.infer<typeof alert>;

export const statusOverview = z.object({
  generatedAt: instant,
  quarantined: count,
  quarantineAfterMs: z.number().int().nonnegative(),
  nearDeadline: count,
  /** Send windows: at risk within atRiskWithinMs, missed in the last 24 h / 7 d, open compliance gaps. */
  windows: z.object({ atRiskWithinMs: z.number().int().positive(), atRisk: count, missed24h: count, missed7d: count, gaps: count }),
  alerts: z.array(alert),
  /** Last 24 h by channel, from provider events: messages the provider accepted, delivered, bounced or failed, and accepted with no delivery yet. */
  channels: z.array(z.object({ channel: z.enum(['email', 'sms']), accepted: count, delivered: count, bounced: count, gap: count })),
});
export type StatusOverview = z.infer<typeof statusOverview>;

export const getPendingOverview = consoleContract({
  method: 'GET',
  path: '/api/console/overview/pending',
  permission: 'overview.read',
  input: noInput,
  output: pendingOverview,
});
export const getSeriesOverview = consoleContract({
  method: 'GET',
  path: '/api/console/overview/series',
  permission: 'overview.read',
  input: rangeQuery,
  output: seriesOverview,
});
export const getStatusOverview = consoleContract({
  method: 'GET',
  path: '/api/console/overview/status',
  permission: 'overview.read',
  input: noInput,
  output: statusOverview,
});
