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
/** The stored charts' finer buckets (one sample a minute): 60 points an hour, 96 a day, 84 a week. */
export const sampleBucketMs: Record<TimeRange, number> = { '1h': 60_000, '6h': 5 * 60_000, '24h': 15 * 60_000, '7d': 2 * 3_600_000 };
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

/** One display bucket of the stored samples (overview_samples); null where no sample fell in it. */
export const chartPoint = z.object({
  at: instant,
  /** Pending jobs by due bucket at the bucket's last sample. */
  pending: z.record(dueBucketId, count).nullable(),
  quarantined: count.nullable(),
  /** The slowest sample interval's claim-to-commit p50 and p99 in the bucket, ms. */
  p50: z.number().nullable(),
  p99: z.number().nullable(),
  attempts: count.nullable(),
  /** Attempts that wrote a ledger claim, refused as duplicates, and shadow mode's would-suppress, summed over the bucket. */
  claims: count.nullable(),
  duplicates: count.nullable(),
  wouldSuppress: count.nullable(),
  /** Failures (retryable, permanent, outcome unknown) by error class, summed over the bucket; `other` beyond the top classes. */
  failures: z.record(z.string(), count),
  /** Per `channel/provider`: handed over in the hour before the bucket's last sample, and of those delivered (null: no delivery evidence). */
  delivery: z.record(z.string(), z.object({ handedOver: count, delivered: count.nullable() })),
});
export type ChartPoint = z.infer<typeof chartPoint>;

export const deliveryFigure = z.object({
  channel: z.enum(['email', 'sms']),
  provider: z.string(),
  handedOver: count,
  /** Null: the provider sent no delivered event in the last 7 days ("no delivery evidence"), never 0. */
  delivered: count.nullable(),
  gap: count.nullable(),
});
export type DeliveryFigureView = z.infer<typeof deliveryFigure>;

export const chartsOverview = z.object({
  range: rangeQuery.shape.range.unwrap(),
  bucketMs: z.number().int().positive(),
  generatedAt: instant,
  /** The newest sample's instant; null when the worker has written none. */
  sampledAt: instant.nullable(),
  points: z.array(chartPoint),
  failureClasses: z.array(z.string()),
  /** The `channel/provider` keys seen in the range. */
  deliveryKeys: z.array(z.string()),
  /** The latest sample's delivery figures: the table, the gauges and the alert read the same. */
  delivery: z.object({ at: instant.nullable(), windowMs: z.number().int().positive(), rows: z.array(deliveryFigure) }),
});
export type ChartsOverview = z.infer<typeof chartsOverview>;

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
  /** Wake-ups the queue gave up on (RabbitMQ's dead-letter queue; pg-boss: failed), as notice_ledger_wakeups_dead_lettered; null when the queue could not be asked. Their jobs stay pending for the sweeper. */
  deadLettered: count.nullable(),
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
export const getChartsOverview = consoleContract({
  method: 'GET',
  path: '/api/console/overview/charts',
  permission: 'overview.read',
  input: rangeQuery,
  output: chartsOverview,
});
