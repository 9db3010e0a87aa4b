import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '@/lib/auth/credentials';
import { hashPassword } from '@/lib/auth/password';
import { createTestDatabase, type TestDatabase } from '@/test/db';
import { fuzzParameters, hostileString, poisoned } from './arbitraries';
import { snapshotTables } from './harness';

/**
 * The sign-in form's email and password, as next-auth's `authorize` hands them to
 * `authenticate` (next-auth turns a thrown error into an error page carrying its message, so a
 * throw here would show SQL to whoever typed the input). Never throws, never signs in, writes
 * exactly one bounded audit row without the password, and an email that names no user changes
 * no other row.
 */

const knownEmail = 'fuzz-signin@example.com';
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  await t.pool.query(`insert into users (email, name, role, password_hash) values ($1, 'Sign-in', 'support', $2)`, [knownEmail, await hashPassword('the-right-password-123')]);
});

afterAll(async () => {
  await t.drop();
});

describe('authenticate with hostile credentials', () => {
  it('never throws or signs in; one bounded audit row each; an unknown email changes nothing else', async () => {
    const emails = fc.oneof(hostileString, poisoned(fc.constant(knownEmail)), fc.constantFrom(knownEmail.toUpperCase(), ` ${knownEmail} `, `${knownEmail}\u0000`, "' or 1=1 --@example.com"));
    // Not the right password with NULs appended: scrypt keys HMAC with it, and HMAC pads keys
    // with zero bytes, so "pw" and "pw\0" are the same password (a property of HMAC, not a bug here).
    const passwords = fc.oneof(hostileString.map((text) => text.slice(0, 1024)), fc.constantFrom('', '\u0000the-right-password-123', 'THE-RIGHT-PASSWORD-123'));
    await fc.assert(
      fc.asyncProperty(emails, passwords, async (email, password) => {
        const { audit_log: _auditBefore, ...before } = await snapshotTables(t.pool);
        const lastId = await t.pool.query<{ id: number }>('select coalesce(max(id), 0)::int as id from audit_log');
        const result = await authenticate(t.db, { email, password });
        expect(result.ok).toBe(false);
        const written = await t.pool.query<{ action: string; actor: string; target_id: string; row: string }>('select action, actor, target_id, a::text as row from audit_log a where id > $1', [lastId.rows[0]?.id ?? 0]);
        // One row per attempt, plus sign_in.lockout when this failure of the known user locks it.
        expect(written.rows.filter((row) => row.action !== 'sign_in.lockout')).toHaveLength(1);
        expect(written.rows.length).toBeLessThanOrEqual(2);
        for (const row of written.rows) {
          expect(row.actor.length).toBeLessThanOrEqual(320);
          expect(row.target_id.length).toBeLessThanOrEqual(320);
          // Long enough not to occur by chance in the row's fixed words, and not typed into the email too.
          if (password.length >= 12 && !email.toLowerCase().includes(password.toLowerCase())) expect(row.row.toLowerCase().includes(password.toLowerCase())).toBe(false);
        }
        const { audit_log: _auditAfter, ...after } = await snapshotTables(t.pool);
        if (email.trim().toLowerCase() !== knownEmail) expect(after).toEqual(before);
      }),
      { ...fuzzParameters(25), examples: [[`a\u0000@example.com`, 'x'], [`${knownEmail}\u0000`, 'x']] },
    );
  }, 120_000);
});
