import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noticeKey } from '@/lib/ledger/notice-key';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { seedDemo } from './seed';

const secret = 's'.repeat(32);
const options = { secret, messageIdDomain: 'notices.localhost', hashPassword: async (p: string) => `plain:${p}`, subscriptions: 300, accounts: 60 };
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t.drop();
});

async function count(table: string): Promise<number> {
  const result = await t.pool.query<{ n: number }>(`select count(*)::int as n from ${table}`);
  return result.rows[0]?.n ?? -1;
}

describe('seedDemo', () => {
  it('seeds every part of the story the console tells', async () => {
    const summary = await seedDemo(t.pool, options);
    expect(summary.seeded).toBe(true);
    expect(await count('reminder_jobs')).toBe(summary.jobs);
    expect(await count('notice_ledger')).toBe(summary.ledger);
    const states = await t.pool.query<{ state: string; n: number }>('select state, count(*)::int as n from reminder_jobs group by state');
    const byState = Object.fromEntries(states.rows.map((r) => [r.state, r.n]));
    expect(byState.pending).toBeGreaterThan(100);
    expect(byState.sent).toBeGreaterThan(50);
    expect(byState.claimed).toBe(summary.stuckClaims);
    const duplicates = await t.pool.query<{ n: number }>("select count(*)::int as n from delivery_attempts where outcome = 'suppressed_duplicate'");
    expect(duplicates.rows[0]?.n).toBeGreaterThan(0);
    const replay = await t.pool.query<{ state: string }>('select state from replays');
    expect(replay.rows).toEqual([{ state: 'requested' }]);
    expect(await count('users')).toBe(5);
  });

  it('derives the same keys the worker derives', async () => {
    const job = await t.pool.query<{ notice_key: string; notice_type: 'payment_recovery'; identity: Record<string, string>; revision: number }>(
      "select notice_key, notice_type, identity, revision from reminder_jobs where notice_type = 'payment_recovery' limit 1",
    );
    const row = job.rows[0];
    expect(row).toBeDefined();
    if (!row) return;
    expect(noticeKey(secret, { type: row.notice_type, identity: row.identity, revision: row.revision })).toBe(row.notice_key);
  });

  it('is idempotent: a second run changes nothing', async () => {
    const before = await Promise.all(['reminder_jobs', 'notice_ledger', 'delivery_attempts', 'provider_events', 'users', 'replays'].map(count));
    const again = await seedDemo(t.pool, options);
    expect(again.seeded).toBe(false);
    const after = await Promise.all(['reminder_jobs', 'notice_ledger', 'delivery_attempts', 'provider_events', 'users', 'replays'].map(count));
    expect(after).toEqual(before);
  });
});
