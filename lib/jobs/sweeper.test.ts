import { randomBytes } from 'node:crypto';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { insertJobUnlessExists } from '@/db/queries/scheduling';
import { reminderJobs } from '@/db/schema';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { wakeupsRepublished } from '@/lib/metrics/registry';
import { dispatchDueOnce } from '@/lib/queue/dispatcher';
import { createPgBossQueue, type PgBossQueue } from '@/lib/queue/pgboss';
import type { QueueAdapter } from '@/lib/queue/types';
import { startSweeper, sweepOnce } from './sweeper';

const SECOND = 1_000;
const GRACE = 120 * SECOND;
let t: TestDatabase;
let queue: PgBossQueue;
const now = new Date('2026-11-29T12:00:00Z');
const at = (offsetMs: number) => new Date(now.getTime() + offsetMs);

async function job(params: { nextAttemptAt: Date; wakeupPublishedAt: Date | null; state?: 'pending' | 'sent' | 'claimed' }): Promise<string> {
  const { job: row } = await insertJobUnlessExists(t.db, {
    noticeKey: randomBytes(32).toString('hex'),
    noticeType: 'payment_recovery',
    identity: { account_id: 'a', reconciliation_id: 'r', exception_id: randomBytes(4).toString('hex') },
    revision: 0,
    subjectId: 'a',
    customerId: null,
    recipientEmail: 'x@example.test',
    recipientTimeZone: 'UTC',
    dueAt: params.nextAttemptAt,
    deadlineAt: at(86_400_000),
    evidenceRef: null,
    source: 'sweeper-test',
    batchId: null,
    payload: {},
    wakeupPublishedAt: params.wakeupPublishedAt,
  });
  if (params.state && params.state !== 'pending') await t.db.update(reminderJobs).set({ state: params.state }).where(eq(reminderJobs.id, row.id));
  return row.id;
}

async function wakeupsFor(ids: string[]): Promise<Map<string, number>> {
  const { rows } = await t.pool.query<{ job_id: string; n: number }>(
    `select data->>'jobId' as job_id, count(*)::int as n from pgboss.job where name = $1 and data->>'jobId' = any($2::text[]) group by 1`,
    [queue.queueName, ids],
  );
  return new Map(rows.map((row) => [row.job_id, row.n]));
}

beforeAll(async () => {
  t = await createTestDatabase();
  queue = createPgBossQueue({ url: t.url, queueName: `sweeper-${randomBytes(3).toString('hex')}`, visibilityTimeoutMs: 60 * SECOND });
  await queue.start();
});

afterAll(async () => {
  await queue.stop();
  await t.drop();
});

beforeEach(async () => {
  await t.pool.query(`delete from reminder_jobs`);
  await t.pool.query(`delete from pgboss.job where name = $1`, [queue.queueName]);
});

