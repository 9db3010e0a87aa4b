import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertJob } from '@/e2e/fixtures/console-data';
import { readPendingDueSnapshot, storePendingDueSnapshot, tryLockPendingRecount, type PendingDueSnapshot } from '@/db/queries/overview';
import { pendingDueSnapshot } from '@/db/schema';
import type { NoticeFact } from '@/lib/windows/notice-fact';
import { loadPendingOverview } from './overview';
import { PENDING_FRESH_MS, PENDING_SERVE_STALE_MS } from './overview-model';
import { loadPendingCounts, recountPendingCounts, type RecountOutcome } from './pending-counts';
import { dueBucketEdgesSeconds } from '@/testing/due-buckets';
import { loadNoticeConfig } from '@/lib/windows/load-config';

/**
 * The snapshot behind "pending jobs by due bucket": when it is reused, when it is recounted
 * (after the response or before it), that concurrent viewers count once, and that whatever is
 * served is exact at the instant it says it was counted (checked against independent SQL).
 */

const secret = 'test-secret-0123456789abcdef0123456789abcdef';
const T0 = new Date('2026-11-29T02:07:30.000Z');
const H = 3_600_000;
const at = (offsetMs: number) => new Date(T0.getTime() + offsetMs);

let t: TestDatabase;
let serial = 0;

async function addPendingJob({ dueAt, state = 'pending' }: { dueAt: Date; state?: 'pending' | 'sent' }): Promise<void> {
  serial += 1;
  const fact: NoticeFact = { type: 'renewal_notice_t24', identity: { subscription_id: `sub_snap_${serial}`, period_start: '2026-12-01' }, revision: 0 };
  await insertJob(t.db, { fact, secret, recipientEmail: `s${serial}@example.com`, dueAt, deadlineAt: new Date(dueAt.getTime() + 30 * H), state });
}

/** Collects what would run after the response, so a test decides when (and whether) it runs. */
function deferredTasks() {
  const tasks: (() => Promise<RecountOutcome | 'failed'>)[] = [];
  return { tasks, recountLater: (task: () => Promise<RecountOutcome | 'failed'>) => void tasks.push(task) };
}

/** Every (type, bucket) of the snapshot against a plain range count at its counted_at, and the total against all pending jobs. */
async function expectExactAtItsInstant(snapshot: PendingDueSnapshot): Promise<void> {
  const nowS = snapshot.countedAt.getTime() / 1000;
  const edges = dueBucketEdgesSeconds;
  // Every configured notice type (NOTICE_CONFIG), each in the six due buckets.
  expect(snapshot.counts).toHaveLength(Object.keys(loadNoticeConfig('config/notice-ledger.json').config.noticeTypes).length * 6);
  for (const row of snapshot.counts) {
    const range = edges[row.bucket];
    if (!range) throw new Error(`unknown bucket ${row.bucket}`);
    const result = await t.db.execute<{
      value: number;
    }>(sql`select count(*)::int as value from reminder_jobs where state = 'pending' and notice_type = ${row.noticeType}
      and extract(epoch from due_at) - ${nowS} >= ${range[0]} and extract(epoch from due_at) - ${nowS} < ${range[1]}`);
    expect(row.count, `${row.noticeType} ${row.bucket} at ${snapshot.countedAt.toISOString()}`).toBe(result.rows[0]?.value);
  }
}

function total(snapshot: PendingDueSnapshot): number {
  return snapshot.counts.reduce((sum, row) => sum + row.count, 0);
}

beforeAll(async () => {
  t = await createTestDatabase();
  for (const offset of [-30 * H, -1, 0, 30 * 60_000, 2 * H, 7 * H, 25 * H, 80 * H]) await addPendingJob({ dueAt: at(offset) });
  await addPendingJob({ dueAt: at(H), state: 'sent' });
});

afterAll(async () => {
  await t.drop();
});

beforeEach(async () => {
  await t.db.delete(pendingDueSnapshot);
});

