import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_KEY_PREFIX, createAddressThrottle, type AddressThrottle } from '@/lib/auth/address-throttle';
import { throttleKeyOf } from '@/lib/auth/client-address';
import { authenticate } from '@/lib/auth/credentials';
import { hashPassword } from '@/lib/auth/password';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { fuzzParameters, hostileString, poisoned } from './arbitraries';
import { snapshotTables } from './harness';

/**
 * The sign-in form's email and password, as next-auth's `authorize` hands them to
 * `authenticate` (next-auth turns a thrown error into an error page carrying its message, so a
 * throw here would show SQL to whoever typed the input), sometimes from a client address a
 * trusted proxy vouched for. Never throws, never signs in, writes exactly one bounded audit row
 * without the password (plus the lockout or throttle row its failure may start), and an email
 * that names no user changes no other row but its address's failure count. An address that has
 * used up its failures is refused and changes nothing at all, not even the audit log.
 */

const knownEmail = 'fuzz-signin@example.com';
const MAX_FAILURES = 3;
let t: TestDatabase;
let throttle: AddressThrottle;

/** The address's failures in its current window, as the store holds them (IPv6: its /64). */
async function failuresOf(address: string): Promise<number> {
  const stored = await t.pool.query<{ points: number }>('select points from rate_limit_domains where key = $1 and expire > $2', [
    `${ADDRESS_KEY_PREFIX}:${throttleKeyOf(address)}`,
    Date.now(),
  ]);
  return stored.rows[0]?.points ?? 0;
}

/** Every other counter in the store (other addresses, the workers' domain buckets). */
async function otherCounts(address: string | undefined): Promise<unknown[]> {
  const stored = await t.pool.query('select key, points, expire from rate_limit_domains where key <> $1 order by key', [
    `${ADDRESS_KEY_PREFIX}:${address ? throttleKeyOf(address) : ''}`,
  ]);
  return stored.rows;
}

beforeAll(async () => {
  t = await createTestDatabase();
  throttle = createAddressThrottle({ pool: t.pool, maxFailures: MAX_FAILURES, windowMs: 3_600_000 });
  await t.pool.query(`insert into users (email, name, role, password_hash) values ($1, 'Sign-in', 'support', $2)`, [
    knownEmail,
    await hashPassword('the-right-password-123'),
  ]);
});

afterAll(async () => {
  await t.drop();
});

describe('authenticate with hostile credentials', () => {
  it('never throws or signs in; one bounded audit row each, none once throttled; an unknown email changes nothing else', async () => {
    const emails = fc.oneof(
      hostileString,
      poisoned(fc.constant(knownEmail)),
      fc.constantFrom(knownEmail.toUpperCase(), ` ${knownEmail} `, `${knownEmail}\u0000`, "' or 1=1 --@example.com"),
    );
    // Not the right password with NULs appended: scrypt keys HMAC with it, and HMAC pads keys
    // with zero bytes, so "pw" and "pw\0" are the same password (a property of HMAC, not a bug here).
    const passwords = fc.oneof(
      hostileString.map((text) => text.slice(0, 1024)),
      fc.constantFrom('', '\u0000the-right-password-123', 'THE-RIGHT-PASSWORD-123'),
    );
    const addresses = fc.option(fc.constantFrom('203.0.113.1', '203.0.113.2', '2001:db8::3'), { nil: undefined, freq: 2 });
    await fc.assert(
      fc.asyncProperty(emails, passwords, addresses, async (email, password, address) => {
        const whole = await snapshotTables(t.pool);
        const { audit_log: _auditBefore, rate_limit_domains: _countsBefore, ...before } = whole;
        const failuresBefore = address ? await failuresOf(address) : 0;
        const othersBefore = await otherCounts(address);
        if (failuresBefore >= MAX_FAILURES) {
          expect(await authenticate(t.db, { email, password, client: address ? { address, throttle } : undefined })).toMatchObject({
            ok: false,
            reason: 'throttled',
          });
          // Refused unread: only the address's own count moves (it is taken before any check).
          const { rate_limit_domains: _countsRefused, ...refused } = await snapshotTables(t.pool);
          const { rate_limit_domains: _countsWhole, ...kept } = whole;
          expect(refused).toEqual(kept);
          expect(await otherCounts(address)).toEqual(othersBefore);
          return;
        }
        const lastId = await t.pool.query<{ id: number }>('select coalesce(max(id), 0)::int as id from audit_log');
        const result = await authenticate(t.db, { email, password, client: address ? { address, throttle } : undefined });
        expect(result.ok).toBe(false);
        const written = await t.pool.query<{ action: string; actor: string; target_id: string; row: string }>(
          'select action, actor, target_id, a::text as row from audit_log a where id > $1',
          [lastId.rows[0]?.id ?? 0],
        );
        // One row per attempt, plus sign_in.lockout when this failure of the known user locks it
        // and sign_in.throttled when it is the failure that uses up its address's window.
        const startsThrottle = address !== undefined && failuresBefore + 1 === MAX_FAILURES;
        expect(written.rows.filter((row) => row.action !== 'sign_in.lockout' && row.action !== 'sign_in.throttled')).toHaveLength(1);
        expect(written.rows.filter((row) => row.action === 'sign_in.throttled')).toHaveLength(startsThrottle ? 1 : 0);
        expect(written.rows.length).toBeLessThanOrEqual(3);
        if (address) expect(await failuresOf(address)).toBe(failuresBefore + 1);
        expect(await otherCounts(address)).toEqual(othersBefore);
        for (const row of written.rows) {
          expect(row.actor.length).toBeLessThanOrEqual(320);
          expect(row.target_id.length).toBeLessThanOrEqual(320);
          // Long enough not to occur by chance in the row's fixed words, and not typed into the email too.
          if (password.length >= 12 && !email.toLowerCase().includes(password.toLowerCase()))
            expect(row.row.toLowerCase().includes(password.toLowerCase())).toBe(false);
        }
        const { audit_log: _auditAfter, rate_limit_domains: _countsAfter, ...after } = await snapshotTables(t.pool);
        if (email.trim().toLowerCase() !== knownEmail) expect(after).toEqual(before);
      }),
      {
        ...fuzzParameters(50),
        examples: [
          [`a\u0000@example.com`, 'x', undefined],
          [`${knownEmail}\u0000`, 'x', '203.0.113.1'],
        ],
      },
    );
  }, 120_000);
});
