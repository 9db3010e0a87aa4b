import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '@/db/client';
import { countQuarantined } from '@/db/queries/ledger/read';
import type { Logger } from '@/lib/log';
import { refreshDeliveryGauges } from '@/lib/metrics/delivery-gap';
import { refreshPendingDeadlineGauges } from '@/lib/metrics/oldest-pending';
import { quarantinedClaims, registry } from '@/lib/metrics/registry';

export type MetricsServer = { host: string; port: number; close: () => Promise<void> };

/** A failed read leaves the gauge at its last value: the scrape still answers with the rest. */
async function refreshGauges({ gauges, logger, read }: { gauges: string; logger: Logger; read: () => Promise<void> }): Promise<void> {
  try {
    await read();
  } catch (error) {
    logger.warn({ err: error instanceof Error ? error.message : String(error), gauges }, 'database gauge read failed; gauge not refreshed');
  }
}

/**
 * GET /metrics in Prometheus text format. The quarantine gauge (a partial-index count), the
 * oldest pending job against its deadline and the accepted-vs-delivered gauges are read from the database at scrape time, so every worker
 * reports the same, current figures as the console's /api/metrics.
 */
export async function startMetricsServer({
  host,
  port,
  db,
  quarantineAfterMs,
  logger,
}: {
  host: string;
  port: number;
  db: Db;
  quarantineAfterMs: number;
  logger: Logger;
}): Promise<MetricsServer> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' || (path !== '/metrics' && path !== '/healthz')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (path === '/healthz') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    void (async () => {
      await Promise.all([
        refreshGauges({ gauges: 'quarantine', logger, read: async () => quarantinedClaims.set(await countQuarantined(db, { quarantineAfterMs })) }),
        refreshGauges({ gauges: 'delivery', logger, read: () => refreshDeliveryGauges(db) }),
        refreshGauges({ gauges: 'oldest pending', logger, read: () => refreshPendingDeadlineGauges(db) }),
      ]);
      try {
        const body = await registry.metrics();
        response.writeHead(200, { 'content-type': registry.contentType }).end(body);
      } catch {
        response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    const refuse = (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `the worker's metrics server cannot listen on ${host} port ${port} (WORKER_METRICS_HOST, WORKER_METRICS_PORT): ${error.code ?? error.message}`,
        ),
      );
    server.once('error', refuse);
    server.listen(port, host, () => {
      server.off('error', refuse);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  return {
    host: bound.address,
    port: bound.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
