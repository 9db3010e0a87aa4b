import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROMTOOL_MISSING, promtool, runPromtool } from '@/testing/promtool';

/**
 * The alert rules as Prometheus loads them (`promtool check rules`) and against their unit tests
 * (`promtool test rules`); and, without promtool, that every alert has a case that fires and one
 * that must not, a runbook on a console page that exists, and a line in the README.
 */

const root = path.resolve(import.meta.dirname, '..', '..');
const here = import.meta.dirname;
const rules = readFileSync(path.join(here, 'alerts.yml'), 'utf8');
const tests = readFileSync(path.join(here, 'alerts.test.yml'), 'utf8');
const alerts = [...rules.matchAll(/^\s*- alert: (\w+)$/gm)].map((match) => match[1] ?? '');

describe('Prometheus alert rules', () => {
  it.skipIf(!promtool)(`promtool check rules accepts deploy/prometheus/alerts.yml (${PROMTOOL_MISSING})`, () => {
    const run = runPromtool(['check', 'rules', 'alerts.yml'], { cwd: here });
    expect(run.output).toContain(`SUCCESS: ${alerts.length + 3} rules found`);
    expect(run.code).toBe(0);
  });

  it.skipIf(!promtool)(`promtool test rules passes deploy/prometheus/alerts.test.yml (${PROMTOOL_MISSING})`, () => {
    const run = runPromtool(['test', 'rules', 'alerts.test.yml'], { cwd: here });
    expect(run.output).toContain('SUCCESS');
    expect(run.code, run.output).toBe(0);
  });

  it('every alert has a unit test where it fires and one where it must not', () => {
    expect(alerts.length).toBeGreaterThanOrEqual(6);
    const firing = new Set([...tests.matchAll(/alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels:/g)].map((match) => match[1]));
    const silent = new Set([...tests.matchAll(/alertname: (\w+), exp_alerts: \[\] \}/g)].map((match) => match[1]));
    for (const alert of alerts) {
      expect(firing.has(alert), `${alert} has no case where it fires`).toBe(true);
      expect(silent.has(alert), `${alert} has no case where it must not fire`).toBe(true);
    }
  });

  it("every alert's runbook is a console page that exists, under the console_url external label", () => {
    const runbooks = [...rules.matchAll(/^\s+runbook: '(.*)'$/gm)].map((match) => match[1] ?? '');
    expect(runbooks).toHaveLength(alerts.length);
    for (const runbook of runbooks) {
      const page = /^\{\{ \$externalLabels\.console_url \}\}(\/[a-z/]*)(\?range=(1h|6h|24h|7d))?$/.exec(runbook)?.[1];
      expect(page, runbook).toBeDefined();
      expect(existsSync(path.join(root, 'app/(console)', page ?? '', 'page.tsx')), runbook).toBe(true);
    }
  });

  it('README lists every alert by its exact name', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    for (const alert of alerts) expect(readme, alert).toMatch(new RegExp(`^\\| \`${alert}\` \\|`, 'm'));
  });
});
