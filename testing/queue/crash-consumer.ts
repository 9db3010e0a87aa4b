/**
 * A consumer that takes wake-ups and never finishes them, so a test can SIGKILL it mid-handle.
 * Prints `ready` once consuming and `delivered <jobId>` per delivery on stdout.
 */
import { createDb, createPool } from '@/db/client';
import { createTestAdapter } from './adapters';

const backend = process.env.QUEUE_BACKEND === 'rabbitmq' ? 'rabbitmq' : 'pgboss';
const databaseUrl = process.env.DATABASE_URL ?? '';
const queueName = process.env.QUEUE_NAME ?? '';
const visibilityTimeoutMs = Number(process.env.VISIBILITY_MS ?? '2000');

const pool = createPool(databaseUrl, { max: 2, applicationName: 'crash-consumer' });
const queue = createTestAdapter({ backend, db: createDb(pool), databaseUrl, queueName, visibilityTimeoutMs, amqpUrl: process.env.AMQP_URL });
await queue.start();
await queue.consume(
  async (delivery) => {
    process.stdout.write(`delivered ${delivery.wakeup.jobId}\n`);
    return new Promise(() => undefined);
  },
  { concurrency: 4 },
);
process.stdout.write('ready\n');
