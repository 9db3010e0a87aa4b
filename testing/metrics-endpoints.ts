import type { Db } from '@/db/client';
import { createLogger } from '@/lib/log';
import type { QueueAdapter } from '@/lib/queue/types';
import { startMetricsServer } from '@/worker/metrics-server';

/**
 * What the two /metrics endpoints answer, for tests that read the exposition as Prometheus
 * would: the worker's metrics server, listening and fetched over HTTP, and the console's
 * /api/metrics route handler. The caller sets DATABASE_URL and METRICS_TOKEN (the console's
 * settings) and resets the config before calling.
 */
/**
 * For tests of /metrics only: the queue's state shows in /readyz alone, which these tests do
 * not read (worker/probes.test.ts runs a real worker for that).
 */
export const queueNotUnderTest: Pick<QueueAdapter, 'health' | 'deadLetteredCount'> = { health: async () => ({ ok: true }), deadLetteredCount: async () => 0 };

export async function scrapeWorkerMetrics(db: Db): Promise<string> {
  const server = await startMetricsServer({
    host: '127.0.0.1',
    port: 0,
    db,
    queue: queueNotUnderTest,
    quarantineAfterMs: 15 * 60_000,
    claimToCommitObjectiveMs: 250,
    logger: createLogger('scrape-test', 'silent'),
  });
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    if (response.status !== 200) throw new Error(`the worker's /metrics answered ${response.status}`);
    return await response.text();
  } finally {
    await server.close();
  }
}

export async function scrapeConsoleMetrics(token: string): Promise<string> {
  const { GET } = await import('@/app/api/metrics/route');
  const response = await GET(new Request('http://console.test/api/metrics', { headers: { authorization: `Bearer ${token}` } }));
  if (response.status !== 200) throw new Error(`the console's /api/metrics answered ${response.status}`);
  return response.text();
}

/**
 * Every series name an exposition can carry: each `# TYPE` family, and for histograms and
 * summaries the `_bucket` / `_sum` / `_count` series Prometheus stores instead of the family.
 */
export function exportedSeriesNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name = '', type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    else if (type === 'summary') for (const suffix of ['', '_sum', '_count']) names.add(`${name}${suffix}`);
    else names.add(name);
  }
  return names;
}
