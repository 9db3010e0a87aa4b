import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertAttempt, insertJob, insertLedger, insertProviderEvent } from '@/e2e/fixtures/console-data';
import { loadPendingOverview, loadSeriesOverview, loadStatusOverview } from '@/lib/console/overview';
import { timeRanges, type TimeRange } from '@/lib/api/console/overview';
import { CLAIM_OUTCOMES } from '@/lib/console/overview-model';
import { attemptOutcomes, jobStates, providerEventTypes } from '@/db/schema/states';
import type { NoticeFact } from '@/lib/windows/notice-fact';
import { dueBucketEdgesSeconds } from '@/testing/due-buckets';

/**
 * The overview's figures against the same figures computed by separate, deliberately naive
 * SQL: per-bucket range filters instead of date_bin/grouping, epoch arithmetic instead of
 * interval comparisons. A bucketing or filter mistake in either shows up as a mismatch.
 */

const secret = 'test-secret-0123456789abcdef0123456789abcdef';
const now = new Date('2026-11-29T02:07:30.000Z');
const H = 3_600_000;
const QUARANTINE_AFTER = 15 * 60_000;

let t: TestDatabase;

function rng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

beforeAll(async () => {
  t = await createTestDatabase();
  const random = rng(42);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const types = ['renewal_notice_t72', 'renewal_notice_t24', 'payment_recovery'] as const;
  for (let index = 0; index < 240; index += 1) {
    const type = pick(types);
    const fact: NoticeFact =
      type === 'payment_recovery'
        ? { type, identity: { account_id: `acct_${index}`, reconciliation_id: 'rec_1', exception_id: `exc_${index}` }, revision: 0 }
        : { type, identity: { subscription_id: `sub_${index}`, period_start: '2026-12-01' }, revision: 0 };
    // Due times from 5 days ago to 5 days ahead, with a few exactly on bucket edges.
    const offset = index % 20 === 0 ? pick([0, H, 6 * H, 24 * H, 72 * H, -1]) : Math.round((random() * 10 - 5) * 24 * H);
    const dueAt = new Date(now.getTime() + offset);
    const deadlineAt = new Date(dueAt.getTime() + Math.round(random() * 30 * H));
    const state = random() < 0.7 ? 'pending' : pick(jobStates);
    const job = await insertJob(t.db, { fact, secret, recipientEmail: `r${index}@example.com`, dueAt, deadlineAt, state });
    if (random() < 0.25) {
      const claimedAt = new Date(now.getTime() - Math.round(random() * 60) * 60_000);
      await insertLedger(t.db, {
        key: job.key,
        jobId: job.id,
        fact,
        state: pick(['claimed', 'claimed', 'sent', 'released']),
        claimedAt,
        sentAt: claimedAt,
        recipientDomain: 'example.com',
      });
    }
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const outcome = pick(attemptOutcomes);
      const startedAt = new Date(now.getTime() - Math.round(random() * 8 * 24 * H));
      await insertAttempt(t.db, {
        key: job.key,
        jobId: job.id,
        outcome,
        startedAt,
        claimToCommitMs: outcome === 'sent' || random() < 0.2 ? Math.round(random() * 3_000) : null,
      });
    }
    if (random() < 0.6) {
      await insertProviderEvent(t.db, {
        key: job.key,
        eventType: pick(providerEventTypes),
        occurredAt: new Date(now.getTime() - Math.round(random() * 8 * 24 * H)),
      });
    }
  }
});

afterAll(async () => {
  await t.drop();
});

/** Nothing in these figures should need a deferred recount: the first load counts, the rest reuse it. */
const recountLater = () => {
  throw new Error('unexpected deferred recount');
};

async function scalar(query: ReturnType<typeof sql>): Promise<number | null> {
  const result = await t.db.execute<{ value: number | null }>(query);
  const value = result.rows[0]?.value;
  return value === null || value === undefined ? null : Number(value);
}

