import { timingSafeEqual, createHash } from 'node:crypto';
import { Gauge } from 'prom-client';
import type { DbOrTx } from '@/db/client';
import { countPendingByDueBucket } from '@/db/queries/overview';
import { countQuarantined } from '@/db/queries/quarantine';
import { noticeTypeNames } from '@/lib/ledger/notice-types';
import { quarantinedClaims, registry } from '@/lib/metrics/registry';

const PENDING_NAME = 'notice_ledger_pending_jobs';

function pendingGauge(): Gauge<'notice_type' | 'due_bucket'> {
  const existing = registry.getSingleMetric(PENDING_NAME);
  if (existing instanceof Gauge) return existing as Gauge<'notice_type' | 'due_bucket'>;
  return new Gauge({ name: PENDING_NAME, help: 'Pending reminder jobs by notice type and due-time bucket.', labelNames: ['notice_type', 'due_bucket'] as const, registers: [registry] });
}

/** Reads the database-derived gauges at scrape time, then renders the whole registry. */
export async function renderConsoleMetrics(db: DbOrTx, { quarantineAfterMs, now = new Date() }: { quarantineAfterMs: number; now?: Date }): Promise<string> {
  const [quarantined, pending] = await Promise.all([countQuarantined(db, { quarantineAfterMs }), countPendingByDueBucket(db, { now, noticeTypes: noticeTypeNames })]);
  quarantinedClaims.set(quarantined);
  const gauge = pendingGauge();
  gauge.reset();
  for (const row of pending) gauge.set({ notice_type: row.noticeType, due_bucket: row.bucket }, row.count);
  return registry.metrics();
}

/** Compares digests so the comparison takes the same time whatever the presented token's length. */
export function metricsTokenMatches(presented: string | null, expected: string): boolean {
  if (!presented) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}
