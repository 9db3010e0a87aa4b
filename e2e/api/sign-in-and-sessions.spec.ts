import { randomBytes } from 'node:crypto';
import { request as playwrightRequest, type APIRequestContext } from '@playwright/test';
import { createDb, createPool } from '@/db/client';
import { hashPassword } from '@/lib/auth/password';
import { FAST_SCRYPT } from '@/e2e/fixtures/console-data';
import { insertTestJob } from '@/testing/jobs';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * Sign-in abuse, sessions that end and four eyes that are two people, through `next start`
 * and next-auth's real endpoints. Every spec makes its own accounts, so locking, revoking or
 * resetting them never touches the seeded users other specs sign in with. Console POSTs carry
 * the console's own Origin, as the browser client does.
 */

type StorageState = Awaited<ReturnType<APIRequestContext['storageState']>>;
type Attempt = { error: string | null; cookie: string | null; state: StorageState };

async function attemptSignIn(baseURL: string, email: string, password: string): Promise<Attempt> {
  const context = await playwrightRequest.newContext({ baseURL });
  try {
    const csrf = (await (await context.get('/api/auth/csrf')).json()) as { csrfToken: string };
    const response = await context.post('/api/auth/callback/credentials', {
      form: { csrfToken: csrf.csrfToken, email, password, callbackUrl: `${baseURL}/`, json: 'true' },
    });
    const { url } = (await response.json()) as { url: string };
    const state = await context.storageState();
    const cookies = state.cookies.filter((cookie) => cookie.name.includes('next-auth.session-token'));
    return {
      error: new URL(url, baseURL).searchParams.get('error'),
      cookie: cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ') || null,
      state,
    };
  } finally {
    await context.dispose();
  }
}

async function signedInContext(baseURL: string, email: string, password: string): Promise<{ context: APIRequestContext; cookie: string }> {
  const attempt = await attemptSignIn(baseURL, email, password);
  if (!attempt.cookie) throw new Error(`sign-in for ${email} failed: ${attempt.error ?? 'no cookie'}`);
  // The whole cookie jar (session and next-auth's CSRF cookie), as a browser keeps it.
  return {
    context: await playwrightRequest.newContext({ baseURL, storageState: attempt.state, extraHTTPHeaders: { origin: baseURL } }),
    cookie: attempt.cookie,
  };
}

const unique = () => randomBytes(4).toString('hex');

test.describe('sign-in abuse', () => {
  test('50 wrong passwords at once: at most 5 reach the password check, every answer is the generic one, hashing is bounded; an admin unlocks', async ({
    sql,
    baseURL,
    apiAs,
  }) => {
    test.setTimeout(180_000);
    const base = baseURL ?? '';
    const email = `flood-${unique()}@e2e.example.com`;
    const password = 'flood-right-password-1';
    const [user] = await sql<{ id: string }>(`insert into users (email, name, role, password_hash) values ($1, 'Flood', 'manager', $2) returning id`, [
      email,
      await hashPassword(password, FAST_SCRYPT),
    ]);
    const id = user?.id ?? '';

    const attempts = await Promise.all(Array.from({ length: 50 }, (_, n) => attemptSignIn(base, email, `wrong-guess-${n}`)));
    const checked = await sql<{ n: number }>(
      `select count(*)::int as n from audit_log where target_id = $1 and action = 'sign_in.failure' and reason = 'wrong password'`,
      [id],
    );
    expect(checked[0]?.n).toBeGreaterThan(0);
    expect(checked[0]?.n).toBeLessThanOrEqual(5);
    // Nothing says "locked": locked, wrong and unknown answer alike; beyond the hash gate, "busy".
    const errors = new Set(attempts.map((attempt) => attempt.error));
    expect(
      [...errors].every((error) => error === 'CredentialsSignin' || error === 'SignInBusy'),
      [...errors].join(', '),
    ).toBe(true);
    expect(attempts.every((attempt) => attempt.cookie === null)).toBe(true);
    const [locked] = await sql<{ locked_until: Date | null; failed_logins: number }>('select locked_until, failed_logins from users where id = $1', [id]);
    expect(locked?.locked_until?.getTime() ?? 0).toBeGreaterThan(Date.now());

    // A locked account and an unknown one get the same answer, even with the right password.
    expect((await attemptSignIn(base, email, password)).error).toBe('CredentialsSignin');
    expect((await attemptSignIn(base, `nobody-${unique()}@e2e.example.com`, password)).error).toBe('CredentialsSignin');

    // An admin unlocks, with a reason, audited; then the right password signs in.
    const admin = await apiAs('admin');
    const unlocked = await admin.post('/api/console/users/unlock', { data: { id, reason: 'locked out by the flood test' }, headers: { origin: base } });
    expect(unlocked.status()).toBe(200);
    expect(await unlocked.json()).toMatchObject({ ok: true, data: { id, failedLogins: 0, lockedUntil: null } });
    const [audit] = await sql<{ actor: string; before: { failedLogins: number } }>(
      `select actor, before from audit_log where action = 'user.unlock' and target_id = $1`,
      [id],
    );
    expect(audit).toMatchObject({ actor: 'admin@e2e.example.com', before: { failedLogins: locked?.failed_logins } });
    expect((await attemptSignIn(base, email, password)).cookie).not.toBeNull();
  });

  test('an anonymous flood of unknown emails is bounded by the hash gate: some answer SignInBusy, none signs in', async ({ baseURL }) => {
    test.setTimeout(120_000);
    const attempts = await Promise.all(Array.from({ length: 40 }, () => attemptSignIn(baseURL ?? '', `anon-${unique()}@e2e.example.com`, 'anything-at-all')));
    const errors = attempts.map((attempt) => attempt.error);
    expect(errors.filter((error) => error === 'SignInBusy').length).toBeGreaterThan(0);
    expect(errors.every((error) => error === 'SignInBusy' || error === 'CredentialsSignin')).toBe(true);
  });
});