describe('overview figures equal independent SQL', () => {
  it('pending jobs per type and due bucket', async () => {
    const overview = await loadPendingOverview(t.db, { now, recountLater });
    // Exact at the instant the counts say they were counted (here: counted for this request).
    expect(overview.countedAt).toBe(now.toISOString());
    const nowS = new Date(overview.countedAt).getTime() / 1000;
    const edges = dueBucketEdgesSeconds;
    let total = 0;
    for (const row of overview.rows) {
      for (const [bucket, [from, to]] of Object.entries(edges)) {
        const expected = await scalar(sql`select count(*) as value from reminder_jobs where state = 'pending' and notice_type = ${row.noticeType}
          and extract(epoch from due_at) - ${nowS} >= ${from} and extract(epoch from due_at) - ${nowS} < ${to}`);
        expect(row.counts[bucket as keyof typeof row.counts], `${row.noticeType} ${bucket}`).toBe(expected);
      }
      total += row.total;
    }
    expect(total).toBe(await scalar(sql`select count(*) as value from reminder_jobs where state = 'pending'`));
    expect(total).toBeGreaterThan(100);
  });

  it('oldest pending per type and how many due jobs are near their deadline', async () => {
    const overview = await loadPendingOverview(t.db, { now, recountLater });
    for (const oldest of overview.oldest) {
      const expected = await t.db.execute<{ due: string }>(
        sql`select to_char(min(due_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as due from reminder_jobs where state = 'pending' and notice_type = ${oldest.noticeType}`,
      );
      expect(oldest.dueAt).toBe(expected.rows[0]?.due);
    }
    const status = await loadStatusOverview(t.db, { now, quarantineAfterMs: QUARANTINE_AFTER });
    const near = await scalar(sql`select count(*) as value from reminder_jobs where state = 'pending' and due_at <= ${now.toISOString()}::timestamptz
      and deadline_at < ${new Date(now.getTime() + H).toISOString()}::timestamptz`);
    expect(status.nearDeadline).toBe(near);
    expect(near).toBeGreaterThan(0);
  });

  it("dead-lettered wake-ups: the queue's count, or null when the queue does not answer", async () => {
    expect((await loadStatusOverview(t.db, { now, quarantineAfterMs: QUARANTINE_AFTER, countDeadLettered: () => Promise.resolve(3) })).deadLettered).toBe(3);
    const refused = () => Promise.reject(new Error('broker unreachable'));
    expect((await loadStatusOverview(t.db, { now, quarantineAfterMs: QUARANTINE_AFTER, countDeadLettered: refused })).deadLettered).toBeNull();
    expect((await loadStatusOverview(t.db, { now, quarantineAfterMs: QUARANTINE_AFTER })).deadLettered).toBeNull();
  });

  it('quarantine count', async () => {
    const status = await loadStatusOverview(t.db, { now, quarantineAfterMs: QUARANTINE_AFTER });
    const expected = await scalar(sql`select count(*) as value from notice_ledger where state = 'claimed' and claimed_at < now() - interval '15 minutes'`);
    expect(status.quarantined).toBe(expected);
    expect(expected).toBeGreaterThan(0);
    expect(status.alerts.map((alert) => alert.id)).toContain('quarantine');
  });

  for (const range of ['1h', '24h', '7d'] as TimeRange[]) {
    it(`attempt and provider series over ${range}`, async () => {
      const overview = await loadSeriesOverview(t.db, { now, range });
      const { bucketMs, rangeMs } = timeRanges[range];
      const windowStart = now.getTime() - rangeMs;
      let claimsTotal = 0;
      for (const point of overview.points) {
        const from = new Date(Math.max(new Date(point.at).getTime(), windowStart)).toISOString();
        const to = new Date(Math.min(new Date(point.at).getTime() + bucketMs, now.getTime())).toISOString();
        const within = sql`started_at >= ${from}::timestamptz and started_at < ${to}::timestamptz`;
        expect(point.claims).toBe(
          await scalar(
            sql`select count(*) as value from delivery_attempts where ${within} and outcome in ${sql.raw(`(${CLAIM_OUTCOMES.map((o) => `'${o}'`).join(',')})`)}`,
          ),
        );
        expect(point.duplicates).toBe(await scalar(sql`select count(*) as value from delivery_attempts where ${within} and outcome = 'suppressed_duplicate'`));
        expect(point.retryable).toBe(await scalar(sql`select count(*) as value from delivery_attempts where ${within} and outcome = 'retryable_failure'`));
        expect(point.permanent).toBe(await scalar(sql`select count(*) as value from delivery_attempts where ${within} and outcome = 'permanent_failure'`));
        expect(point.p99).toBe(
          await scalar(sql`select round(percentile_cont(0.99) within group (order by claim_to_commit_ms)) as value from delivery_attempts where ${within}`),
        );
        expect(point.p50).toBe(
          await scalar(sql`select round(percentile_cont(0.5) within group (order by claim_to_commit_ms)) as value from delivery_attempts where ${within}`),
        );
        const received = sql`received_at >= ${from}::timestamptz and received_at < ${to}::timestamptz`;
        expect(point.accepted).toBe(await scalar(sql`select count(*) as value from provider_events where ${received} and event_type = 'accepted'`));
        expect(point.delivered).toBe(await scalar(sql`select count(*) as value from provider_events where ${received} and event_type = 'delivered'`));
        claimsTotal += point.claims;
      }
      const all =
        await scalar(sql`select count(*) as value from delivery_attempts where started_at >= ${new Date(windowStart).toISOString()}::timestamptz and started_at < ${now.toISOString()}::timestamptz
        and outcome in ('sent', 'retryable_failure', 'permanent_failure', 'unknown')`);
      expect(claimsTotal).toBe(all);
      if (range !== '1h') expect(claimsTotal).toBeGreaterThan(0);
    });
  }
});
