import type { Db } from '@/db/client';
import { countQuarantined } from '@/db/queries/ledger/read';
import { countPendingByDueBucket } from '@/db/queries/overview';
import { insertSamples, latestSampleAt, pruneSamples, summariseAttempts, tryLockSampleWriter, type SampleRow } from '@/db/queries/overview-samples';
import type { Logger } from '@/lib/log';
import { startPeriodic, type PeriodicHandle } from '@/lib/periodic';
import { deliverySamples, measureDelivery } from './delivery-gap';

/**
 * The overview's charts over time: every OVERVIEW_SAMPLE_EVERY one worker writes a sample to
 * overview_samples, so a page view reads a few stored rows and never the ledger. Every worker
 * runs the timer; a transaction-scoped advisory lock and "a sample younger than half the period
 * exists" keep several workers from writing the same points. Nothing on the send path.
 *
 * What a sample holds (db/schema/overview-samples.ts): the levels now (pending by due bucket,
 * quarantined), the attempts of the interval since the previous sample (count, claim-to-commit
 * p50/p99, failures by error class), the delivery figures (./delivery-gap.ts) and what the
 * sample cost to take (`writer_ms`).
 */
export const OVERVIEW_WRITER_LOCK = 727_277;

/**
 * Attempts are sampled up to this long before the sample: an attempt row is written when it
 * ends, stamped with when it started, so the newest seconds are not complete yet.
 */
export const ATTEMPT_LAG_MS = 30_000;
/** After a gap (no worker ran), the first interval is at most this long: the chart shows the gap, not one tall bar. */
const MAX_INTERVAL_MS = 10 * 60_000;

export type OverviewSampleSettings = {
  everyMs: number;
  retentionMs: number;
  quarantineAfterMs: number;
  emailProvider: string;
  noticeTypes: readonly string[];
};

export type SampleOutcome = { written: true; rows: number; ms: number } | { written: false; reason: 'locked' | 'recent' };

export async function writeOverviewSample(db: Db, { now, settings }: { now: Date; settings: OverviewSampleSettings }): Promise<SampleOutcome> {
  const started = performance.now();
  return db.transaction(async (tx): Promise<SampleOutcome> => {
    if (!(await tryLockSampleWriter(tx, OVERVIEW_WRITER_LOCK))) return { written: false, reason: 'locked' };
    const last = await latestSampleAt(tx);
    if (last && now.getTime() - last.getTime() < settings.everyMs / 2) return { written: false, reason: 'recent' };
    const spanMs = last ? Math.min(now.getTime() - last.getTime(), MAX_INTERVAL_MS) : settings.everyMs;
    const to = new Date(now.getTime() - ATTEMPT_LAG_MS);
    const from = new Date(to.getTime() - spanMs);

    const pending = await countPendingByDueBucket(tx, { now, noticeTypes: settings.noticeTypes });
    const quarantined = await countQuarantined(tx, { quarantineAfterMs: settings.quarantineAfterMs });
    const attempts = await summariseAttempts(tx, { from, to });
    const delivery = await measureDelivery(tx, { now, emailProvider: settings.emailProvider });

    const byBucket = new Map<string, number>();
    for (const row of pending) byBucket.set(row.bucket, (byBucket.get(row.bucket) ?? 0) + row.count);
    const rows: SampleRow[] = [
      ...[...byBucket].map(([bucket, count]) => ({ at: now, series: 'pending', key: bucket, value: count })),
      { at: now, series: 'quarantined', key: '', value: quarantined },
      { at: now, series: 'attempts', key: '', value: attempts.attempts },
      { at: now, series: 'claims', key: '', value: attempts.claims },
      { at: now, series: 'duplicates', key: '', value: attempts.duplicates },
      { at: now, series: 'would_suppress', key: '', value: attempts.wouldSuppress },
      ...(attempts.p50 === null ? [] : [{ at: now, series: 'latency_p50', key: '', value: attempts.p50 }]),
      ...(attempts.p99 === null ? [] : [{ at: now, series: 'latency_p99', key: '', value: attempts.p99 }]),
      ...attempts.failures.map((failure) => ({ at: now, series: 'failures', key: failure.errorClass, value: failure.count })),
      ...deliverySamples(now, delivery),
    ];
    const ms = Math.round(performance.now() - started);
    rows.push({ at: now, series: 'writer_ms', key: '', value: ms });
    await insertSamples(tx, rows);
    await pruneSamples(tx, { before: new Date(now.getTime() - settings.retentionMs) });
    return { written: true, rows: rows.length, ms };
  });
}

export function startOverviewWriter({
  db,
  settings,
  logger,
  clock = () => new Date(),
}: {
  db: Db;
  settings: OverviewSampleSettings;
  logger: Logger;
  clock?: () => Date;
}): PeriodicHandle {
  return startPeriodic({
    every: settings.everyMs,
    runAtStart: true,
    run: async () => {
      const outcome = await writeOverviewSample(db, { now: clock(), settings });
      if (outcome.written) logger.debug({ rows: outcome.rows, ms: outcome.ms }, 'overview sample written');
    },
    onError: (error) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'overview sample failed'),
  });
}