test.describe('sessions end', () => {
  test('a cookie copied before sign-out is refused after it (401), and a fresh sign-in works', async ({ sql, baseURL }) => {
    const base = baseURL ?? '';
    const email = `leaver-${unique()}@e2e.example.com`;
    const password = 'leaver-right-password-1';
    await sql(`insert into users (email, name, role, password_hash) values ($1, 'Leaver', 'admin', $2)`, [email, await hashPassword(password, FAST_SCRYPT)]);
    const { context, cookie } = await signedInContext(base, email, password);
    const copied = await playwrightRequest.newContext({ baseURL: base, extraHTTPHeaders: { cookie } });
    expect((await copied.get('/api/console/users')).status()).toBe(200);

    const csrf = (await (await context.get('/api/auth/csrf')).json()) as { csrfToken: string };
    const out = await context.post('/api/auth/signout', { form: { csrfToken: csrf.csrfToken, callbackUrl: `${base}/signin`, json: 'true' } });
    // next-auth answers a sign-out it refused (a CSRF mismatch) with its confirmation page instead.
    expect(((await out.json()) as { url: string }).url).toBe(`${base}/signin`);
    expect((await context.get('/api/console/users')).status()).toBe(401);

    const after = await copied.get('/api/console/users');
    expect(after.status()).toBe(401);
    expect(await after.json()).toMatchObject({ ok: false, error: { code: 'unauthenticated' } });
    // next-auth's own session endpoint does not vouch for it either.
    expect(await (await copied.get('/api/auth/session')).json()).toEqual({});
    const again = await signedInContext(base, email, password);
    expect((await again.context.get('/api/console/users')).status()).toBe(200);
    await Promise.all([context.dispose(), copied.dispose(), again.context.dispose()]);
  });

  test("an admin reset ends the user's sessions and the new password works; the user's own change ends them again", async ({ sql, baseURL, apiAs }) => {
    const base = baseURL ?? '';
    const email = `forgetful-${unique()}@e2e.example.com`;
    const password = 'forgetful-password-1';
    const [user] = await sql<{ id: string }>(`insert into users (email, name, role, password_hash) values ($1, 'Forgetful', 'support', $2) returning id`, [
      email,
      await hashPassword(password, FAST_SCRYPT),
    ]);
    const before = await signedInContext(base, email, password);
    const admin = await apiAs('admin');
    const reset = await admin.post('/api/console/users/password-reset', { data: { id: user?.id, reason: 'forgot the password' }, headers: { origin: base } });
    expect(reset.status()).toBe(200);
    const { data } = (await reset.json()) as { data: { password: string } };
    expect((await before.context.get('/api/console/overview/pending')).status()).toBe(401);
    expect((await attemptSignIn(base, email, password)).error).toBe('CredentialsSignin');
    const mine = await signedInContext(base, email, data.password);
    expect((await mine.context.get('/api/console/overview/pending')).status()).toBe(200);

    // A breached password is refused and changes nothing; a good one ends every session.
    const breached = await mine.context.post('/api/console/account/password', { data: { currentPassword: data.password, newPassword: 'qwerty123456' } });
    expect(breached.status()).toBe(400);
    expect((await mine.context.get('/api/console/overview/pending')).status()).toBe(200);
    const changed = await mine.context.post('/api/console/account/password', {
      data: { currentPassword: data.password, newPassword: 'violet-harbour-tractor-91' },
    });
    expect(changed.status()).toBe(200);
    expect((await mine.context.get('/api/console/overview/pending')).status()).toBe(401);
    expect((await attemptSignIn(base, email, 'violet-harbour-tractor-91')).cookie).not.toBeNull();
    await Promise.all([before.context.dispose(), mine.context.dispose()]);
  });
});

