import { and, eq } from 'drizzle-orm';
import type { CredentialsConfig } from 'next-auth/providers/credentials';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { insertUser } from '@/e2e/fixtures/console-data';
import { auditLog, type AuditRow } from '@/db/schema/audit';
import { users } from '@/db/schema/auth';
import { auditRowsWrittenBy } from '@/testing/audit-rows';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { ADDRESS_KEY_PREFIX, createAddressThrottle, signInClientOf, type AddressThrottle, type SignInClient } from './address-throttle';
import { authenticate } from './credentials';
import { authOptions } from './options';

const MAX = 4;
const WINDOW_MS = 10 * 60_000;
const PASSWORD = 'Right-Password-5e9a';

let t: TestDatabase;
let throttle: AddressThrottle;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestDatabase();
  throttle = createAddressThrottle({ pool: t.pool, maxFailures: MAX, windowMs: WINDOW_MS });
  for (const name of ['target', 'victim1', 'victim2', 'other', 'wired'])
    ids[name] = await insertUser(t.db, { email: `${name}@example.com`, role: 'support', password: PASSWORD });
  const [sso] = await t.db.insert(users).values({ email: 'sso@example.com', name: 'SSO', role: 'support', passwordHash: null }).returning({ id: users.id });
  ids.sso = sso?.id ?? '';
  ids.gone = await insertUser(t.db, { email: 'gone@example.com', role: 'support', password: PASSWORD });
  await t.db.update(users).set({ disabledAt: new Date() }).where(eq(users.id, ids.gone));
});
afterAll(async () => {
  await t.drop();
});

const clientAt = (address: string, using: AddressThrottle = throttle): SignInClient => ({ address, throttle: using });

const rowsWrittenBy = (attempt: () => Promise<unknown>) => auditRowsWrittenBy(t.db, attempt);

async function throttledRows(address: string): Promise<AuditRow[]> {
  return t.db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.action, 'sign_in.throttled'), eq(auditLog.targetId, address)));
}

async function userRow(name: string) {
  const [row] = await t.db
    .select()
    .from(users)
    .where(eq(users.id, ids[name] ?? ''));
  return row;
}

