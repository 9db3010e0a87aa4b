import { z } from 'zod';
import { consoleContract, noInput } from '@/lib/http/contract';
import { DEFAULT_RANGE, dueBuckets, timeRangeNames, type DueBucketId, type TimeRange } from '@/lib/console/overview-model';
import { instant } from '@/lib/api/fields';

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