describe('sweepOnce', () => {
  it('re-publishes only pending, due jobs whose last wake-up is older than the grace window', async () => {
    const lost = await job({ nextAttemptAt: at(-10 * 60 * SECOND), wakeupPublishedAt: at(-10 * 60 * SECOND) });
    const neverWoken = await job({ nextAttemptAt: at(-5 * 60 * SECOND), wakeupPublishedAt: null });
    const recentlyWoken = await job({ nextAttemptAt: at(-10 * 60 * SECOND), wakeupPublishedAt: at(-30 * SECOND) });
    const justDue = await job({ nextAttemptAt: at(-30 * SECOND), wakeupPublishedAt: at(-3_600 * SECOND) });
    const future = await job({ nextAttemptAt: at(3_600 * SECOND), wakeupPublishedAt: at(-3_600 * SECOND) });
    const finished = await job({ nextAttemptAt: at(-3_600 * SECOND), wakeupPublishedAt: null, state: 'sent' });
    const claimed = await job({ nextAttemptAt: at(-3_600 * SECOND), wakeupPublishedAt: null, state: 'claimed' });

    const counted = async () => (await wakeupsRepublished.get()).values.reduce((sum, value) => sum + value.value, 0);
    const before = await counted();
    const result = await sweepOnce({ db: t.db, queue, now, graceMs: GRACE });
    expect(result).toEqual({ found: 2, republished: 2 });
    expect((await counted()) - before).toBe(2);
    const wakeups = await wakeupsFor([lost, neverWoken, recentlyWoken, justDue, future, finished, claimed]);
    expect([...wakeups.keys()].sort()).toEqual([lost, neverWoken].sort());
    const marked = await t.db
      .select({ id: reminderJobs.id, at: reminderJobs.wakeupPublishedAt })
      .from(reminderJobs)
      .where(inArray(reminderJobs.id, [lost, neverWoken]));
    expect(marked.every((row) => row.at?.getTime() === now.getTime())).toBe(true);
  });

  it('skips a job whose pg-boss wake-up is still queued (a backlog, not a loss), but restarts its grace window', async () => {
    const backlogged = await job({ nextAttemptAt: at(-10 * 60 * SECOND), wakeupPublishedAt: at(-10 * 60 * SECOND) });
    await queue.publish({ jobId: backlogged });
    expect(await sweepOnce({ db: t.db, queue, now, graceMs: GRACE })).toEqual({ found: 1, republished: 0 });
    expect((await wakeupsFor([backlogged])).get(backlogged)).toBe(1);
    expect(await sweepOnce({ db: t.db, queue, now: at(SECOND), graceMs: GRACE })).toEqual({ found: 0, republished: 0 });
  });

  it('is safe on every worker at once: four concurrent sweeps publish each lost wake-up once', async () => {
    const ids = await Promise.all(Array.from({ length: 40 }, () => job({ nextAttemptAt: at(-3_600 * SECOND), wakeupPublishedAt: null })));
    const results = await Promise.all(Array.from({ length: 4 }, () => sweepOnce({ db: t.db, queue, now, graceMs: GRACE, limit: 15 })));
    const total = results.reduce((sum, result) => sum + result.republished, 0);
    // Whatever one pass skipped (locked by another) the next pass takes.
    const rest = await sweepOnce({ db: t.db, queue, now, graceMs: GRACE, limit: 100 });
    expect(total + rest.republished).toBe(40);
    const wakeups = await wakeupsFor(ids);
    expect(wakeups.size).toBe(40);
    expect([...wakeups.values()].every((n) => n === 1)).toBe(true);
  });

  it('rolls back its marks when the queue refuses, so the next pass tries again', async () => {
    const id = await job({ nextAttemptAt: at(-3_600 * SECOND), wakeupPublishedAt: null });
    const refusing: QueueAdapter = {
      name: 'rabbitmq',
      horizonMs: 0,
      start: async () => undefined,
      consume: async () => undefined,
      stop: async () => undefined,
      publish: async () => {
        throw new Error('broker unavailable');
      },
      publishInTransaction: async () => null,
      liveWakeupJobIds: async () => new Set(),
      health: async () => ({ ok: false, reason: 'broker unavailable' }),
      deadLetteredCount: async () => 0,
    };
    await expect(sweepOnce({ db: t.db, queue: refusing, now, graceMs: GRACE })).rejects.toThrow('broker unavailable');
    const [row] = await t.db.select({ at: reminderJobs.wakeupPublishedAt }).from(reminderJobs).where(eq(reminderJobs.id, id));
    expect(row?.at).toBeNull();
    expect(await sweepOnce({ db: t.db, queue, now, graceMs: GRACE })).toEqual({ found: 1, republished: 1 });
  });

  it('startSweeper drains more than one batch in a single tick', async () => {
    const ids = await Promise.all(Array.from({ length: 1_200 }, () => job({ nextAttemptAt: at(-3_600 * SECOND), wakeupPublishedAt: null })));
    const sweeper = startSweeper({ db: t.db, queue, every: 3_600_000, graceMs: GRACE, clock: () => now });
    await vi.waitFor(async () => expect((await wakeupsFor(ids)).size).toBe(1_200), { timeout: 20_000, interval: 100 });
    await sweeper.stop();
  });

  it('startSweeper sweeps on start and on its interval until stopped', async () => {
    const id = await job({ nextAttemptAt: at(-3_600 * SECOND), wakeupPublishedAt: null });
    const sweeper = startSweeper({ db: t.db, queue, every: 50, graceMs: GRACE, clock: () => now });
    await vi.waitFor(async () => expect((await wakeupsFor([id])).get(id)).toBe(1), { timeout: 5_000, interval: 25 });
    await sweeper.stop();
  });
});

