import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertUser } from '@/e2e/fixtures/console-data';
import { users } from '@/db/schema/auth';
import { loadAuditPage } from '@/lib/console/audit-view';
import { auditRowsWrittenBy, lastAuditId } from '@/testing/audit-rows';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { authenticate } from './credentials';
import { FREE_ATTEMPTS } from './lockout';
import { admitOidcSignIn, NO_CONSOLE_ACCOUNT } from './oidc-sign-in';
import { auditableEmail, MAX_EMAIL_LENGTH } from './sign-in-audit';

/** Every password typed in this file: none may ever show up anywhere in audit_log. */
const PASSWORDS = {
  alice: 'Alice-Right-Pw-7b1e',
  wrong: 'Wrong-Guess-Pw-93ac',
  locky: 'Locky-Right-Pw-4d20',
  gone: 'Gone-Right-Pw-5f31',
  ghost: 'Ghost-Typed-Pw-c8e2',
} as const;

let t: TestDatabase;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestDatabase();
  ids.alice = await insertUser(t.db, { email: 'alice@example.com', role: 'oncall', password: PASSWORDS.alice });
  ids.locky = await insertUser(t.db, { email: 'locky@example.com', role: 'support', password: PASSWORDS.locky });
  ids.gone = await insertUser(t.db, { email: 'gone@example.com', role: 'support', password: PASSWORDS.gone });
  await t.db.update(users).set({ disabledAt: new Date() }).where(eq(users.email, 'gone@example.com'));
  const [sso] = await t.db.insert(users).values({ email: 'sso@example.com', name: 'SSO', role: 'manager', passwordHash: null }).returning({ id: users.id });
  ids.sso = sso?.id ?? '';
});
afterAll(async () => {
  await t.drop();
});

const rowsWrittenBy = (attempt: () => Promise<unknown>) => auditRowsWrittenBy(t.db, attempt);

async function userCount(): Promise<number> {
  const [row] = await t.db.select({ n: sql<number>`count(*)::int` }).from(users);
  return row?.n ?? 0;
}