describe('pending-by-due-bucket snapshot', () => {
  it('counts and stores a snapshot when there is none, before answering, exact at its instant', async () => {
    const { tasks, recountLater } = deferredTasks();
    const served = await loadPendingCounts(t.db, { now: T0, recountLater });
    expect(served.countedAt).toEqual(T0);
    expect(tasks).toHaveLength(0);
    expect(await readPendingDueSnapshot(t.db)).toEqual(served);
    await expectExactAtItsInstant(served);
    expect(served.counts.find((row) => row.noticeType === 'renewal_notice_t24' && row.bucket === 'overdue')?.count).toBe(2);
  });

  it('reuses a fresh snapshot: a job added since does not show until the next count', async () => {
    const { tasks, recountLater } = deferredTasks();
    const first = await loadPendingCounts(t.db, { now: T0, recountLater });
    await addPendingJob({ dueAt: at(-5 * H) });
    const again = await loadPendingCounts(t.db, { now: at(PENDING_FRESH_MS - 1), recountLater });
    expect(again).toEqual(first);
    expect(tasks).toHaveLength(0);
    const live = await t.db.execute<{ value: number }>(sql`select count(*)::int as value from reminder_jobs where state = 'pending'`);
    expect(total(again)).toBe((live.rows[0]?.value ?? 0) - 1);
  });

  it('serves a stale snapshot as of its instant and recounts it after the response', async () => {
    const { tasks, recountLater } = deferredTasks();
    const first = await loadPendingCounts(t.db, { now: T0, recountLater });
    await addPendingJob({ dueAt: at(3 * H) });
    const later = at(PENDING_FRESH_MS + 5_000);
    const served = await loadPendingCounts(t.db, { now: later, recountLater, clock: () => later });
    expect(served).toEqual(first);
    expect(tasks).toHaveLength(1);
    expect(await tasks[0]?.()).toBe('recounted');
    const stored = await readPendingDueSnapshot(t.db);
    expect(stored?.countedAt).toEqual(later);
    expect(total(stored ?? first)).toBe(total(first) + 1);
    if (stored) await expectExactAtItsInstant(stored);
  });

  it('counts before answering when the snapshot is too old to show (or stamped too far ahead)', async () => {
    const { tasks, recountLater } = deferredTasks();
    await loadPendingCounts(t.db, { now: T0, recountLater });
    await addPendingJob({ dueAt: at(50 * H) });
    const late = at(PENDING_SERVE_STALE_MS);
    const served = await loadPendingCounts(t.db, { now: late, recountLater });
    expect(served.countedAt).toEqual(late);
    await expectExactAtItsInstant(served);
    const behind = await loadPendingCounts(t.db, { now: T0, recountLater });
    expect(behind.countedAt).toEqual(T0);
    expect(tasks).toHaveLength(0);
  });

  it('two viewers with the same stale snapshot: both are served it, and it is recounted once', async () => {
    const { tasks, recountLater } = deferredTasks();
    const first = await loadPendingCounts(t.db, { now: T0, recountLater });
    const later = at(PENDING_FRESH_MS + 1_000);
    const served = await Promise.all(
      [0, 1].map((viewer) =>
        loadPendingCounts(t.db, { now: new Date(later.getTime() + viewer), recountLater, clock: () => new Date(later.getTime() + viewer) }),
      ),
    );
    expect(served).toEqual([first, first]);
    expect(tasks).toHaveLength(2);
    // Overlapping, the second finds the lock taken ('busy'); one after the other, it finds a fresh snapshot ('fresh').
    const outcomes = await Promise.all(tasks.map((task) => task()));
    expect(outcomes.filter((outcome) => outcome === 'recounted')).toHaveLength(1);
    expect(outcomes.every((outcome) => outcome === 'recounted' || outcome === 'busy' || outcome === 'fresh')).toBe(true);
  });

  it('two viewers with a snapshot too old to show: the second waits for the first count and uses it', async () => {
    const { recountLater } = deferredTasks();
    await loadPendingCounts(t.db, { now: T0, recountLater });
    const late = at(2 * PENDING_SERVE_STALE_MS);
    const served = await Promise.all([0, 1].map((viewer) => loadPendingCounts(t.db, { now: new Date(late.getTime() + viewer), recountLater })));
    // Had both counted, each would carry its own instant.
    expect(served[0]?.countedAt).toEqual(served[1]?.countedAt);
    expect(await readPendingDueSnapshot(t.db)).toEqual(served[0]);
  });

  it('a recount already running elsewhere: this one gives up at once and the previous snapshot stands', async () => {
    const { recountLater } = deferredTasks();
    const first = await loadPendingCounts(t.db, { now: T0, recountLater });
    const later = at(PENDING_FRESH_MS + 1_000);
    await t.db.transaction(async (tx) => {
      expect(await tryLockPendingRecount(tx)).toBe(true);
      expect(await recountPendingCounts(t.db, { now: later })).toEqual({ outcome: 'busy' });
    });
    expect(await readPendingDueSnapshot(t.db)).toEqual(first);
    expect((await recountPendingCounts(t.db, { now: later })).outcome).toBe('recounted');
  });

  it('a failed deferred recount is reported, not thrown, and keeps the previous snapshot', async () => {
    const first = { countedAt: T0, countMs: 1, counts: [{ noticeType: 'renewal_notice_t24', bucket: 'overdue', count: 7 }] };
    await storePendingDueSnapshot(t.db, first);
    const { tasks, recountLater } = deferredTasks();
    const later = at(PENDING_FRESH_MS);
    await loadPendingCounts(t.db, { now: later, recountLater, clock: () => new Date(Number.NaN) });
    expect(await tasks[0]?.()).toBe('failed');
    expect(await readPendingDueSnapshot(t.db)).toEqual(first);
  });

  it('the overview carries the instant the buckets were counted next to the instant it was generated', async () => {
    const { tasks, recountLater } = deferredTasks();
    await loadPendingCounts(t.db, { now: T0, recountLater });
    const later = at(PENDING_FRESH_MS + 3_000);
    const overview = await loadPendingOverview(t.db, { now: later, recountLater, clock: () => later });
    expect(overview.generatedAt).toBe(later.toISOString());
    expect(overview.countedAt).toBe(T0.toISOString());
    expect(overview.countMs).toBeGreaterThanOrEqual(0);
    expect(tasks).toHaveLength(1);
  });
});
