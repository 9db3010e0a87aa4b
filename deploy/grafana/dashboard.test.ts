import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { exportedSeriesNames, scrapeConsoleMetrics, scrapeWorkerMetrics } from '@/testing/metrics-endpoints';

/**
 * The Grafana dashboard against what the project really exports: every metric name in every
 * panel's PromQL must be a series the worker's or the console's /metrics serves (scraped here,
 * not listed by hand), so a renamed metric breaks this test instead of a panel going blank.
 */

type Target = { expr?: string; datasource?: unknown };
type Panel = { title?: string; type?: string; datasource?: unknown; targets?: Target[]; panels?: Panel[] };

const dashboard = JSON.parse(readFileSync(path.join(import.meta.dirname, 'notice-ledger.json'), 'utf8')) as {
  uid: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: string }> };
};
const token = 'dashboard-token-0123456789';
/** Series Prometheus writes itself for every target: not exported by anyone, always there. */
const synthesized = new Set(['up']);

const keywords = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'offset', 'bool', 'inf', 'nan']);

/** Metric names a PromQL expression selects: identifiers that are not functions, keywords, labels or durations. */
function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  // Whole identifiers only: a name directly before `(` is a function (sum, rate, …), not a metric.
  return [...stripped.matchAll(/(?<![\w:$.])[A-Za-z_:][\w:]*/g)]
    .filter((match) => !/^\s*\(/.test(stripped.slice((match.index ?? 0) + match[0].length)))
    .map((match) => match[0])
    .filter((name) => !keywords.has(name.toLowerCase()));
}

function panelsOf(panels: Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...panelsOf(panel.panels ?? [])]);
}

let t: TestDatabase;
let exported: Set<string>;

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  process.env.METRICS_TOKEN = token;
  const worker = exportedSeriesNames(await scrapeWorkerMetrics(t.db));
  const consoleNames = exportedSeriesNames(await scrapeConsoleMetrics(token));
  exported = new Set([...worker, ...consoleNames]);
});
afterAll(async () => {
  delete process.env.METRICS_TOKEN;
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
});

describe('the PromQL name reader', () => {
  it('finds selected metrics, not functions, keywords, labels, durations or grouping lists', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.99, sum by (le) (rate(a_seconds_bucket{job="x", le!="+Inf"}[$__rate_interval]))) / on (job) group_left b_total offset 1d > bool 2 and up{job="w"}',
      ),
    ).toEqual(['a_seconds_bucket', 'b_total', 'up']);
    expect(metricNamesIn('sum without (instance, job) (max(notice_ledger:rule:p99_10m)) or vector(0)')).toEqual(['notice_ledger:rule:p99_10m']);
  });
});

describe('deploy/grafana/notice-ledger.json', () => {
  const panels = panelsOf(dashboard.panels);
  const targets = panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title ?? '', target })));

  it('is provisionable: a uid, and every query on the Prometheus data source variable', () => {
    expect(dashboard.uid).toBe('notice-ledger');
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
    expect(targets.length).toBeGreaterThan(10);
    for (const { panel, target } of targets) expect(target.datasource, panel).toEqual({ type: 'prometheus', uid: '${datasource}' });
  });

  it('every metric a panel queries is one the worker or the console exports', () => {
    expect(exported).toContain('notice_ledger_claim_to_commit_seconds_bucket');
    expect(exported).toContain('notice_ledger_pending_jobs');
    const unknown: string[] = [];
    for (const { panel, target } of targets) {
      const names = metricNamesIn(target.expr ?? '');
      expect(names.length, `${panel}: ${target.expr}`).toBeGreaterThan(0);
      for (const name of names) if (!exported.has(name) && !synthesized.has(name)) unknown.push(`${panel}: ${name}`);
    }
    expect(unknown).toEqual([]);
  });

  it("shows the overview's figures", () => {
    const queried = new Set(targets.flatMap(({ target }) => metricNamesIn(target.expr ?? '')));
    for (const name of [
      'notice_ledger_pending_jobs',
      'notice_ledger_quarantined_claims',
      'notice_ledger_claim_to_commit_seconds_bucket',
      'notice_ledger_duplicates_suppressed_total',
      'notice_ledger_send_outcomes_total',
      'notice_ledger_provider_messages',
      'notice_ledger_delivery_gap',
      'notice_ledger_oldest_pending_age_seconds',
    ])
      expect(queried, name).toContain(name);
  });
});