test.describe('four eyes are two people', () => {
  test('an admin cannot approve a replay requested by a manager account that admin created; an unrelated manager can', async ({ sql, baseURL, apiAs }) => {
    test.setTimeout(120_000);
    const base = baseURL ?? '';
    const tag = unique();
    const pool = createPool(process.env.DATABASE_URL ?? '', { max: 1 });
    try {
      const db = createDb(pool);
      for (let n = 0; n < 2; n += 1) await insertTestJob(db, { source: `four-eyes-${tag}`, state: 'sent' });
    } finally {
      await pool.end();
    }
    const adminPassword = 'creator-admin-password-1';
    const adminEmail = `creator-${tag}@e2e.example.com`;
    await sql(`insert into users (email, name, role, password_hash) values ($1, 'Creator', 'admin', $2)`, [
      adminEmail,
      await hashPassword(adminPassword, FAST_SCRYPT),
    ]);
    const creator = await signedInContext(base, adminEmail, adminPassword);
    const puppetEmail = `puppet-${tag}@e2e.example.com`;
    const puppetPassword = 'puppet-manager-password-1';
    const created = await creator.context.post('/api/console/users', {
      data: { email: puppetEmail, name: 'Puppet', role: 'manager', password: puppetPassword, reason: 'a second pair of eyes, supposedly' },
    });
    expect(created.status()).toBe(201);
    const puppet = await signedInContext(base, puppetEmail, puppetPassword);
    const requested = await puppet.context.post('/api/console/replays', { data: { filter: { source: `four-eyes-${tag}` }, reason: 'incident 24' } });
    expect(requested.status()).toBe(201);
    const { data } = (await requested.json()) as { data: { id: string } };
    const state = async () => (await sql<{ state: string }>('select state from replays where id = $1', [data.id]))[0]?.state;

    const byCreator = await creator.context.post('/api/console/replays/decide', { data: { id: data.id, decision: 'approve', reason: 'looks right to me' } });
    expect(byCreator.status()).toBe(403);
    expect(await byCreator.json()).toMatchObject({
      ok: false,
      error: { code: 'forbidden', message: expect.stringMatching(/Four-eyes rule: you created the account/) },
    });
    expect(await state()).toBe('requested');

    // Control: the seeded manager, whom neither created, approves; the requester then cancels it.
    const manager = await apiAs('manager');
    const approved = await manager.post('/api/console/replays/decide', {
      data: { id: data.id, decision: 'approve', reason: 'checked' },
      headers: { origin: base },
    });
    expect(approved.status()).toBe(200);
    expect(await state()).toBe('approved');
    const [audit] = await sql<{ after: { fourEyes: { held: string[] } } }>(
      `select a.after from audit_log a join replays r on r.batch_id = a.target_id where r.id = $1 and a.action = 'replay.approve'`,
      [data.id],
    );
    expect(audit?.after.fourEyes.held).toContain('approver_did_not_create_requester');
    expect((await puppet.context.post('/api/console/replays/cancel', { data: { id: data.id, reason: 'test done' } })).status()).toBe(200);
    await Promise.all([creator.context.dispose(), puppet.context.dispose()]);
  });
});
