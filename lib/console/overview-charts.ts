import 'server-only';
import type { DbOrTx } from '@/db/client';
import { readBinnedSamples, type BinnedSample } from '@/db/queries/overview-samples';
import { DELIVERY_WINDOW_MS, readStoredDelivery } from '@/lib/metrics/delivery-gap';
import { dueBuckets, sampleBucketMs, timeRanges, type ChartPoint, type ChartsOverview, type DueBucketId, type TimeRange } from '@/lib/api/console/overview';

/** Bucket starts aligned to the epoch, covering [now - range, now]. */
function sampleBucketStarts({ now, range }: { now: Date; range: TimeRange }): Date[] {
  const bucketMs = sampleBucketMs[range];
  const last = Math.floor(now.getTime() / bucketMs) * bucketMs;
  const starts: Date[] = [];
  for (let at = Math.floor((now.getTime() - timeRanges[range].rangeMs) / bucketMs) * bucketMs; at <= last; at += bucketMs) starts.push(new Date(at));
  return starts;
}

/** Failure classes charted by name; the rest are summed as `other`. */
export const TOP_FAILURE_CLASSES = 5;

/**
 * The overview's charts from the worker's stored samples (overview_samples,
 * lib/metrics/overview-writer.ts): one range read of that small table per view, never the
 * ledger. Levels take the bucket's last sample, counts the sum, percentiles the highest.
 */
export function foldSamples({
  now,
  range,
  samples,
}: {
  now: Date;
  range: TimeRange;
  samples: readonly BinnedSample[];
}): Pick<ChartsOverview, 'points' | 'failureClasses' | 'deliveryKeys'> {
  const failureTotals = new Map<string, number>();
  for (const sample of samples) if (sample.series === 'failures') failureTotals.set(sample.key, (failureTotals.get(sample.key) ?? 0) + sample.sum);
  const ranked = [...failureTotals].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([key]) => key);
  const named = new Set(ranked.slice(0, TOP_FAILURE_CLASSES));
  const failureClasses = [...named, ...(ranked.length > TOP_FAILURE_CLASSES ? ['other'] : [])];
  const deliveryKeys = [...new Set(samples.filter((sample) => sample.series === 'handed_over').map((sample) => sample.key))].sort();

  const byBucket = new Map<number, BinnedSample[]>();
  for (const sample of samples) {
    const time = sample.bucket.getTime();
    byBucket.set(time, [...(byBucket.get(time) ?? []), sample]);
  }
  const points = sampleBucketStarts({ now, range }).map((start): ChartPoint => {
    const mine = byBucket.get(start.getTime()) ?? [];
    const one = (series: string) => mine.find((sample) => sample.series === series);
    const sampled = mine.some((sample) => sample.series === 'quarantined');
    const pendingRows = mine.filter((sample) => sample.series === 'pending');
    const pending = sampled
      ? (Object.fromEntries(dueBuckets.map((bucket) => [bucket.id, pendingRows.find((row) => row.key === bucket.id)?.last ?? 0])) as Record<
          DueBucketId,
          number
        >)
      : null;
    const failures: Record<string, number> = {};
    if (sampled) for (const name of failureClasses) failures[name] = 0;
    for (const sample of mine.filter((row) => row.series === 'failures')) {
      const name = named.has(sample.key) ? sample.key : 'other';
      failures[name] = (failures[name] ?? 0) + sample.sum;
    }
    const delivery: ChartPoint['delivery'] = {};
    for (const sample of mine.filter((row) => row.series === 'handed_over')) {
      const delivered = mine.find((row) => row.series === 'delivered' && row.key === sample.key);
      delivery[sample.key] = { handedOver: sample.last, delivered: delivered ? delivered.last : null };
    }
    return {
      at: start.toISOString(),
      pending,
      quarantined: one('quarantined')?.last ?? null,
      p50: one('latency_p50')?.max ?? null,
      p99: one('latency_p99')?.max ?? null,
      attempts: one('attempts')?.sum ?? null,
      claims: one('claims')?.sum ?? null,
      duplicates: one('duplicates')?.sum ?? null,
      wouldSuppress: one('would_suppress')?.sum ?? null,
      failures,
      delivery,
    };
  });
  return { points, failureClasses, deliveryKeys };
}

export async function loadOverviewCharts(db: DbOrTx, { now, range }: { now: Date; range: TimeRange }): Promise<ChartsOverview> {
  const { rangeMs } = timeRanges[range];
  const bucketMs = sampleBucketMs[range];
  const from = new Date(Math.floor((now.getTime() - rangeMs) / bucketMs) * bucketMs);
  const [samples, delivery] = await Promise.all([readBinnedSamples(db, { from, to: new Date(now.getTime() + 1), bucketMs }), readStoredDelivery(db)]);
  const latest = samples.reduce<Date | null>((max, sample) => (max === null || sample.bucket > max ? sample.bucket : max), null);
  return {
    range,
    bucketMs,
    generatedAt: now.toISOString(),
    sampledAt: delivery.at ? delivery.at.toISOString() : latest ? latest.toISOString() : null,
    ...foldSamples({ now, range, samples }),
    delivery: { at: delivery.at ? delivery.at.toISOString() : null, windowMs: DELIVERY_WINDOW_MS, rows: delivery.figures },
  };
}