describe('credentials sign-in audit', () => {
  it('a successful sign-in writes one sign_in.success row about that user', async () => {
    const rows = await rowsWrittenBy(async () =>
      expect(await authenticate(t.db, { email: ' Alice@Example.com ', password: PASSWORDS.alice })).toMatchObject({ ok: true }),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor: 'alice@example.com',
      action: 'sign_in.success',
      targetType: 'user',
      targetId: ids.alice,
      reason: 'signed in with email and password',
      after: { method: 'credentials', role: 'oncall', failedLogins: 0 },
    });
  });

  it('a wrong password writes one sign_in.failure row carrying the failure count', async () => {
    const rows = await rowsWrittenBy(async () =>
      expect(await authenticate(t.db, { email: 'alice@example.com', password: PASSWORDS.wrong })).toEqual({ ok: false, reason: 'invalid' }),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor: 'alice@example.com',
      action: 'sign_in.failure',
      targetType: 'user',
      targetId: ids.alice,
      reason: 'wrong password',
      before: { failedLogins: 0 },
      after: { method: 'credentials', failedLogins: 1 },
    });
    const [alice] = await t.db
      .select()
      .from(users)
      .where(eq(users.id, ids.alice ?? ''));
    expect(alice?.failedLogins).toBe(1);
  });

  it('an unknown email writes one row, creates no user and answers like a wrong password', async () => {
    const usersBefore = await userCount();
    const rows = await rowsWrittenBy(async () =>
      expect(await authenticate(t.db, { email: 'Ghost@Example.com', password: PASSWORDS.ghost })).toEqual({ ok: false, reason: 'invalid' }),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor: 'ghost@example.com',
      action: 'sign_in.failure',
      targetType: 'email',
      targetId: 'ghost@example.com',
      reason: 'unknown email',
      before: null,
      after: { method: 'credentials' },
    });
    expect(await userCount()).toBe(usersBefore);
    expect(await t.db.select().from(users).where(eq(users.email, 'ghost@example.com'))).toEqual([]);
  });

  it('an account without a password (single sign-on only) writes one failure row about that user', async () => {
    const rows = await rowsWrittenBy(async () =>
      expect(await authenticate(t.db, { email: 'sso@example.com', password: PASSWORDS.wrong })).toEqual({ ok: false, reason: 'invalid' }),
    );
    expect(rows.map((row) => [row.action, row.targetId, row.reason])).toEqual([['sign_in.failure', ids.sso, 'no password set (single sign-on only)']]);
  });

  it('the failure that starts a lock writes its failure row and a sign_in.lockout row; while locked, a refusal row', async () => {
    const now = new Date();
    for (let attempt = 1; attempt < FREE_ATTEMPTS; attempt += 1) {
      const rows = await rowsWrittenBy(() => authenticate(t.db, { email: 'locky@example.com', password: PASSWORDS.wrong, now }));
      expect(rows.map((row) => row.action)).toEqual(['sign_in.failure']);
    }
    const locking = await rowsWrittenBy(async () =>
      expect(await authenticate(t.db, { email: 'locky@example.com', password: PASSWORDS.wrong, now })).toMatchObject({ ok: false, reason: 'locked' }),
    );
    const until = new Date(now.getTime() + 30_000).toISOString();
    expect(locking).toHaveLength(2);
    expect(locking[0]).toMatchObject({ action: 'sign_in.failure', targetId: ids.locky, after: { failedLogins: FREE_ATTEMPTS } });
    expect(locking[1]).toMatchObject({
      actor: 'locky@example.com',
      action: 'sign_in.lockout',
      targetType: 'user',
      targetId: ids.locky,
      reason: `locked for 30 s after ${FREE_ATTEMPTS} failed sign-ins`,
      before: { lockedUntil: null },
      after: { lockedUntil: until, failedLogins: FREE_ATTEMPTS },
    });
    const refused = await rowsWrittenBy(async () =>
      expect(await authenticate(t.db, { email: 'locky@example.com', password: PASSWORDS.locky, now })).toMatchObject({ ok: false, reason: 'locked' }),
    );
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      actor: 'locky@example.com',
      action: 'sign_in.refused',
      targetId: ids.locky,
      reason: 'account locked',
      after: { method: 'credentials', lockedUntil: until },
    });
    const [locky] = await t.db
      .select()
      .from(users)
      .where(eq(users.id, ids.locky ?? ''));
    expect(locky?.failedLogins).toBe(FREE_ATTEMPTS);
  });

  it('a disabled account writes one sign_in.refused row, even with the right password', async () => {
    const rows = await rowsWrittenBy(async () =>
      expect(await authenticate(t.db, { email: 'gone@example.com', password: PASSWORDS.gone })).toEqual({ ok: false, reason: 'disabled' }),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor: 'gone@example.com',
      action: 'sign_in.refused',
      targetType: 'user',
      targetId: ids.gone,
      reason: 'account disabled',
      after: { method: 'credentials' },
    });
  });

  it('hostile input gets a clean refusal and exactly one bounded row, and creates no user', async () => {
    const usersBefore = await userCount();
    const hostile = [
      `${'a'.repeat(1024 * 1024)}@example.com`,
      `${'😀'.repeat(400)}@example.com`,
      'x\u0000y@example.com',
      'alice@example.com\u0000',
      "' or 1=1 --@example.com",
      "alice@example.com'; drop table users; --",
      'a\uD800b@example.com',
      'victim@example.com\r\nBcc: attacker@example.com',
      '',
      '   ',
      `${' '.repeat(5000)}alice@example.com${' '.repeat(5000)}x`,
    ];
    for (const email of hostile) {
      const rows = await rowsWrittenBy(async () =>
        expect(await authenticate(t.db, { email, password: PASSWORDS.ghost })).toEqual({ ok: false, reason: 'invalid' }),
      );
      expect(rows).toHaveLength(1);
      const [row] = rows;
      expect(row).toMatchObject({ action: 'sign_in.failure', targetType: 'email', reason: 'unknown email' });
      expect(row?.actor.length).toBeLessThanOrEqual(MAX_EMAIL_LENGTH);
      expect(row?.targetId).toBe(row?.actor);
      expect(row?.actor).not.toMatch(/[\p{Cc}\p{Cs}]/u);
    }
    expect(await userCount()).toBe(usersBefore);
    const [huge] = await rowsWrittenBy(() => authenticate(t.db, { email: `${'B'.repeat(100_000)}@example.com`, password: PASSWORDS.ghost }));
    expect(huge?.actor).toBe(`${'b'.repeat(MAX_EMAIL_LENGTH - 1)}…`);
    expect(huge?.after).toEqual({ method: 'credentials', emailLength: 100_012 });
  });

  it('an empty or over-long password is refused unread and audited once, without a lookup', async () => {
    for (const password of ['', 'p'.repeat(1025)]) {
      const rows = await rowsWrittenBy(async () =>
        expect(await authenticate(t.db, { email: 'alice@example.com', password })).toEqual({ ok: false, reason: 'invalid' }),
      );
      expect(rows.map((row) => [row.action, row.targetType, row.targetId])).toEqual([['sign_in.failure', 'email', 'alice@example.com']]);
    }
  });
});

