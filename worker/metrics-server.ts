import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '@/db/client';
import { countQuarantined } from '@/db/queries/ledger/read';
import { checkDatabase, type Check } from '@/lib/health';
import { bearerTokenMatches } from '@/lib/metrics/bearer-token';
import type { Logger } from '@/lib/log';
import { refreshDeliveryGauges } from '@/lib/metrics/delivery-gap';
import { refreshReplayGauges } from '@/lib/replay/outcome-gauges';
import { refreshPendingDeadlineGauges } from '@/lib/metrics/oldest-pending';
import { refreshWindowGauges } from '@/lib/metrics/windows';
import { refreshWebhookGauges } from '@/lib/metrics/webhooks';
import { deadLetteredWakeups, objectiveSeconds, quarantinedClaims, registry } from '@/lib/metrics/registry';
import type { QueueAdapter } from '@/lib/queue/types';

export type MetricsServer = { host: string; port: number; close: () => Promise<void> };

/** A failed read leaves the gauge at its last value: the scrape still answers with the rest. */
async function refreshGauges({ gauges, logger, read }: { gauges: string; logger: Logger; read: () => Promise<void> }): Promise<void> {
  try {
    await read();
  } catch (error) {
    logger.warn({ err: error instanceof Error ? error.message : String(error), gauges }, 'database gauge read failed; gauge not refreshed');
  }
}

/** The worker's readiness: its own database pool answers, and its queue connection is up. */
async function readiness({ db, queue }: { db: Db; queue: Pick<QueueAdapter, 'health'> }): Promise<{ ready: boolean; database: Check; queue: Check }> {
  const [database, queueState] = await Promise.all([
    checkDatabase(db),
    queue.health().catch((error: unknown) => ({ ok: false as const, reason: String(error) })),
  ]);
  return { ready: database.ok && queueState.ok, database, queue: queueState };
}

/**
 * GET /healthz (liveness: the process serves) and GET /readyz (200 with the state of the
 * database and the queue connection as JSON, 503 when either is down).
 *
 * GET /metrics in Prometheus text format, behind `Authorization: Bearer $WORKER_METRICS_TOKEN`
 * when that is set (checked before any gauge is read). The quarantine gauge (a partial-index count), the
 * oldest pending job against its deadline, the accepted-vs-delivered gauges, windows at risk and
 * open compliance gaps are read from the database at scrape time (the dead-lettered wake-ups from
 * the queue), so every worker
 * reports the same, current figures as the console's /api/metrics.
 */
export async function startMetricsServer({
  host,
  port,
  db,
  queue,
  quarantineAfterMs,
  windowAtRiskWithinMs,
  claimToCommitObjectiveMs,
  token,
  retryCeiling,
  logger,
}: {
  host: string;
  port: number;
  db: Db;
  queue: Pick<QueueAdapter, 'health' | 'deadLetteredCount'>;
  quarantineAfterMs: number;
  /** WINDOW_AT_RISK_WITHIN (default 24 h). */
  windowAtRiskWithinMs?: number;
  /** CLAIM_TO_COMMIT_OBJECTIVE, exported for the alert rule that compares the p99 with it; unset, no series. */
  claimToCommitObjectiveMs?: number;
  /** WORKER_METRICS_TOKEN: when set, /metrics answers only `Authorization: Bearer <token>` (the probes stay open). */
  token?: string;
  /** MAX_ATTEMPTS: a required notice retrying past it is at risk. */
  retryCeiling?: number;
  logger: Logger;
}): Promise<MetricsServer> {
  if (claimToCommitObjectiveMs !== undefined) objectiveSeconds.set({ objective: 'claim_to_commit_p99' }, claimToCommitObjectiveMs / 1000);
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' || (path !== '/metrics' && path !== '/healthz' && path !== '/readyz')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (path === '/healthz') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (path === '/readyz') {
      void readiness({ db, queue }).then(({ ready, ...state }) => {
        response
          .writeHead(ready ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
          .end(`${JSON.stringify({ status: ready ? 'ready' : 'not_ready', ...state })}\n`);
      });
      return;
    }
    if (token && !bearerTokenMatches(request.headers.authorization, token)) {
      response.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('unauthorized\n');
      return;
    }
    void (async () => {
      await Promise.all([
        refreshGauges({ gauges: 'quarantine', logger, read: async () => quarantinedClaims.set(await countQuarantined(db, { quarantineAfterMs })) }),
        refreshGauges({ gauges: 'delivery', logger, read: () => refreshDeliveryGauges(db) }),
        refreshGauges({ gauges: 'oldest pending', logger, read: () => refreshPendingDeadlineGauges(db) }),
        refreshGauges({ gauges: 'send windows', logger, read: () => refreshWindowGauges(db, { withinMs: windowAtRiskWithinMs, retryCeiling }) }),
        refreshGauges({ gauges: 'webhooks', logger, read: () => refreshWebhookGauges(db) }),
        refreshGauges({ gauges: 'replay outcomes', logger, read: () => refreshReplayGauges(db) }),
        refreshGauges({ gauges: 'dead letters', logger, read: async () => deadLetteredWakeups.set(await queue.deadLetteredCount()) }),
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
