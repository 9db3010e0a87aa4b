import type { Db } from '@/db/client';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { createRabbitQueue } from '@/lib/queue/rabbitmq';
import type { QueueAdapter } from '@/lib/queue/types';

export type TestBackend = 'pgboss' | 'rabbitmq';

/** Adapters tuned for tests: short visibility, fast retry and polling. */
export function createTestAdapter(params: {
  backend: TestBackend;
  db: Db;
  databaseUrl: string;
  queueName: string;
  visibilityTimeoutMs: number;
  amqpUrl?: string;
}): QueueAdapter {
  if (params.backend === 'pgboss') {
    return createPgBossQueue({
      url: params.databaseUrl,
      queueName: params.queueName,
      visibilityTimeoutMs: params.visibilityTimeoutMs,
      retryDelaySeconds: 0,
      pollingIntervalMs: 100,
    });
  }
  if (!params.amqpUrl) throw new Error('AMQP_URL is not set');
  return createRabbitQueue({
    url: params.amqpUrl,
    queueName: params.queueName,
    visibilityTimeoutMs: params.visibilityTimeoutMs,
    db: params.db,
    dispatchEveryMs: 100,
  });
}
