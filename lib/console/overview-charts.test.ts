import { describe, expect, it } from 'vitest';
import type { BinnedSample } from '@/db/queries/overview-samples';
import { foldSamples, TOP_FAILURE_CLASSES } from './overview-charts';

/** How stored samples become chart points: levels, counts and percentiles each folded their own way. */

const now = new Date('2026-12-02T12:00:30.000Z');
const minute = (n: number) => new Date(Date.UTC(2026, 11, 2, 12, n));
const sample = (bucket: Date, series: string, key: string, values: { last?: number; sum?: number; max?: number }): BinnedSample => ({
  bucket,
  series,
  key,
  last: values.last ?? 0,
  sum: values.sum ?? 0,
  max: values.max ?? 0,
});

describe('foldSamples', () => {
  it('takes the last level, the summed counts and the highest percentile per bucket; a bucket without samples is null', () => {
    const { points } = foldSamples({
      now,
      range: '1h',
      samples: [
        sample(minute(0), 'quarantined', '', { last: 3, sum: 9, max: 4 }),
        sample(minute(0), 'pending', 'overdue', { last: 7, sum: 20, max: 9 }),
        sample(minute(0), 'latency_p99', '', { last: 40, sum: 90, max: 50 }),
        sample(minute(0), 'attempts', '', { last: 2, sum: 12, max: 5 }),
        sample(minute(0), 'handed_over', 'email/smtp', { last: 5, sum: 15, max: 6 }),
        sample(minute(0), 'delivered', 'email/smtp', { last: 3, sum: 9, max: 3 }),
        sample(minute(0), 'handed_over', 'sms/twilio', { last: 2, sum: 4, max: 2 }),
      ],
    });
    expect(points).toHaveLength(61);
    const last = points[points.length - 1];
    expect(last).toMatchObject({ at: minute(0).toISOString(), quarantined: 3, p99: 50, p50: null, attempts: 12 });
    expect(last?.pending).toEqual({ overdue: 7, lt_1h: 0, h1_6: 0, h6_24: 0, d1_3: 0, gt_3d: 0 });
    expect(last?.delivery).toEqual({ 'email/smtp': { handedOver: 5, delivered: 3 }, 'sms/twilio': { handedOver: 2, delivered: null } });
    expect(points[0]).toMatchObject({ quarantined: null, pending: null, p99: null, failures: {}, delivery: {} });
  });

  it(`names the ${TOP_FAILURE_CLASSES} largest failure classes over the range and sums the rest as other`, () => {
    const classes = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const samples = [sample(minute(0), 'quarantined', '', {}), ...classes.map((name, index) => sample(minute(0), 'failures', name, { sum: 10 - index }))];
    const { failureClasses, points } = foldSamples({ now, range: '1h', samples });
    expect(failureClasses).toEqual(['a', 'b', 'c', 'd', 'e', 'other']);
    expect(points[points.length - 1]?.failures).toEqual({ a: 10, b: 9, c: 8, d: 7, e: 6, other: 5 + 4 });
  });
});
