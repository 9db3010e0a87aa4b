import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reminderJobs } from '@/db/schema';
import { sweepOnce } from '@/lib/jobs/sweeper';
import { enqueueNotice } from '@/lib/planning/enqueue-notice';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { noticeDueAt } from '@/testing/queue/jobs';
import { dispatchDueOnce } from './dispatcher';
import { isWithinHorizon } from './horizon';
import { createPgBossQueue, type PgBossQueue } from './pgboss';

/**
 * The hot-queue policy, over random schedules, clocks and interleavings of scheduling,
 * deliveries, lost wake-ups, the dispatcher and the sweeper, on PostgreSQL and pg-boss:
 * - no due job is ever left unpublished: once the dispatcher has run at T, every pending job due
 *   by T has a live wake-up (unless it was lost after being woken: then the sweeper's turn);
 * - a lost wake-up (the broker dropped it, or its handler threw and it was acked) is back once
 *   the sweeper has run a grace window after both the loss and the due time;
 * - the queue holds no wake-up due beyond the horizon of the moment it was published.
 * Horizon 0 is RabbitMQ's policy (no delays: published when due), run on the same queue.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const GRACE = 2 * MINUTE;

type Step =
  | { kind: 'schedule'; dueIn: number }
  | { kind: 'advance'; by: number }
  | { kind: 'dispatch' }
  | { kind: 'sweep' }
  | { kind: 'dispatchAndSweep' }
  | { kind: 'deliver'; pick: number; then: 'sent' | 'defer' | 'threw'; deferBy: number }
  | { kind: 'lose'; pick: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('schedule' as const),
      // Overdue, near, just past the horizon, hours and 30 days out.
      dueIn: fc.oneof(
        fc.integer({ min: -HOUR, max: 0 }),
        fc.integer({ min: 0, max: 20 * MINUTE }),
        fc.integer({ min: 0, max: 6 * HOUR }),
        fc.constant(30 * 24 * HOUR),
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      by: fc.oneof(fc.integer({ min: 0, max: 20 * MINUTE }), fc.integer({ min: 0, max: 3 * HOUR })),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('dispatch' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sweep' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('dispatchAndSweep' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('deliver' as const),
      pick: fc.nat(),
      then: fc.constantFrom('sent' as const, 'defer' as const, 'threw' as const),
      deferBy: fc.oneof(fc.integer({ min: 1, max: 10 * MINUTE }), fc.integer({ min: 1, max: 8 * HOUR })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('lose' as const), pick: fc.nat() }) },
);

let t: TestDatabase;
let queue: PgBossQueue;

beforeAll(async () => {
  t = await createTestDatabase();
  queue = createPgBossQueue({ url: t.url, queueName: `horizon-${randomBytes(3).toString('hex')}`, visibilityTimeoutMs: MINUTE, supervise: false });
  await queue.start();
});

afterAll(async () => {
  await queue.stop();
  await t.drop();
});

const notice = (dueAt: Date) => noticeDueAt(dueAt, { deadlineAt: new Date(dueAt.getTime() + 60 * 24 * HOUR) });

type LiveWakeup = { id: string; jobId: string; startAfter: Date };

async function liveWakeups(): Promise<LiveWakeup[]> {
  const { rows } = await t.pool.query<{ id: string; job_id: string; start_after: Date }>(
    `select id, data->>'jobId' as job_id, start_after from pgboss.job where name = $1 and state in ('created', 'retry', 'active') order by id`,
    [queue.queueName],
  );
  return rows.map((row) => ({ id: row.id, jobId: row.job_id, startAfter: row.start_after }));
}

async function pendingJobs(): Promise<{ id: string; nextAttemptAt: Date }[]> {
  return t.db.select({ id: reminderJobs.id, nextAttemptAt: reminderJobs.nextAttemptAt }).from(reminderJobs).where(eq(reminderJobs.state, 'pending'));
}

async function runScenario(steps: Step[], horizonMs: number): Promise<void> {
  await t.pool.query('delete from reminder_jobs');
  await t.pool.query('delete from pgboss.job where name = $1', [queue.queueName]);
  // Near the real clock: pg-boss stamps an immediate wake-up with the database's now().
  let clock = new Date(Math.floor(Date.now() / MINUTE) * MINUTE);
  /** Jobs whose wake-up went away while they stayed pending, and when. */
  const lost = new Map<string, Date>();

  const dispatched = async () => {
    const pending = await pendingJobs();
    const live = new Set((await liveWakeups()).map((w) => w.jobId));
    for (const job of pending) {
      if (job.nextAttemptAt > clock || lost.has(job.id)) continue;
      expect(live.has(job.id), `job due at ${job.nextAttemptAt.toISOString()} unpublished after a dispatch at ${clock.toISOString()}`).toBe(true);
    }
  };
  const swept = async () => {
    const pending = new Map((await pendingJobs()).map((job) => [job.id, job.nextAttemptAt]));
    const live = new Set((await liveWakeups()).map((w) => w.jobId));
    for (const [jobId, lostAt] of lost) {
      const dueAt = pending.get(jobId);
      if (dueAt === undefined) continue;
      const owed = Math.max(lostAt.getTime(), dueAt.getTime()) + GRACE;
      if (clock.getTime() < owed) continue;
      expect(live.has(jobId), `lost wake-up of a job due at ${dueAt.toISOString()} not back after a sweep at ${clock.toISOString()}`).toBe(true);
      lost.delete(jobId);
    }
  };
  const dispatch = () => dispatchDueOnce({ db: t.db, queue, now: clock, horizonMs });
  const sweep = () => sweepOnce({ db: t.db, queue, now: clock, graceMs: GRACE });

  for (const s of steps) {
    if (s.kind === 'schedule') {
      const dueAt = new Date(clock.getTime() + s.dueIn);
      await t.db.transaction((tx) => enqueueNotice(tx, notice(dueAt), { publishInTransaction: queue.publishInTransaction, horizonMs }, { now: clock }));
    } else if (s.kind === 'advance') {
      clock = new Date(clock.getTime() + s.by);
    } else if (s.kind === 'dispatch') {
      await dispatch();
      await dispatched();
    } else if (s.kind === 'sweep') {
      await sweep();
      await swept();
    } else if (s.kind === 'dispatchAndSweep') {
      await Promise.all([dispatch(), sweep()]);
      await dispatched();
      await swept();
    } else {
      const deliverable = (await liveWakeups()).filter((w) => w.startAfter <= clock);
      const wakeup = deliverable[s.pick % Math.max(1, deliverable.length)];
      if (!wakeup) continue;
      // The wake-up leaves the queue: delivered and acked, or dropped by the broker. One for a job
      // no longer pending is discarded by the send path.
      await t.pool.query(`update pgboss.job set state = 'completed' where id = $1`, [wakeup.id]);
      if (!(await pendingJobs()).some((job) => job.id === wakeup.jobId)) continue;
      const stillLive = (await liveWakeups()).some((w) => w.jobId === wakeup.jobId);
      if (s.kind === 'lose' || s.then === 'threw') {
        if (!stillLive) lost.set(wakeup.jobId, clock);
      } else if (s.then === 'sent') {
        await t.db.update(reminderJobs).set({ state: 'sent' }).where(eq(reminderJobs.id, wakeup.jobId));
        lost.delete(wakeup.jobId);
      } else {
        // A deferral as the send path and the delivery lifecycle make it: the row first, then a
        // wake-up only if it is within the horizon.
        const until = new Date(clock.getTime() + s.deferBy);
        await t.db.update(reminderJobs).set({ nextAttemptAt: until }).where(eq(reminderJobs.id, wakeup.jobId));
        if (isWithinHorizon({ at: until, now: clock, horizonMs })) await queue.publish({ jobId: wakeup.jobId }, until);
        lost.delete(wakeup.jobId);
      }
    }
    const latest = (await liveWakeups()).reduce((max, w) => Math.max(max, w.startAfter.getTime()), 0);
    expect(latest, 'a wake-up beyond the horizon entered the queue').toBeLessThanOrEqual(Math.max(Date.now(), clock.getTime() + horizonMs));
  }
  // Finally the workers catch up: one dispatch and one sweep a grace window after everything.
  clock = new Date(clock.getTime() + 31 * 24 * HOUR);
  await dispatch();
  await sweep();
  lost.clear();
  await dispatched();
}

describe('the hot-queue horizon (property)', () => {
  for (const [label, horizonMs] of [
    ['pg-boss, QUEUE_HORIZON 15 min', 15 * MINUTE],
    ['RabbitMQ policy, horizon 0', 0],
  ] as const) {
    it(`${label}: every due job is published once the dispatcher has run, a lost one once the sweeper has, and nothing beyond the horizon enters the queue`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), (steps) => runScenario(steps, horizonMs)),
        { numRuns: 60 },
      );
    }, 240_000);
  }
});
