import type { Db } from '@/db/client';
import { config as processConfig, processEnv, type Config } from '@/lib/config';
import type { Logger } from '@/lib/log';
import { createPgBossQueue } from './pgboss';
import { createRabbitQueue } from './rabbitmq';
import type { QueueAdapter } from './types';

export type CreateQueueParams = {
  config: Pick<Config, 'QUEUE_BACKEND' | 'VISIBILITY_TIMEOUT' | 'AMQP_URL'> &
    Partial<Pick<Config, 'QUEUE_NAME' | 'QUEUE_POLL_INTERVAL' | 'QUEUE_HORIZON' | 'QUEUE_DELIVERY_LIMIT' | 'QUEUE_CONNECT_WAIT'>>;
  /** The PostgreSQL URL: pg-boss keeps its own schema there. */
  databaseUrl: string;
  /** The dispatcher reads jobs coming within the horizon from here; without it this process does not dispatch. */
  db?: Db;
  queueName?: string;
  logger?: Logger;
  /**
   * `worker` (default) consumes; `publisher` is the console's: pg-boss without expiry
   * maintenance on a pool of two, RabbitMQ connecting only when a publish must reach it.
   */
  role?: 'worker' | 'publisher';
};

/**
 * The adapter QUEUE_BACKEND names, for every process: the worker, the console's publisher,
 * the CLI. Call `start()` on it before publishing or consuming.
 */
export function createQueue({ config, databaseUrl, db, queueName: explicitName, logger, role = 'worker' }: CreateQueueParams): QueueAdapter {
  const queueName = explicitName ?? config.QUEUE_NAME;
  const publisher = role === 'publisher';
  if (config.QUEUE_BACKEND === 'pgboss') {
    return createPgBossQueue({
      url: databaseUrl,
      visibilityTimeoutMs: config.VISIBILITY_TIMEOUT,
      queueName,
      logger,
      pollingIntervalMs: config.QUEUE_POLL_INTERVAL,
      horizonMs: config.QUEUE_HORIZON,
      db,
      ...(publisher ? { supervise: false, poolSize: 2 } : {}),
    });
  }
  if (!config.AMQP_URL) throw new Error('AMQP_URL is required when QUEUE_BACKEND=rabbitmq');
  // Without a database this process publishes and consumes but does not dispatch due jobs.
  return createRabbitQueue({
    url: config.AMQP_URL,
    visibilityTimeoutMs: config.VISIBILITY_TIMEOUT,
    queueName,
    db,
    logger,
    connectOnDemand: publisher,
    deliveryLimit: config.QUEUE_DELIVERY_LIMIT,
    connectWaitMs: config.QUEUE_CONNECT_WAIT,
  });
}

let publisher: Promise<QueueAdapter> | undefined;

/**
 * The console's publisher (scheduling), one per process. With pg-boss the wake-ups of jobs due
 * within the horizon commit with the job rows; later ones, and every one with RabbitMQ, are
 * published by the workers' dispatcher. Replays are published by the workers (lib/replay/runner.ts), not here.
 */
export function getWakeupPublisher(): Promise<QueueAdapter> {
  publisher ??= (async () => {
    const settings = processConfig();
    const databaseUrl = processEnv.databaseUrl();
    if (!databaseUrl) throw new Error('DATABASE_URL is not set: start through `npm run demo` or set DATABASE_URL');
    const queue = createQueue({ config: settings, databaseUrl, queueName: settings.QUEUE_NAME, role: 'publisher' });
    await queue.start();
    return queue;
  })().catch((error: unknown) => {
    publisher = undefined;
    throw error;
  });
  return publisher;
}

export async function closeWakeupPublisher(): Promise<void> {
  const current = publisher;
  publisher = undefined;
  const queue = await current?.catch(() => null);
  await queue?.stop();
}