describe('single sign-on audit', () => {
  it('a known, verified email signs in and writes one sign_in.success row; it clears failures like a password sign-in', async () => {
    const rows = await rowsWrittenBy(async () =>
      expect(await admitOidcSignIn(t.db, { identity: { issuer: 'https://idp.example', subject: 'sso' }, email: 'sso@example.com', verified: true })).toBe(true),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor: 'sso@example.com',
      action: 'sign_in.success',
      targetType: 'user',
      targetId: ids.sso,
      reason: 'signed in with single sign-on',
      after: { method: 'oidc', role: 'manager' },
    });
    const [sso] = await t.db
      .select()
      .from(users)
      .where(eq(users.id, ids.sso ?? ''));
    expect(sso?.lastLoginAt).toBeInstanceOf(Date);
  });

  it('no account, an unverified email and a disabled account are each refused with one row and no user created', async () => {
    const usersBefore = await userCount();
    const cases = [
      {
        email: 'stranger@example.com',
        verified: true,
        expected: {
          action: 'sign_in.failure',
          targetType: 'email',
          targetId: 'stranger@example.com',
          reason: 'no console account for this single sign-on email',
        },
      },
      {
        email: 'alice@example.com',
        verified: false,
        expected: { action: 'sign_in.failure', targetType: 'user', targetId: ids.alice, reason: 'single sign-on email not verified' },
      },
      {
        email: 'gone@example.com',
        verified: true,
        expected: { action: 'sign_in.refused', targetType: 'user', targetId: ids.gone, reason: 'account disabled' },
      },
      { email: '', verified: true, expected: { action: 'sign_in.failure', targetType: 'email', targetId: '(empty)' } },
    ];
    for (const { email, verified, expected } of cases) {
      const rows = await rowsWrittenBy(async () =>
        expect(await admitOidcSignIn(t.db, { identity: { issuer: 'https://idp.example', subject: `sub-${email}` }, email, verified })).toBe(NO_CONSOLE_ACCOUNT),
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ ...expected, after: { method: 'oidc' } });
    }
    expect(await userCount()).toBe(usersBefore);
  });
});

describe('sign-in rows on the audit page', () => {
  it('the action filter finds them all by "sign_in." and each kind by its name; the actor filter by email', async () => {
    const all = await loadAuditPage(t.db, { action: 'sign_in.' });
    expect(new Set(all.rows.map((row) => row.action))).toEqual(new Set(['sign_in.success', 'sign_in.failure', 'sign_in.lockout', 'sign_in.refused']));
    for (const action of ['sign_in.success', 'sign_in.failure', 'sign_in.lockout', 'sign_in.refused']) {
      const page = await loadAuditPage(t.db, { action });
      expect(page.rows.length).toBeGreaterThan(0);
      expect(page.rows.every((row) => row.action === action)).toBe(true);
    }
    const locky = await loadAuditPage(t.db, { actor: 'Locky@example.com', action: 'sign_in.lockout' });
    expect(locky.rows.map((row) => row.targetId)).toEqual([ids.locky]);
  });

  it('no password typed in this file appears anywhere in audit_log', async () => {
    expect(await lastAuditId(t.db)).toBeGreaterThan(20);
    for (const password of Object.values(PASSWORDS)) {
      const found = await t.pool.query<{ n: number }>(`select count(*)::int as n from audit_log a where strpos(lower(a::text), lower($1)) > 0`, [password]);
      expect(found.rows[0]?.n, password).toBe(0);
    }
    const whole = await t.pool.query<{ n: number }>(`select count(*)::int as n from audit_log a where a::text ~* 'pw-'`);
    expect(whole.rows[0]?.n).toBe(0);
  });
});

describe('auditableEmail', () => {
  it('normalizes like the lookup, replaces unprintable characters and cuts long input without splitting a surrogate pair', () => {
    expect(auditableEmail('  Bob@Example.COM ')).toEqual({ text: 'bob@example.com', cut: false });
    expect(auditableEmail('a\u0000b\r\n\uD800')).toEqual({ text: 'a\uFFFDb\uFFFD\uFFFD\uFFFD', cut: false });
    expect(auditableEmail(' \t')).toEqual({ text: '(empty)', cut: false });
    const emoji = auditableEmail('😀'.repeat(400));
    expect(emoji.cut).toBe(true);
    expect(emoji.text.length).toBeLessThanOrEqual(MAX_EMAIL_LENGTH);
    expect(emoji.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(emoji.text.endsWith('😀…')).toBe(true);
  });
});