describe('failed sign-ins per client address', () => {
  it('after MAX failures of any kind the address is refused, even with the right password, before any lookup and with no row written', async () => {
    const address = '203.0.113.10';
    const failures = [
      { email: 'victim1@example.com', password: 'wrong' },
      { email: 'nobody@example.com', password: 'wrong' },
      { email: 'sso@example.com', password: 'wrong' },
      { email: 'gone@example.com', password: PASSWORD },
    ];
    expect(failures).toHaveLength(MAX);
    for (const [index, attempt] of failures.entries()) {
      const rows = await rowsWrittenBy(async () =>
        expect(await authenticate(t.db, { ...attempt, client: clientAt(address) })).toMatchObject({
          ok: false,
          reason: index === MAX - 1 ? 'disabled' : 'invalid',
        }),
      );
      // Each failure's own row carries the address; the one that uses up the window adds sign_in.throttled.
      expect(rows[0]?.after).toMatchObject({ method: 'credentials', clientAddress: address });
      expect(rows.map((row) => row.action)).toEqual(
        index === MAX - 1
          ? [expect.stringMatching(/^sign_in\.(failure|refused)$/), 'sign_in.throttled']
          : [expect.stringMatching(/^sign_in\.(failure|refused)$/)],
      );
    }
    const [throttledRow] = await throttledRows(address);
    expect(throttledRow).toMatchObject({
      actor: address,
      targetType: 'address',
      targetId: address,
      reason: expect.stringMatching(new RegExp(`^sign-ins from this address refused for \\d+ s after ${MAX} failed sign-ins within ${WINDOW_MS / 1000} s$`)),
      after: { method: 'credentials', clientAddress: address, failures: MAX, windowSeconds: WINDOW_MS / 1000 },
    });

    const before = await userRow('target');
    const stored = await t.pool.query('select points, expire from rate_limit_domains where key = $1', [`${ADDRESS_KEY_PREFIX}:${address}`]);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const rows = await rowsWrittenBy(async () => {
        const result = await authenticate(t.db, { email: 'target@example.com', password: attempt % 2 === 0 ? PASSWORD : 'wrong', client: clientAt(address) });
        expect(result).toMatchObject({ ok: false, reason: 'throttled' });
        if (result.ok || result.reason !== 'throttled') return;
        expect(result.retryInMs).toBeGreaterThan(0);
        expect(result.retryInMs).toBeLessThanOrEqual(WINDOW_MS);
      });
      expect(rows).toEqual([]);
    }
    // Refused before the password was looked at: the account saw nothing. Each refusal is counted
    // (the count is taken before the check, atomically) but the window still ends when it did.
    expect(await userRow('target')).toEqual(before);
    expect((await t.pool.query('select points, expire from rate_limit_domains where key = $1', [`${ADDRESS_KEY_PREFIX}:${address}`])).rows).toEqual(
      stored.rows.map((row: { points: number; expire: unknown }) => ({ ...row, points: row.points + 5 })),
    );
    expect(await throttledRows(address)).toHaveLength(1);
  });

  it('another address is not affected, and a success from it carries its address', async () => {
    const rows = await rowsWrittenBy(async () =>
      expect(await authenticate(t.db, { email: 'target@example.com', password: PASSWORD, client: clientAt('2001:db8::7') })).toMatchObject({ ok: true }),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ action: 'sign_in.success', after: { method: 'credentials', clientAddress: '2001:db8::7' } });
  });

  it('is shared by every console process through the store', async () => {
    const address = '198.51.100.20';
    const elsewhere = createAddressThrottle({ pool: t.pool, maxFailures: MAX, windowMs: WINDOW_MS });
    for (let attempt = 0; attempt < MAX; attempt += 1) await authenticate(t.db, { email: 'nobody@example.com', password: 'wrong', client: clientAt(address) });
    expect(await authenticate(t.db, { email: 'target@example.com', password: PASSWORD, client: clientAt(address, elsewhere) })).toMatchObject({
      ok: false,
      reason: 'throttled',
    });
  });

  it('counts IPv6 clients by their /64: rotating through one network does not get around the limit', async () => {
    for (let attempt = 0; attempt < MAX; attempt += 1) {
      await authenticate(t.db, { email: 'nobody@example.com', password: 'wrong', client: clientAt(`2001:db8:aa:bb::${(attempt + 1).toString(16)}`) });
    }
    // The row names the network the limit now refuses, and the address whose failure used it up.
    expect(await throttledRows('2001:db8:aa:bb::/64')).toEqual([
      expect.objectContaining({
        actor: `2001:db8:aa:bb::${MAX.toString(16)}`,
        targetType: 'address',
        after: expect.objectContaining({ clientAddress: `2001:db8:aa:bb::${MAX.toString(16)}` }),
      }),
    ]);
    expect(await authenticate(t.db, { email: 'target@example.com', password: PASSWORD, client: clientAt('2001:db8:aa:bb:ffff:1:2:3') })).toMatchObject({
      ok: false,
      reason: 'throttled',
    });
    expect(await authenticate(t.db, { email: 'target@example.com', password: PASSWORD, client: clientAt('2001:db8:aa:bc::1') })).toMatchObject({ ok: true });
  });

  it('writes one sign_in.throttled row when failures from one address race past the limit together', async () => {
    const address = '198.51.100.30';
    const results = await Promise.all(
      Array.from({ length: MAX + 3 }, () => authenticate(t.db, { email: 'nobody@example.com', password: 'wrong', client: clientAt(address) })),
    );
    expect(results.every((result) => !result.ok)).toBe(true);
    expect(await throttledRows(address)).toHaveLength(1);
    expect(await authenticate(t.db, { email: 'target@example.com', password: PASSWORD, client: clientAt(address) })).toMatchObject({
      ok: false,
      reason: 'throttled',
    });
  });

  it('lets the address in again once its window has passed, and counts afresh', async () => {
    const address = '198.51.100.40';
    for (let attempt = 0; attempt < MAX; attempt += 1) await authenticate(t.db, { email: 'nobody@example.com', password: 'wrong', client: clientAt(address) });
    expect(await authenticate(t.db, { email: 'target@example.com', password: PASSWORD, client: clientAt(address) })).toMatchObject({
      ok: false,
      reason: 'throttled',
    });
    // The window's end as the limiter stores it (ms since the epoch): move it into the past.
    const moved = await t.pool.query('update rate_limit_domains set expire = $2 where key = $1', [`${ADDRESS_KEY_PREFIX}:${address}`, Date.now() - 1]);
    expect(moved.rowCount).toBe(1);
    expect(await authenticate(t.db, { email: 'target@example.com', password: PASSWORD, client: clientAt(address) })).toMatchObject({ ok: true });
    for (let attempt = 0; attempt < MAX - 1; attempt += 1)
      await authenticate(t.db, { email: 'nobody@example.com', password: 'wrong', client: clientAt(address) });
    expect(await authenticate(t.db, { email: 'target@example.com', password: PASSWORD, client: clientAt(address) })).toMatchObject({ ok: true });
    await authenticate(t.db, { email: 'nobody@example.com', password: 'wrong', client: clientAt(address) });
    expect(await throttledRows(address)).toHaveLength(2);
  });

  it('stops a spray across accounts before it locks them all out', async () => {
    const address = '198.51.100.50';
    for (let round = 0; round < 10; round += 1) {
      for (const name of ['victim1', 'victim2'])
        await authenticate(t.db, { email: `${name}@example.com`, password: `guess-${round}`, client: clientAt(address) });
    }
    expect((await userRow('victim1'))?.failedLogins).toBeLessThanOrEqual(MAX);
    expect((await userRow('victim2'))?.failedLogins).toBeLessThanOrEqual(MAX / 2);
    expect((await userRow('victim2'))?.lockedUntil).toBeNull();
  });
});

