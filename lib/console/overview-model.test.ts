import { describe, expect, it } from 'vitest';
import type { SeriesPoint } from '@/lib/api/console/overview';
import { bucketStarts, deriveAlerts, densify, describeCountedAt, emptyPoint, p99Rising } from './overview-model';

const now = new Date('2026-11-29T02:07:30Z');
const at = (offsetMs: number) => new Date(now.getTime() + offsetMs);

describe('when the bucket counts were counted', () => {
  it('names the instant and its age at this refresh', () => {
    const generatedAt = now.toISOString();
    expect(describeCountedAt({ countedAt: generatedAt, generatedAt })).toEqual({ asOf: 'as of 02:07:30 UTC', age: 'counted for this refresh' });
    expect(describeCountedAt({ countedAt: at(-20_400).toISOString(), generatedAt })).toEqual({
      asOf: 'as of 02:07:09 UTC',
      age: 'counted 20 s before this refresh',
    });
    expect(describeCountedAt({ countedAt: at(-5 * 60_000).toISOString(), generatedAt }).age).toBe('counted 5 min before this refresh');
  });
});

describe('series', () => {
  it('covers the range with epoch-aligned buckets', () => {
    const starts = bucketStarts({ now, range: '1h' });
    expect(starts[0]?.toISOString()).toBe('2026-11-29T01:05:00.000Z');
    expect(starts[starts.length - 1]?.toISOString()).toBe('2026-11-29T02:05:00.000Z');
    expect(starts).toHaveLength(13);
  });

  it('densifies sparse rows and merges attempt and provider rows for one bucket', () => {
    const points = densify({
      now,
      range: '1h',
      rows: [
        { at: '2026-11-29T01:35:00.000Z', claims: 3 },
        { at: '2026-11-29T01:35:00.000Z', delivered: 2 },
      ],
    });
    expect(points).toHaveLength(13);
    expect(points.find((point) => point.at === '2026-11-29T01:35:00.000Z')).toMatchObject({ claims: 3, delivered: 2, duplicates: 0 });
    expect(points[0]).toEqual(emptyPoint('2026-11-29T01:05:00.000Z'));
  });
});

function series(p99s: (number | null)[]): SeriesPoint[] {
  return p99s.map((p99, index) => ({ ...emptyPoint(new Date(index * 60_000).toISOString()), p99 }));
}

describe('alerts', () => {
  it('calls p99 rising only when the latest doubles a stable baseline above 250 ms', () => {
    expect(p99Rising(series([100, 110, 90, 400]))).toBe(true);
    expect(p99Rising(series([100, 110, 90, 150]))).toBe(false);
    expect(p99Rising(series([10, 12, 9, 200]))).toBe(false);
    expect(p99Rising(series([100, null, 400]))).toBe(false);
    expect(p99Rising(series([100, 120, null, 95, 500, null]))).toBe(true);
  });

  it('raises quarantine as critical and names the count', () => {
    const alerts = deriveAlerts({ quarantined: 3, nearDeadline: 1, series: series([]) });
    expect(alerts.map((alert) => [alert.id, alert.severity])).toEqual([
      ['quarantine', 'critical'],
      ['deadline', 'warning'],
    ]);
    expect(alerts[0]?.message).toMatch(/^3 claims are stuck/);
    expect(deriveAlerts({ quarantined: 0, nearDeadline: 0, series: series([1, 1, 1, 1]) })).toEqual([]);
  });

  it('raises compliance gaps as critical, windows at risk and missed as warnings, each linking the Windows page', () => {
    const windows = { atRisk: 2, missed24h: 1, gaps: 1, atRiskWithinMs: 24 * 3_600_000 };
    const alerts = deriveAlerts({ quarantined: 0, nearDeadline: 0, series: series([]), windows });
    expect(alerts.map((alert) => [alert.id, alert.severity, alert.href])).toEqual([
      ['compliance_gap', 'critical', '/windows?tab=gaps'],
      ['window_at_risk', 'warning', '/windows'],
      ['window_missed', 'warning', '/windows?tab=missed'],
    ]);
    expect(alerts[0]?.message).toMatch(/^1 required notice could not be planned/);
    expect(alerts[1]?.message).toMatch(/^2 notices are due, not sent yet, and their send window closes within 24 h/);
    expect(deriveAlerts({ quarantined: 0, nearDeadline: 0, series: series([]), windows: { ...windows, atRisk: 0, missed24h: 0, gaps: 0 } })).toEqual([]);
  });
});
