import { timeRanges, type Alert, type SeriesPoint, type TimeRange } from '@/lib/api/console/overview';

/**
 * The overview's arithmetic, free of SQL and React so it is unit-tested alone: which attempt
 * outcomes count as what, and when to raise the banner. Its vocabulary (time ranges, due-time
 * buckets) is the contract's, lib/api/console/overview.ts.
 */

/** Bucket counts younger than this are served without a recount. The overview refetches every 15 s. */
export const PENDING_FRESH_MS = 15_000;
/** Older than this (or absent): counted before answering; in between: served, then recounted after the response. */
export const PENDING_SERVE_STALE_MS = 60_000;

/**
 * The bucket counts come from a snapshot (lib/console/pending-counts.ts), so the page says
 * when they were counted: "as of 02:07:30 UTC · counted 20 s before this refresh". Both
 * instants come from the server, so the server render and the client render say the same.
 */
export function describeCountedAt({ countedAt, generatedAt }: { countedAt: string; generatedAt: string }): { asOf: string; age: string } {
  const ageMs = new Date(generatedAt).getTime() - new Date(countedAt).getTime();
  const asOf = `as of ${new Date(countedAt).toISOString().slice(11, 19)} UTC`;
  if (ageMs < 1_000) return { asOf, age: 'counted for this refresh' };
  const seconds = Math.floor(ageMs / 1_000);
  const age = seconds < 120 ? `${seconds} s` : `${Math.floor(seconds / 60)} min`;
  return { asOf, age: `counted ${age} before this refresh` };
}

/** Attempts in which a ledger claim was written before the send (the row was minted or re-claimed). */
export const CLAIM_OUTCOMES = ['sent', 'retryable_failure', 'permanent_failure', 'unknown'] as const;
/** A pending job this close to its deadline raises the banner. */
export const NEAR_DEADLINE_MS = 3_600_000;

export function emptyPoint(at: string): SeriesPoint {
  return { at, p50: null, p99: null, claims: 0, duplicates: 0, wouldSuppress: 0, retryable: 0, permanent: 0, accepted: 0, delivered: 0 };
}

/** Bucket starts aligned to the epoch, covering [now - range, now]. */
export function bucketStarts({ now, range }: { now: Date; range: TimeRange }): Date[] {
  const { rangeMs, bucketMs } = timeRanges[range];
  const last = Math.floor(now.getTime() / bucketMs) * bucketMs;
  const first = Math.floor((now.getTime() - rangeMs) / bucketMs) * bucketMs;
  const starts: Date[] = [];
  for (let at = first; at <= last; at += bucketMs) starts.push(new Date(at));
  return starts;
}

/** Merges sparse rows from SQL into a dense series so charts show gaps as zero, not as missing time. */
export function densify({ now, range, rows }: { now: Date; range: TimeRange; rows: Partial<SeriesPoint>[] }): SeriesPoint[] {
  const byTime = new Map<number, Partial<SeriesPoint>>();
  for (const row of rows) {
    if (!row.at) continue;
    const time = new Date(row.at).getTime();
    byTime.set(time, { ...byTime.get(time), ...row });
  }
  return bucketStarts({ now, range }).map((start) => {
    const found = byTime.get(start.getTime());
    return { ...emptyPoint(start.toISOString()), ...found, at: start.toISOString() };
  });
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? null) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/**
 * p99 is "rising" when the latest bucket with data is at least twice the median of the
 * earlier buckets (at least three of them) and above 250 ms: a doubling of the crash window
 * is worth a look, jitter around a few milliseconds is not.
 */
export function p99Rising(series: SeriesPoint[]): boolean {
  const values = series.map((point) => point.p99).filter((value): value is number => value !== null);
  if (values.length < 4) return false;
  const latest = values[values.length - 1] ?? 0;
  const baseline = median(values.slice(0, -1));
  return baseline !== null && latest >= 250 && latest >= baseline * 2;
}

/** Send windows, for the banner: what is at risk within `atRiskWithinMs`, missed in the last 24 h, open compliance gaps. */
export type WindowAlertFigures = { atRisk: number; missed24h: number; gaps: number; atRiskWithinMs: number };

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

export function deriveAlerts({
  quarantined,
  nearDeadline,
  series,
  windows,
}: {
  quarantined: number;
  nearDeadline: number;
  series: SeriesPoint[];
  windows?: WindowAlertFigures;
}): Alert[] {
  const alerts: Alert[] = [];
  if (windows && windows.gaps > 0) {
    alerts.push({
      id: 'compliance_gap',
      severity: 'critical',
      message: `${plural(windows.gaps, 'required notice', 'required notices')} could not be planned inside the window the law allows (compliance ${windows.gaps === 1 ? 'gap' : 'gaps'}): send by other means or take counsel, then resolve with the reason.`,
      href: '/windows?tab=gaps',
    });
  }
  if (quarantined > 0) {
    alerts.push({
      id: 'quarantine',
      severity: 'critical',
      message: `${quarantined} claim${quarantined === 1 ? ' is' : 's are'} stuck in quarantine: read the provider evidence and resolve ${quarantined === 1 ? 'it' : 'them'}.`,
      href: '/quarantine',
    });
  }
  if (nearDeadline > 0) {
    alerts.push({
      id: 'deadline',
      severity: 'warning',
      message: `${nearDeadline} pending notice${nearDeadline === 1 ? ' is' : 's are'} due and within an hour of the deadline: check the worker is running.`,
      href: '/',
    });
  }
  if (windows && windows.atRisk > 0) {
    alerts.push({
      id: 'window_at_risk',
      severity: 'warning',
      message: `${plural(windows.atRisk, 'notice is', 'notices are')} due, not sent yet, and ${windows.atRisk === 1 ? 'its' : 'their'} send window closes within ${Math.round(windows.atRiskWithinMs / 3_600_000)} h: check the worker and the provider are keeping up.`,
      href: '/windows',
    });
  }
  if (windows && windows.missed24h > 0) {
    alerts.push({
      id: 'window_missed',
      severity: 'warning',
      message: `${plural(windows.missed24h, 'notice', 'notices')} missed ${windows.missed24h === 1 ? 'its' : 'their'} send window in the last 24 h and will not be sent.`,
      href: '/windows?tab=missed',
    });
  }
  if (p99Rising(series)) {
    alerts.push({
      id: 'p99',
      severity: 'warning',
      message: 'Claim-to-commit p99 is rising: sends are slowing down and the crash window is widening.',
      href: '/',
    });
  }
  return alerts;
}
