import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertUser } from '@/e2e/fixtures/console-data';
import { auditLog } from '@/db/schema/audit';
import { users } from '@/db/schema/auth';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { createAddressThrottle } from './address-throttle';
import { authenticate } from './credentials';
import { FREE_ATTEMPTS } from './lockout';
import { hashPassword, parsePasswordHash } from './password';

/**
 * Guesses sent all at once. The count is read back from what the product records anyway: one
 * `sign_in.failure` row with reason "wrong password" per password check of a known account,
 * one `sign_in.failure` per unknown email checked.
 */

const PASSWORD = 'Right-Password-7c1d';
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function wrongPasswordChecks(userId: string): Promise<number> {
  const rows = await t.db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.targetId, userId), eq(auditLog.action, 'sign_in.failure'), eq(auditLog.reason, 'wrong password')));
  return rows.length;
}

describe('parallel guesses', () => {
  it('50 wrong passwords at once for one account: at most FREE_ATTEMPTS reach the password check, the rest are refused as locked', async () => {
    const id = await insertUser(t.db, { email: 'flooded@example.com', role: 'admin', password: PASSWORD });
    const results = await Promise.all(Array.from({ length: 50 }, (_, n) => authenticate(t.db, { email: 'flooded@example.com', password: `guess-${n}` })));
    expect(results.every((result) => !result.ok)).toBe(true);
    expect(await wrongPasswordChecks(id)).toBeLessThanOrEqual(FREE_ATTEMPTS);
    const [row] = await t.db.select().from(users).where(eq(users.id, id));
    expect(row?.failedLogins).toBe(FREE_ATTEMPTS);
    expect(row?.lockedUntil?.getTime() ?? 0).toBeGreaterThan(Date.now());
    // Control: the lock ends, and then the right password signs in and clears the count.
    const later = new Date((row?.lockedUntil?.getTime() ?? 0) + 1_000);
    expect(await authenticate(t.db, { email: 'flooded@example.com', password: PASSWORD, now: later })).toMatchObject({ ok: true });
    const [after] = await t.db.select().from(users).where(eq(users.id, id));
    expect(after).toMatchObject({ failedLogins: 0, lockedUntil: null });
  });

  it('50 guesses at once from one address: at most its limit are checked at all', async () => {
    const throttle = createAddressThrottle({ pool: t.pool, maxFailures: 4, windowMs: 600_000 });
    const client = { address: '203.0.113.50', throttle };
    const emails = Array.from({ length: 50 }, (_, n) => `sprayed-${n}@example.com`);
    const results = await Promise.all(emails.map((email) => authenticate(t.db, { email, password: 'spray', client })));
    const checked = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'sign_in.failure'), eq(auditLog.reason, 'unknown email')));
    expect(checked.filter((row) => emails.includes(row.actor))).toHaveLength(4);
    expect(results.filter((result) => !result.ok && result.reason === 'throttled')).toHaveLength(46);
    // Control: another address still signs in.
    await insertUser(t.db, { email: 'elsewhere@example.com', role: 'support', password: PASSWORD });
    expect(await authenticate(t.db, { email: 'elsewhere@example.com', password: PASSWORD, client: { address: '203.0.113.51', throttle } })).toMatchObject({
      ok: true,
    });
  });
});

describe('stored hashes', () => {
  it('a sign-in rehashes a password stored at an older cost, and the new hash verifies', async () => {
    const [row] = await t.db
      .insert(users)
      .values({ email: 'old-cost@example.com', name: 'Old', role: 'support', passwordHash: await hashPassword(PASSWORD, { N: 512, r: 8, p: 1 }) })
      .returning();
    expect(await authenticate(t.db, { email: 'old-cost@example.com', password: PASSWORD })).toMatchObject({ ok: true });
    const [after] = await t.db
      .select()
      .from(users)
      .where(eq(users.id, row?.id ?? ''));
    expect(parsePasswordHash(after?.passwordHash ?? '')?.cost.N).toBe(1024);
    expect(await authenticate(t.db, { email: 'old-cost@example.com', password: PASSWORD })).toMatchObject({ ok: true });
  });
});