describe('dispatchDueOnce', () => {
  const startAfter = async (id: string): Promise<Date[]> => {
    const { rows } = await t.pool.query<{ start_after: Date }>(
      `select start_after from pgboss.job where name = $1 and data->>'jobId' = $2 order by start_after`,
      [queue.queueName, id],
    );
    return rows.map((row) => row.start_after);
  };
  /** What a consumer does to a delivered wake-up: it is no longer live. */
  const consumeAll = () => t.pool.query(`update pgboss.job set state = 'completed' where name = $1`, [queue.queueName]);

  it('with no horizon (a broker without delays): publishes a job once when it becomes due, and again after a deferral moves it forward', async () => {
    const due = await job({ nextAttemptAt: at(-SECOND), wakeupPublishedAt: null });
    const later = await job({ nextAttemptAt: at(60 * SECOND), wakeupPublishedAt: null });
    expect(await dispatchDueOnce({ db: t.db, queue, now, horizonMs: 0 })).toBe(1);
    expect(await dispatchDueOnce({ db: t.db, queue, now, horizonMs: 0 })).toBe(0);
    expect([...(await wakeupsFor([due, later])).keys()]).toEqual([due]);
    await consumeAll();

    // The send path deferred it by five minutes: due again then, not before.
    await t.db
      .update(reminderJobs)
      .set({ nextAttemptAt: at(5 * 60 * SECOND) })
      .where(eq(reminderJobs.id, due));
    expect(await dispatchDueOnce({ db: t.db, queue, now: at(4 * 60 * SECOND), horizonMs: 0 })).toBe(1); // `later` became due
    expect(await dispatchDueOnce({ db: t.db, queue, now: at(5 * 60 * SECOND), horizonMs: 0 })).toBe(1);
    expect((await wakeupsFor([due])).get(due)).toBe(2);
  });

  it("with the queue's horizon: a job due within it is published with its start time; a later one waits in the row until it comes within", async () => {
    expect(queue.horizonMs).toBe(15 * 60 * SECOND);
    const soon = await job({ nextAttemptAt: at(10 * 60 * SECOND), wakeupPublishedAt: null });
    const farOff = await job({ nextAttemptAt: at(20 * 3_600 * SECOND), wakeupPublishedAt: null });
    expect(await dispatchDueOnce({ db: t.db, queue, now })).toBe(1);
    expect(await startAfter(soon)).toEqual([at(10 * 60 * SECOND)]);
    expect(await startAfter(farOff)).toEqual([]);
    // Marked for its due time, so neither the next pass nor the sweeper before then publishes again.
    expect(await dispatchDueOnce({ db: t.db, queue, now: at(5 * 60 * SECOND) })).toBe(0);
    expect(await sweepOnce({ db: t.db, queue, now: at(11 * 60 * SECOND), graceMs: GRACE })).toEqual({ found: 0, republished: 0 });

    const within = at(20 * 3_600 * SECOND - 14 * 60 * SECOND);
    expect(await dispatchDueOnce({ db: t.db, queue, now: within })).toBe(1);
    expect(await startAfter(farOff)).toEqual([at(20 * 3_600 * SECOND)]);
  });

  it('leaves a deferred job alone while the queue still holds the wake-up its delivery published', async () => {
    const deferred = await job({ nextAttemptAt: at(-60 * SECOND), wakeupPublishedAt: at(-60 * SECOND) });
    // The send path moved it forward and the delivery lifecycle published the deferral.
    await t.db
      .update(reminderJobs)
      .set({ nextAttemptAt: at(30 * SECOND) })
      .where(eq(reminderJobs.id, deferred));
    await queue.publish({ jobId: deferred }, at(30 * SECOND));
    expect(await dispatchDueOnce({ db: t.db, queue, now })).toBe(1);
    expect((await wakeupsFor([deferred])).get(deferred)).toBe(1);
    // Taken once: marked for its due time, it is not looked at again.
    expect(await dispatchDueOnce({ db: t.db, queue, now })).toBe(0);
  });
});
