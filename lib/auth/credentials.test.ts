import { eq } from 'drizzle-orm';
import { encode } from 'next-auth/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertUser } from '@/e2e/fixtures/console-data';
import { users } from '@/db/schema/auth';
import { authenticate } from './credentials';
import { FREE_ATTEMPTS } from './lockout';
import { sessionFromCookieHeader } from './session';

const secret = 'nextauth-test-secret-0123456789abcdef';
let t: TestDatabase;

beforeAll(async () => {
  process.env.NEXTAUTH_SECRET = secret;
  t = await createTestDatabase();
  await insertUser(t.db, { email: 'Support@Example.com', role: 'support', password: 'right-password-1' });
  await insertUser(t.db, { email: 'locky@example.com', role: 'oncall', password: 'right-password-2' });
});
afterAll(async () => {
  await t.drop();
});

describe('credentials sign-in', () => {
  it('accepts the right password (email in any case) and resets the failure count', async () => {
    await authenticate(t.db, { email: 'support@example.com', password: 'nope' });
    const result = await authenticate(t.db, { email: 'SUPPORT@example.com', password: 'right-password-1' });
    expect(result).toMatchObject({ ok: true, user: { email: 'support@example.com', role: 'support' } });
    const [row] = await t.db.select().from(users).where(eq(users.email, 'support@example.com'));
    expect(row).toMatchObject({ failedLogins: 0, lockedUntil: null });
    expect(row?.lastLoginAt).toBeInstanceOf(Date);
  });

  it('answers the same for an unknown email and a wrong password', async () => {
    expect(await authenticate(t.db, { email: 'ghost@example.com', password: 'x' })).toEqual({ ok: false, reason: 'invalid' });
    expect(await authenticate(t.db, { email: 'support@example.com', password: 'x' })).toEqual({ ok: false, reason: 'invalid' });
  });

  it('locks after repeated failures, refuses even the right password while locked, then lets it in', async () => {
    const now = new Date();
    for (let attempt = 1; attempt < FREE_ATTEMPTS; attempt += 1)
      expect((await authenticate(t.db, { email: 'locky@example.com', password: 'bad', now })).ok).toBe(false);
    const locked = await authenticate(t.db, { email: 'locky@example.com', password: 'bad', now });
    expect(locked).toMatchObject({ ok: false, reason: 'locked' });
    expect(await authenticate(t.db, { email: 'locky@example.com', password: 'right-password-2', now })).toMatchObject({ ok: false, reason: 'locked' });
    const [row] = await t.db.select().from(users).where(eq(users.email, 'locky@example.com'));
    expect(row?.failedLogins).toBe(FREE_ATTEMPTS);
    expect((row?.lockedUntil?.getTime() ?? 0) - now.getTime()).toBe(30_000);
    const later = new Date(now.getTime() + 31_000);
    expect(await authenticate(t.db, { email: 'locky@example.com', password: 'right-password-2', now: later })).toMatchObject({ ok: true });
  });

  it('refuses a disabled account', async () => {
    await t.db.update(users).set({ disabledAt: new Date() }).where(eq(users.email, 'locky@example.com'));
    expect(await authenticate(t.db, { email: 'locky@example.com', password: 'right-password-2' })).toEqual({ ok: false, reason: 'disabled' });
  });
});

describe('session from cookie', () => {
  it('reads a next-auth JWT cookie, takes the role from the users table, and drops disabled users', async () => {
    const [support] = await t.db.select().from(users).where(eq(users.email, 'support@example.com'));
    if (!support) throw new Error('seed missing');
    const token = await encode({ token: { sub: support.id, role: 'admin', email: support.email }, secret });
    const session = await sessionFromCookieHeader(t.db, `other=1; next-auth.session-token=${token}`);
    expect(session?.user).toEqual({ id: support.id, email: 'support@example.com', name: 'Support', role: 'support' });
    expect(await sessionFromCookieHeader(t.db, `next-auth.session-token=${token.slice(0, -4)}abcd`)).toBeNull();
    const forged = await encode({ token: { sub: support.id }, secret: 'another-secret-0123456789abcdef0123' });
    expect(await sessionFromCookieHeader(t.db, `next-auth.session-token=${forged}`)).toBeNull();
    expect(await sessionFromCookieHeader(t.db, null)).toBeNull();
    await t.db.update(users).set({ disabledAt: new Date() }).where(eq(users.id, support.id));
    expect(await sessionFromCookieHeader(t.db, `next-auth.session-token=${token}`)).toBeNull();
  });
});
