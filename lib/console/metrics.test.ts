import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { insertJob } from '@/e2e/fixtures/console-data';
import { pendingDueSnapshot } from '@/db/schema';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import type { NoticeFact } from '@/lib/windows/notice-fact';
import { renderConsoleMetrics } from './metrics';
import { PENDING_FRESH_MS } from './overview-model';
import type { RecountOutcome } from './pending-counts';

/**
 * /api/metrics reads the pending-by-due-bucket gauge through the overview's shared snapshot:
 * a scrape inside the freshness window does not count (counted_at stays), a stale one serves
 * the stored figure and recounts after the response, and the gauges say what the snapshot says.
 */

const secret = 'test-secret-0123456789abcdef0123456789abcdef';
const T0 = new Date('2026-11-29T03:00:00.000Z');
const H = 3_600_000;
const at = (offsetMs: number) => new Date(T0.getTime() + offsetMs);
const QUARANTINE_AFTER_MS = 15 * 60_000;

let t: TestDatabase;
let serial = 0;

async function addPendingJob(dueAt: Date): Promise<void> {
  serial += 1;
  const fact: NoticeFact = { type: 'renewal_notice_t24', identity: { subscription_id: `sub_metrics_${serial}`, period_start: '2026-12-01' }, revision: 0 };
  await insertJob(t.db, { fact, secret, recipientEmail: `m${serial}@example.com`, dueAt, deadlineAt: new Date(dueAt.getTime() + 30 * H), state: 'pending' });
}

function deferredTasks() {
  const tasks: (() => Promise<RecountOutcome | 'failed'>)[] = [];
  return { tasks, recountLater: (task: () => Promise<RecountOutcome | 'failed'>) => void tasks.push(task) };
}

type StoredSnapshot = { countedAt: string; counts: { noticeType: string; bucket: string; count: number }[] };

/** The stored row as PostgreSQL has it, read without the application's query module. */
async function storedSnapshot(): Promise<StoredSnapshot | null> {
  const result = await t.pool.query<{ counted_at: string; counts: StoredSnapshot['counts'] }>(
    `select to_char(counted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as counted_at, counts from pending_due_snapshot`,
  );
  const row = result.rows[0];
  return row ? { countedAt: row.counted_at, counts: row.counts } : null;
}

/** `notice_ledger_pending_jobs{…}` samples as "type/bucket" → value, and the age gauge. */
function parseScrape(body: string): { pending: Map<string, number>; ageSeconds: number | undefined } {
  const pending = new Map<string, number>();
  for (const match of body.matchAll(/^notice_ledger_pending_jobs\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((label) => [label[1], label[2]]));
    pending.set(`${labels.notice_type}/${labels.due_bucket}`, Number(match[2]));
  }
  const age = /^notice_ledger_pending_counted_age_seconds (\S+)$/m.exec(body)?.[1];
  return { pending, ageSeconds: age === undefined ? undefined : Number(age) };
}

function expectGaugesEqual(scrape: ReturnType<typeof parseScrape>, snapshot: StoredSnapshot | null): void {
  expect(snapshot).not.toBeNull();
  const expected = new Map((snapshot?.counts ?? []).map((row) => [`${row.noticeType}/${row.bucket}`, row.count]));
  expect(expected.size).toBeGreaterThan(0);
  expect(scrape.pending).toEqual(expected);
}

beforeAll(async () => {
  t = await createTestDatabase();
  for (const offset of [-2 * H, 30 * 60_000, 30 * H]) await addPendingJob(at(offset));
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.delete(pendingDueSnapshot);
});

describe('console metrics: pending jobs by due bucket', () => {
  it('with no snapshot, counts once before answering; a second scrape within the window does not count again', async () => {
    const { tasks, recountLater } = deferredTasks();
    const first = parseScrape(await renderConsoleMetrics(t.db, { quarantineAfterMs: QUARANTINE_AFTER_MS, now: T0, recountLater }));
    const afterFirst = await storedSnapshot();
    expect(afterFirst?.countedAt).toBe(T0.toISOString());
    expectGaugesEqual(first, afterFirst);
    expect(first.pending.get('renewal_notice_t24/overdue')).toBe(1);
    expect(first.ageSeconds).toBe(0);

    await addPendingJob(at(-3 * H));
    const second = parseScrape(await renderConsoleMetrics(t.db, { quarantineAfterMs: QUARANTINE_AFTER_MS, now: at(PENDING_FRESH_MS - 1_000), recountLater }));
    const afterSecond = await storedSnapshot();
    expect(afterSecond).toEqual(afterFirst);
    expectGaugesEqual(second, afterSecond);
    // The job added in between is not counted yet: the figure is the snapshot's, 14 s old.
    expect(second.pending.get('renewal_notice_t24/overdue')).toBe(1);
    expect(second.ageSeconds).toBe((PENDING_FRESH_MS - 1_000) / 1000);
    expect(tasks).toHaveLength(0);
  });

  it('a stale snapshot is served with its age and recounted after the response, the way the overview does', async () => {
    const { tasks, recountLater } = deferredTasks();
    await renderConsoleMetrics(t.db, { quarantineAfterMs: QUARANTINE_AFTER_MS, now: T0, recountLater });
    const before = await storedSnapshot();
    await addPendingJob(at(-4 * H));
    const later = at(PENDING_FRESH_MS + 5_000);
    const stale = parseScrape(await renderConsoleMetrics(t.db, { quarantineAfterMs: QUARANTINE_AFTER_MS, now: later, recountLater, clock: () => later }));
    expectGaugesEqual(stale, before);
    expect(stale.ageSeconds).toBe((PENDING_FRESH_MS + 5_000) / 1000);
    expect(await storedSnapshot()).toEqual(before);
    expect(tasks).toHaveLength(1);
    expect(await tasks[0]?.()).toBe('recounted');
    const recounted = await storedSnapshot();
    expect(recounted?.countedAt).toBe(later.toISOString());
    const next = parseScrape(await renderConsoleMetrics(t.db, { quarantineAfterMs: QUARANTINE_AFTER_MS, now: at(PENDING_FRESH_MS + 6_000), recountLater }));
    expectGaugesEqual(next, recounted);
    expect((next.pending.get('renewal_notice_t24/overdue') ?? 0) - (stale.pending.get('renewal_notice_t24/overdue') ?? 0)).toBe(1);
    expect(next.ageSeconds).toBe(1);
    expect(tasks).toHaveLength(1);
  });
});
