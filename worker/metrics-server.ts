import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '../db/client';
import { countQuarantined } from '../db/queries/ledger';
import type { Logger } from '../lib/log';
import { quarantinedClaims, registry } from '../lib/metrics/registry';

export type MetricsServer = { host: string; port: number; close: () => Promise<void> };

/**
 * GET /metrics in Prometheus text format. The quarantine gauge is read from the ledger at
 * scrape time (a partial-index count), so every worker reports the same, current figure.
 */
export async function startMetricsServer({ host, port, db, quarantineAfterMs, logger }: { host: string; port: number; db: Db; quarantineAfterMs: number; logger: Logger }): Promise<MetricsServer> {
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
      try {
        quarantinedClaims.set(await countQuarantined(db, { olderThanMs: quarantineAfterMs }));
      } catch (error) {
        logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'quarantine count failed; gauge not refreshed');
      }
      try {
        const body = await registry.metrics();
        response.writeHead(200, { 'content-type': registry.contentType }).end(body);
      } catch {
        response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    const refuse = (error: NodeJS.ErrnoException) => reject(new Error(`the worker's metrics server cannot listen on ${host} port ${port} (WORKER_METRICS_HOST, WORKER_METRICS_PORT): ${error.code ?? error.message}`));
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
