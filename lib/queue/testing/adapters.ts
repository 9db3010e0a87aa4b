import type { Db } from '../../../db/client';
import { createPgBossQueue } from '../pgboss';
import type { QueueAdapter } from '../types';

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
  throw new Error('rabbitmq test adapter not available yet');
}
