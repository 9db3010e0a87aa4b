import { eq } from 'drizzle-orm';
import { encode } from 'next-auth/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertUser } from '@/e2e/fixtures/console-data';
import { users } from '@/db/schema/auth';
import { setUserDisabled, setUserRole } from '@/db/queries/users';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { config } from '@/lib/config';
import { changeOwnPassword, resetUserPassword } from '@/lib/console/users';
import { authOptions } from './options';
import { sessionFromCookieHeader } from './session';
import { beginSession, endSessionsOnSignOut } from './session-lifecycle';

const secret = 'nextauth-session-test-secret-0123456789';
const PASSWORD = 'Session-Password-4b2e';
let t: TestDatabase;

beforeAll(async () => {
  process.env.NEXTAUTH_SECRET = secret;
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** A session as next-auth issues it after sign-in: the jwt callback's claims, encoded with the console's secret. */
async function signedIn(userId: string, now = new Date()) {
  const claims = await beginSession(t.db, userId, now);
  const token = { sub: userId, email: 'x@example.com', ...claims };
  return { token, cookie: `next-auth.session-token=${await encode({ token, secret })}` };
}

const user = (name: string, role: 'support' | 'admin' = 'support') => insertUser(t.db, { email: `${name}@sessions.example.com`, role, password: PASSWORD });

describe('sessions end', () => {
  it('sign-out ends every session of the user, a copied cookie included; a new sign-in works', async () => {
    const id = await user('out');
    const first = await signedIn(id);
    const copied = await signedIn(id);
    expect(await sessionFromCookieHeader(t.db, copied.cookie)).not.toBeNull();
    await endSessionsOnSignOut(t.db, first.token);
    expect(await sessionFromCookieHeader(t.db, first.cookie)).toBeNull();
    expect(await sessionFromCookieHeader(t.db, copied.cookie)).toBeNull();
    // Signing out again with an ended session changes nothing; a fresh sign-in is live.
    const again = await signedIn(id);
    await endSessionsOnSignOut(t.db, first.token);
    expect(await sessionFromCookieHeader(t.db, again.cookie)).not.toBeNull();
  });

  it('a role change, disabling, a password change and an admin reset each end the sessions', async () => {
    const admin = await user('resetter', 'admin');
    const id = await user('changes');
    const changes: [string, () => Promise<unknown>][] = [
      ['role change', () => setUserRole(t.db, { id, role: 'oncall' })],
      ['disable + enable', async () => (await setUserDisabled(t.db, { id, disabled: true })) && setUserDisabled(t.db, { id, disabled: false })],
      [
        'password change',
        () =>
          changeOwnPassword(t.db, { userId: id, email: 'changes@sessions.example.com', currentPassword: PASSWORD, newPassword: 'violet-harbour-tractor-91' }),
      ],
      ['admin reset', () => resetUserPassword(t.db, { actorId: admin, actor: 'resetter@sessions.example.com', id, reason: 'lost the password' })],
    ];
    for (const [what, change] of changes) {
      const session = await signedIn(id);
      expect(await sessionFromCookieHeader(t.db, session.cookie), what).not.toBeNull();
      expect(await change()).toBeTruthy();
      expect(await sessionFromCookieHeader(t.db, session.cookie), what).toBeNull();
    }
  });

  it('a session idle past SESSION_IDLE_TIMEOUT is refused, and a later sign-in does not bring it back', async () => {
    const id = await user('idle');
    const idleMs = config().SESSION_IDLE_TIMEOUT;
    const start = new Date(Date.now() - idleMs - 60_000);
    const old = await signedIn(id, start);
    const now = new Date();
    expect(await sessionFromCookieHeader(t.db, old.cookie, now)).toBeNull();
    const fresh = await signedIn(id, now);
    expect(await sessionFromCookieHeader(t.db, fresh.cookie, now)).not.toBeNull();
    expect(await sessionFromCookieHeader(t.db, old.cookie, now)).toBeNull();
  });

  it('activity keeps a session alive past the idle timeout from its sign-in, moving the clock at most once a minute', async () => {
    const id = await user('active');
    const idleMs = config().SESSION_IDLE_TIMEOUT;
    const start = new Date(Date.now() - 3 * idleMs);
    const session = await signedIn(id, start);
    for (let step = 1; step <= 3; step += 1) {
      const now = new Date(start.getTime() + step * (idleMs - 1_000));
      expect(await sessionFromCookieHeader(t.db, session.cookie, now), `request ${step}`).not.toBeNull();
    }
    const seen = async () => (await t.db.select().from(users).where(eq(users.id, id)))[0]?.sessionSeenAt?.getTime() ?? 0;
    const before = await seen();
    expect(before).toBe(start.getTime() + 3 * (idleMs - 1_000));
    expect(await sessionFromCookieHeader(t.db, session.cookie, new Date(before + 30_000))).not.toBeNull();
    expect(await seen()).toBe(before);
  });

  it("next-auth's own session endpoint refuses an ended session (the jwt callback throws, so next-auth clears the cookie)", async () => {
    process.env.DATABASE_URL = t.url;
    const id = await user('endpoint');
    const session = await signedIn(id);
    const jwt = authOptions().callbacks?.jwt;
    if (!jwt) throw new Error('no jwt callback');
    await expect(jwt({ token: session.token, user: undefined as never, account: null })).resolves.toMatchObject({ sub: id });
    await endSessionsOnSignOut(t.db, session.token);
    await expect(jwt({ token: session.token, user: undefined as never, account: null })).rejects.toThrow('session ended');
  });
});
