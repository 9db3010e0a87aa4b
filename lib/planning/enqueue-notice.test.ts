import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { createPgBossQueue, type PgBossQueue } from '@/lib/queue/pgboss';
import { noticeDueAt as notice } from '@/testing/queue/jobs';
import { enqueueNotice } from './enqueue-notice';

const MINUTE = 60_000;
let t: TestDatabase;
let queue: PgBossQueue;
const now = new Date();

async function wakeupsOf(jobId: string): Promise<Date[]> {
  const { rows } = await t.pool.query<{ start_after: Date }>(`select start_after from pgboss.job where name = $1 and data->>'jobId' = $2`, [
    queue.queueName,
    jobId,
  ]);
  return rows.map((row) => row.start_after);
}

beforeAll(async () => {
  t = await createTestDatabase();
  queue = createPgBossQueue({ url: t.url, queueName: `enqueue-${randomBytes(3).toString('hex')}`, visibilityTimeoutMs: MINUTE, supervise: false });
  await queue.start();
});

afterAll(async () => {
  await queue.stop();
  await t.drop();
});

beforeEach(async () => {
  await t.pool.query('delete from pgboss.job where name = $1', [queue.queueName]);
});

describe("enqueueNotice's publish decision (the hot-queue horizon)", () => {
  it('publishes a job due within the horizon in the transaction, and marks it woken for its due time', async () => {
    const dueAt = new Date(now.getTime() + 10 * MINUTE);
    const { job, published } = await t.db.transaction((tx) => enqueueNotice(tx, notice(dueAt), queue, { now }));
    expect(published).toBe(true);
    expect(await wakeupsOf(job.id)).toEqual([dueAt]);
    const row = await t.pool.query<{ wakeup_published_at: Date }>('select wakeup_published_at from reminder_jobs where id = $1', [job.id]);
    expect(row.rows[0]?.wakeup_published_at).toEqual(dueAt);
  });

  it('leaves a job due 30 days out in its row: nothing enters the queue, the row is unmarked for the dispatcher', async () => {
    const dueAt = new Date(now.getTime() + 30 * 86_400_000);
    const { job, created, published } = await t.db.transaction((tx) => enqueueNotice(tx, notice(dueAt), queue, { now }));
    expect({ created, published }).toEqual({ created: true, published: false });
    expect(await wakeupsOf(job.id)).toEqual([]);
    const row = await t.pool.query<{ wakeup_published_at: Date | null; next_attempt_at: Date }>(
      'select wakeup_published_at, next_attempt_at from reminder_jobs where id = $1',
      [job.id],
    );
    expect(row.rows[0]).toEqual({ wakeup_published_at: null, next_attempt_at: dueAt });
  });

  it('publishes an overdue job for now, and a job exactly at the horizon', async () => {
    const overdue = await t.db.transaction((tx) => enqueueNotice(tx, notice(new Date(now.getTime() - MINUTE)), queue, { now }));
    const atEdge = await t.db.transaction((tx) => enqueueNotice(tx, notice(new Date(now.getTime() + queue.horizonMs)), queue, { now }));
    const pastEdge = await t.db.transaction((tx) => enqueueNotice(tx, notice(new Date(now.getTime() + queue.horizonMs + 1)), queue, { now }));
    expect([overdue.published, atEdge.published, pastEdge.published]).toEqual([true, true, false]);
  });
});