describe('the address next-auth hands to authorize', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of ['TRUSTED_PROXY_HOPS', 'SIGN_IN_MAX_FAILURES_PER_ADDRESS', 'NEXTAUTH_SECRET', 'DATABASE_URL']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it('with TRUSTED_PROXY_HOPS=0 no address is trusted, so nothing is ever limited per address', async () => {
    expect(signInClientOf({ forwardedFor: '203.0.113.99' })).toBeUndefined();
    for (let attempt = 0; attempt < MAX * 3; attempt += 1) {
      await authenticate(t.db, { email: 'nobody@example.com', password: 'wrong', client: signInClientOf({ forwardedFor: '203.0.113.99' }) });
    }
    expect(
      await authenticate(t.db, { email: 'other@example.com', password: PASSWORD, client: signInClientOf({ forwardedFor: '203.0.113.99' }) }),
    ).toMatchObject({ ok: true });
    const stored = await t.pool.query('select key from rate_limit_domains where key like $1', [`${ADDRESS_KEY_PREFIX}:%`]);
    expect(stored.rows.map((row: { key: string }) => row.key)).not.toContain(`${ADDRESS_KEY_PREFIX}:203.0.113.99`);
  });

  it('behind one proxy, authorize counts the X-Forwarded-For entry the proxy appended and throws AddressThrottled with minutes', async () => {
    Object.assign(process.env, { TRUSTED_PROXY_HOPS: '1', SIGN_IN_MAX_FAILURES_PER_ADDRESS: '2', NEXTAUTH_SECRET: 'n'.repeat(32), DATABASE_URL: t.url });
    const provider = authOptions().providers.find((candidate) => candidate.id === 'credentials');
    const authorize = (provider as { options?: CredentialsConfig } | undefined)?.options?.authorize;
    if (!authorize) throw new Error('no credentials authorize');
    // The client rotates what it sends; the proxy's own entry (the last one) stays the same.
    const headers = (spoofed: string) => ({ headers: { 'x-forwarded-for': `${spoofed}, 192.0.2.77` } });
    expect(await authorize({ email: 'nobody@example.com', password: 'wrong' }, headers('10.0.0.1'))).toBeNull();
    expect(await authorize({ email: 'nobody@example.com', password: 'wrong' }, headers('10.0.0.2'))).toBeNull();
    await expect(authorize({ email: 'wired@example.com', password: PASSWORD }, headers('10.0.0.3'))).rejects.toThrow(/^AddressThrottled:15$/);
    const [row] = await throttledRows('192.0.2.77');
    expect(row?.after).toMatchObject({ failures: 2, windowSeconds: 15 * 60 });
    expect(await authorize({ email: 'wired@example.com', password: PASSWORD }, { headers: { 'x-forwarded-for': '192.0.2.78' } })).toMatchObject({
      email: 'wired@example.com',
    });
  });
});
