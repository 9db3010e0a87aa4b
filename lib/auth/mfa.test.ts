import { eq } from 'drizzle-orm';
import { encode } from 'next-auth/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertUser } from '@/e2e/fixtures/console-data';
import { userMfa, users } from '@/db/schema/auth';
import { beginMfaEnrollment, confirmMfaEnrollment, disableOwnMfa, regenerateRecoveryCodes, resetUserMfa } from '@/lib/console/mfa';
import { authorize } from '@/lib/http/console-route';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { enrollTestMfa } from '@/testing/mfa';
import { authenticate } from './credentials';
import { FREE_ATTEMPTS } from './lockout';
import { beginSession } from './session-lifecycle';
import { sessionFromCookieHeader } from './session';
import { totpCodeAt } from './totp';

const nextAuthSecret = 'nextauth-test-secret-0123456789abcdef';
let t: TestDatabase;

beforeAll(async () => {
  process.env.NEXTAUTH_SECRET = nextAuthSecret;
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function cookieFor(userId: string): Promise<string> {
  const token = await encode({ token: { sub: userId, ...(await beginSession(t.db, userId)) }, secret: nextAuthSecret });
  return `next-auth.session-token=${token}`;
}

async function failureReasons(email: string): Promise<string[]> {
  const rows = await t.pool.query<{ reason: string }>(`select reason from audit_log where actor = $1 and action = 'sign_in.failure' order by id`, [email]);
  return rows.rows.map((row) => row.reason);
}

describe('sign-in with an authenticator enrolled', () => {
  it('needs the code after the right password; without it or with a wrong one it answers as a wrong password and counts', async () => {
    const email = 'mfa-op@example.com';
    const id = await insertUser(t.db, { email, role: 'operator', password: 'operator-password-1' });
    const { secret } = await enrollTestMfa(t.db, { userId: id });
    const now = new Date();
    expect(await authenticate(t.db, { email, password: 'operator-password-1', now })).toEqual({ ok: false, reason: 'invalid' });
    expect(await authenticate(t.db, { email, password: 'operator-password-1', code: '000000', now })).toEqual({ ok: false, reason: 'invalid' });
    expect(await authenticate(t.db, { email, password: 'wrong-password', code: totpCodeAt({ secret, now }), now })).toEqual({ ok: false, reason: 'invalid' });
    const [counted] = await t.db.select().from(users).where(eq(users.id, id));
    expect(counted?.failedLogins).toBe(3);
    expect(await failureReasons(email)).toEqual(['no authentication code (MFA enrolled)', 'wrong or already used authentication code', 'wrong password']);

    const code = totpCodeAt({ secret, now });
    expect(await authenticate(t.db, { email, password: 'operator-password-1', code, now })).toMatchObject({ ok: true, user: { id } });
    // The same code again, within its step: a replay, refused.
    expect(await authenticate(t.db, { email, password: 'operator-password-1', code, now })).toEqual({ ok: false, reason: 'invalid' });
    const audits = await t.pool.query<{ after: Record<string, unknown> }>(`select after from audit_log where actor = $1 and action = 'sign_in.success'`, [
      email,
    ]);
    expect(audits.rows).toEqual([{ after: expect.objectContaining({ secondFactor: 'totp' }) }]);
    expect(JSON.stringify(audits.rows)).not.toContain(code);
  });

  it('wrong codes lock the account like wrong passwords', async () => {
    const email = 'mfa-guess@example.com';
    const id = await insertUser(t.db, { email, role: 'support', password: 'support-password-1' });
    await enrollTestMfa(t.db, { userId: id });
    const results = [];
    for (let i = 0; i < FREE_ATTEMPTS; i += 1)
      results.push(await authenticate(t.db, { email, password: 'support-password-1', code: String(i).padStart(6, '0') }));
    expect(results.at(-1)).toMatchObject({ ok: false, reason: 'locked' });
  });

  it('takes a recovery code once', async () => {
    const email = 'mfa-recovery@example.com';
    const id = await insertUser(t.db, { email, role: 'support', password: 'support-password-2' });
    const { recoveryCodes } = await enrollTestMfa(t.db, { userId: id });
    const [first = '', second = ''] = recoveryCodes;
    expect(await authenticate(t.db, { email, password: 'support-password-2', code: first.toUpperCase() })).toMatchObject({ ok: true });
    expect(await authenticate(t.db, { email, password: 'support-password-2', code: first })).toEqual({ ok: false, reason: 'invalid' });
    expect(await authenticate(t.db, { email, password: 'support-password-2', code: second })).toMatchObject({ ok: true });
    const [row] = await t.db.select().from(userMfa).where(eq(userMfa.userId, id));
    expect(row?.recoveryCodeHashes).toHaveLength(8);
  });
});

describe('enrollment on the Account page', () => {
  it('a pending secret is confirmed by a first code, yields ten recovery codes stored as hashes, and the secret is stored sealed', async () => {
    const email = 'mfa-enroll@example.com';
    const id = await insertUser(t.db, { email, role: 'support', password: 'support-password-3' });
    expect(await beginMfaEnrollment(t.db, { userId: id, email, currentPassword: 'not-it' })).toMatchObject({ ok: false, refusal: { kind: 'forbidden' } });
    const begun = await beginMfaEnrollment(t.db, { userId: id, email, currentPassword: 'support-password-3' });
    if (!begun.ok) throw new Error(begun.refusal.message);
    expect(begun.data.uri).toContain(`secret=${begun.data.secret}`);
    // Pending: sign-in does not ask for it yet.
    expect(await authenticate(t.db, { email, password: 'support-password-3' })).toMatchObject({ ok: true });
    const wrong = await confirmMfaEnrollment(t.db, { userId: id, email, code: '000000' });
    expect(wrong).toMatchObject({ ok: false, refusal: { kind: 'invalid_input' } });
    const now = new Date();
    const confirmed = await confirmMfaEnrollment(t.db, { userId: id, email, code: totpCodeAt({ secret: begun.data.secret, now }), now });
    if (!confirmed.ok) throw new Error(confirmed.refusal.message);
    expect(confirmed.data.recoveryCodes).toHaveLength(10);
    const stored = await t.pool.query(`select * from user_mfa where user_id = $1`, [id]);
    const everything = JSON.stringify(stored.rows) + JSON.stringify((await t.pool.query('select * from audit_log')).rows);
    expect(everything).not.toContain(begun.data.secret);
    for (const code of confirmed.data.recoveryCodes) expect(everything).not.toContain(code);
    expect(await beginMfaEnrollment(t.db, { userId: id, email, currentPassword: 'support-password-3' })).toMatchObject({
      ok: false,
      refusal: { kind: 'conflict' },
    });
    // The confirming code's step is used up: signing in with it is a replay.
    expect(await authenticate(t.db, { email, password: 'support-password-3', code: totpCodeAt({ secret: begun.data.secret, now }), now })).toEqual({
      ok: false,
      reason: 'invalid',
    });

    const [spare = '', other = ''] = confirmed.data.recoveryCodes;
    expect(await regenerateRecoveryCodes(t.db, { userId: id, email, currentPassword: 'support-password-3', code: '' })).toMatchObject({ ok: false });
    const fresh = await regenerateRecoveryCodes(t.db, { userId: id, email, currentPassword: 'support-password-3', code: spare });
    if (!fresh.ok) throw new Error(fresh.refusal.message);
    expect(await authenticate(t.db, { email, password: 'support-password-3', code: other })).toEqual({ ok: false, reason: 'invalid' });
    expect(await disableOwnMfa(t.db, { userId: id, email, currentPassword: 'not-it', code: fresh.data.recoveryCodes[0] ?? '' })).toMatchObject({
      ok: false,
      refusal: { kind: 'forbidden' },
    });
    expect(await disableOwnMfa(t.db, { userId: id, email, currentPassword: 'support-password-3', code: fresh.data.recoveryCodes[0] ?? '' })).toEqual({
      ok: true,
      data: { disabled: true },
    });
    expect(await authenticate(t.db, { email, password: 'support-password-3' })).toMatchObject({ ok: true });
  });
});

describe('admin and manager must have MFA', () => {
  it('a session of an admin without it may reach only the Account page; once enrolled, everything its role allows', async () => {
    const id = await insertUser(t.db, { email: 'mfa-admin@example.com', role: 'admin', password: 'admin-password-1' });
    const pending = await sessionFromCookieHeader(t.db, await cookieFor(id));
    expect(pending?.user.mfaPending).toBe(true);
    expect(authorize(pending, 'users.manage')).toMatchObject({ ok: false, refusal: { kind: 'forbidden', message: expect.stringMatching(/Account page/) } });
    expect(authorize(pending, 'replay.approve')).toMatchObject({ ok: false });
    expect(authorize(pending, 'account.mfa')).toMatchObject({ ok: true });
    expect(authorize(pending, 'account.password')).toMatchObject({ ok: true });
    await enrollTestMfa(t.db, { userId: id });
    const enrolled = await sessionFromCookieHeader(t.db, await cookieFor(id));
    expect(enrolled?.user.mfaPending).toBeUndefined();
    expect(authorize(enrolled, 'users.manage')).toMatchObject({ ok: true });
  });

  it("an admin's reset removes another user's authenticator, is audited and ends their sessions", async () => {
    const adminId = await insertUser(t.db, { email: 'mfa-resetter@example.com', role: 'admin', password: 'admin-password-2' });
    const id = await insertUser(t.db, { email: 'mfa-lost-phone@example.com', role: 'manager', password: 'manager-password-1' });
    await enrollTestMfa(t.db, { userId: id });
    const cookie = await cookieFor(id);
    expect(await sessionFromCookieHeader(t.db, cookie)).not.toBeNull();
    expect(await resetUserMfa(t.db, { actorId: id, actor: 'mfa-lost-phone@example.com', id, reason: 'my own' })).toMatchObject({ ok: false });
    expect(await resetUserMfa(t.db, { actorId: adminId, actor: 'mfa-resetter@example.com', id, reason: 'lost their phone' })).toMatchObject({ ok: true });
    expect(await sessionFromCookieHeader(t.db, cookie)).toBeNull();
    const audit = await t.pool.query(`select actor, reason from audit_log where action = 'user.mfa_reset' and target_id = $1`, [id]);
    expect(audit.rows).toEqual([{ actor: 'mfa-resetter@example.com', reason: 'lost their phone' }]);
    expect(await resetUserMfa(t.db, { actorId: adminId, actor: 'mfa-resetter@example.com', id, reason: 'again' })).toMatchObject({
      ok: false,
      refusal: { kind: 'conflict' },
    });
  });
});
