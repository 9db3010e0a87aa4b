import type { Db } from '../../db/client';
import { config as processConfig, type Config } from '../config';
import type { Logger } from '../log';
import { createPgBossQueue, type PgBossQueue } from './pgboss';
import { createRabbitQueue } from './rabbitmq';
import type { QueueAdapter } from './types';

export type CreateQueueParams = {
  config: Pick<Config, 'QUEUE_BACKEND' | 'VISIBILITY_TIMEOUT' | 'AMQP_URL'> & Partial<Pick<Config, 'QUEUE_NAME' | 'QUEUE_POLL_INTERVAL'>>;
  /** The PostgreSQL URL: pg-boss keeps its own schema there. */
  databaseUrl: string;
  /** RabbitMQ's dispatcher reads due jobs from here; pg-boss ignores it. */
  db?: Db;
  queueName?: string;
  logger?: Logger;
};

/** The adapter QUEUE_BACKEND names. Call `start()` on it before publishing or consuming. */
export function createQueue({ config, databaseUrl, db, queueName: explicitName, logger }: CreateQueueParams): QueueAdapter {
  const queueName = explicitName ?? config.QUEUE_NAME;
  if (config.QUEUE_BACKEND === 'pgboss') {
    return createPgBossQueue({ url: databaseUrl, visibilityTimeoutMs: config.VISIBILITY_TIMEOUT, queueName, logger, pollingIntervalMs: config.QUEUE_POLL_INTERVAL });
  }
  if (!config.AMQP_URL) throw new Error('AMQP_URL is required when QUEUE_BACKEND=rabbitmq');
  // Without a database this process publishes and consumes but does not dispatch due jobs.
  return createRabbitQueue({ url: config.AMQP_URL, visibilityTimeoutMs: config.VISIBILITY_TIMEOUT, queueName, db, logger });
}

let publisher: Promise<PgBossQueue | null> | undefined;

/**
 * The web process's publisher for in-transaction wake-ups. pg-boss only: with RabbitMQ the
 * workers' dispatcher publishes once a job is due, so the web app needs no broker connection.
 */
export function getWakeupPublisher(): Promise<PgBossQueue | null> {
  publisher ??= (async () => {
    const settings = processConfig();
    const url = process.env.DATABASE_URL;
    if (settings.QUEUE_BACKEND !== 'pgboss' || !url) return null;
    const queue = createPgBossQueue({ url, queueName: settings.QUEUE_NAME, visibilityTimeoutMs: settings.VISIBILITY_TIMEOUT, supervise: false, poolSize: 2 });
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
