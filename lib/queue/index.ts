import type { Db } from '../../db/client';
import type { Config } from '../config';
import type { Logger } from '../log';
import { createPgBossQueue } from './pgboss';
import { createRabbitQueue } from './rabbitmq';
import type { QueueAdapter } from './types';

export type CreateQueueParams = {
  config: Pick<Config, 'QUEUE_BACKEND' | 'VISIBILITY_TIMEOUT' | 'AMQP_URL'>;
  /** The PostgreSQL URL: pg-boss keeps its own schema there. */
  databaseUrl: string;
  /** RabbitMQ's dispatcher reads due jobs from here; pg-boss ignores it. */
  db?: Db;
  queueName?: string;
  logger?: Logger;
};

/** The adapter QUEUE_BACKEND names. Call `start()` on it before publishing or consuming. */
export function createQueue({ config, databaseUrl, db, queueName, logger }: CreateQueueParams): QueueAdapter {
  if (config.QUEUE_BACKEND === 'pgboss') {
    return createPgBossQueue({ url: databaseUrl, visibilityTimeoutMs: config.VISIBILITY_TIMEOUT, queueName, logger });
  }
  if (!config.AMQP_URL) throw new Error('AMQP_URL is required when QUEUE_BACKEND=rabbitmq');
  // Without a database this process publishes and consumes but does not dispatch due jobs.
  return createRabbitQueue({ url: config.AMQP_URL, visibilityTimeoutMs: config.VISIBILITY_TIMEOUT, queueName, db, logger });
}
