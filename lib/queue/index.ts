import type { Db } from '../../db/client';
import type { Config } from '../config';
import type { Logger } from '../log';
import { createPgBossQueue } from './pgboss';
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
export function createQueue({ config, databaseUrl, queueName, logger }: CreateQueueParams): QueueAdapter {
  if (config.QUEUE_BACKEND === 'pgboss') {
    return createPgBossQueue({ url: databaseUrl, visibilityTimeoutMs: config.VISIBILITY_TIMEOUT, queueName, logger });
  }
  throw new Error('QUEUE_BACKEND=rabbitmq is not available yet');
}
