import { timingSafeEqual, createHash } from 'node:crypto';
import { Gauge } from 'prom-client';
import type { DbOrTx } from '@/db/client';
import { countQuarantined } from '@/db/queries/ledger/read';
import { refreshDeliveryGauges } from '@/lib/metrics/delivery-gap';
import { refreshReplayGauges } from '@/lib/replay/outcome-gauges';
import { refreshPendingDeadlineGauges } from '@/lib/metrics/oldest-pending';
import { refreshWindowGauges } from '@/lib/metrics/windows';
import { quarantinedClaims, registry } from '@/lib/metrics/registry';
import { PENDING_FRESH_MS, PENDING_SERVE_STALE_MS } from './overview-model';
import { loadPendingCounts, type LoadPendingCountsOptions } from './pending-counts';

const PENDING_NAME = 'notice_ledger_pending_jobs';
const PENDING_AGE_NAME = 'notice_ledger_pending_counted_age_seconds';

function pendingGauge(): Gauge<'notice_type' | 'due_bucket'> {
  const existing = registry.getSingleMetric(PENDING_NAME);
  if (existing instanceof Gauge) return existing as Gauge<'notice_type' | 'due_bucket'>;
  return new Gauge({
    name: PENDING_NAME,
    help: `Pending reminder jobs by notice type and due-time bucket, exact as of ${PENDING_AGE_NAME} ago.`,
    labelNames: ['notice_type', 'due_bucket'] as const,
    registers: [registry],
  });
}

function pendingAgeGauge(): Gauge {
  const existing = registry.getSingleMetric(PENDING_AGE_NAME);
  if (existing instanceof Gauge) return existing as Gauge;
  return new Gauge({
    name: PENDING_AGE_NAME,
    help: `Seconds since ${PENDING_NAME} was counted (pending_due_snapshot: recounted once older than ${PENDING_FRESH_MS / 1000} s; one older than ${PENDING_SERVE_STALE_MS / 1000} s is recounted before it is served).`,
    registers: [registry],
  });
}

export type RenderConsoleMetricsOptions = { quarantineAfterMs: number; windowAtRiskWithinMs?: number; retryCeiling?: number; now?: Date } & Pick<
  LoadPendingCountsOptions,
  'recountLater' | 'clock'
>;

/**
 * Reads the database-derived gauges at scrape time (quarantine, pending, oldest pending against
 * its deadline, accepted vs delivered, windows at risk, compliance gaps), then renders the whole registry. The
 * pending-by-due-bucket figure is the overview's shared snapshot (lib/console/pending-counts.ts),
 * under the same freshness rules: a fresh one is read (one row), a stale one is served and
 * recounted after the response, only a missing or long-stale one is counted while the scraper
 * waits. Its age is a gauge of its own, so an alert can tell a stale figure from a quiet queue.
 */
export async function renderConsoleMetrics(
  db: DbOrTx,
  { quarantineAfterMs, windowAtRiskWithinMs, retryCeiling, now = new Date(), recountLater, clock }: RenderConsoleMetricsOptions,
): Promise<string> {
  const [quarantined, snapshot] = await Promise.all([
    countQuarantined(db, { quarantineAfterMs }),
    loadPendingCounts(db, { now, recountLater, clock }),
    refreshDeliveryGauges(db, { now }),
    refreshReplayGauges(db),
    refreshPendingDeadlineGauges(db, { now }),
    refreshWindowGauges(db, { now, withinMs: windowAtRiskWithinMs, retryCeiling }),
  ]);
  quarantinedClaims.set(quarantined);
  const gauge = pendingGauge();
  gauge.reset();
  for (const row of snapshot.counts) gauge.set({ notice_type: row.noticeType, due_bucket: row.bucket }, row.count);
  // A snapshot stamped a little ahead (another host's clock) is as fresh as it gets: 0, not negative.
  pendingAgeGauge().set(Math.max(0, now.getTime() - snapshot.countedAt.getTime()) / 1000);
  return registry.metrics();
}

/** Compares digests so the comparison takes the same time whatever the presented token's length. */
export function metricsTokenMatches(presented: string | null, expected: string): boolean {
  if (!presented) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}
