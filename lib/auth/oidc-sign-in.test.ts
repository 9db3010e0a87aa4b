import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { admitOidcSignIn, isEmailVerified, NO_CONSOLE_ACCOUNT } from './oidc-sign-in';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

describe('the email_verified claim of a single sign-on', () => {
  it('is verified only when the provider says true, as a boolean or as the string some providers send', () => {
    for (const whenMissing of ['refuse', 'trust'] as const) {
      for (const claim of [true, 'true', 'TRUE', ' true ']) expect(isEmailVerified(claim, { whenMissing }), JSON.stringify(claim)).toBe(true);
      for (const claim of [false, 'false', 'False', '', 'yes', 1, 0, null, {}])
        expect(isEmailVerified(claim, { whenMissing }), JSON.stringify(claim)).toBe(false);
    }
  });

  it('refuses a missing claim unless the deployment says its provider never sends one', () => {
    expect(isEmailVerified(undefined, { whenMissing: 'refuse' })).toBe(false);
    expect(isEmailVerified(undefined, { whenMissing: 'trust' })).toBe(true);
  });
});

describe('single sign-on finds the account by issuer + subject, linked once by the verified email', () => {
  const issuer = 'https://idp.example';
  const linkedTo = async (email: string) =>
    (
      await t.pool.query<{ issuer: string; subject: string }>(
        'select i.issuer, i.subject from user_identities i join users u on u.id = i.user_id where u.email = $1 order by i.issuer',
        [email],
      )
    ).rows;
  const reasons = async (email: string) =>
    (await t.pool.query<{ reason: string }>("select reason from audit_log where actor = $1 and action like 'sign_in.%' order by id", [email])).rows.map(
      (row) => row.reason,
    );

  it('links on the first sign-in, then follows the subject: a renamed email still signs in, another subject with the email is refused', async () => {
    await t.pool.query("insert into users (email, name, role) values ('ops@example.com', 'Ops', 'operator')");
    expect(await admitOidcSignIn(t.db, { identity: { issuer, subject: 'sub-ops' }, email: 'ops@example.com', verified: true })).toBe(true);
    expect(await linkedTo('ops@example.com')).toEqual([{ issuer, subject: 'sub-ops' }]);
    // The provider renamed the person's email: the subject still names them.
    expect(await admitOidcSignIn(t.db, { identity: { issuer, subject: 'sub-ops' }, email: 'ops.renamed@elsewhere.example', verified: true })).toBe(true);
    // Someone else got the old email at the provider (or an account with it elsewhere): refused, nothing linked.
    expect(await admitOidcSignIn(t.db, { identity: { issuer, subject: 'sub-impostor' }, email: 'ops@example.com', verified: true })).toBe(NO_CONSOLE_ACCOUNT);
    expect(await linkedTo('ops@example.com')).toEqual([{ issuer, subject: 'sub-ops' }]);
    expect(await reasons('ops@example.com')).toEqual([
      'signed in with single sign-on',
      'signed in with single sign-on',
      'another single sign-on identity is linked to this account',
    ]);
  });

  it('an unverified email links nothing; a subject at another issuer is its own identity', async () => {
    await t.pool.query("insert into users (email, name, role) values ('kim@example.com', 'Kim', 'support')");
    expect(await admitOidcSignIn(t.db, { identity: { issuer, subject: 'sub-kim' }, email: 'kim@example.com', verified: false })).toBe(NO_CONSOLE_ACCOUNT);
    expect(await linkedTo('kim@example.com')).toEqual([]);
    expect(await admitOidcSignIn(t.db, { identity: { issuer: 'https://other.example', subject: 'sub-ops' }, email: 'kim@example.com', verified: true })).toBe(
      true,
    );
    expect(await linkedTo('kim@example.com')).toEqual([{ issuer: 'https://other.example', subject: 'sub-ops' }]);
  });

  it('two first sign-ins racing with different subjects link one', async () => {
    await t.pool.query("insert into users (email, name, role) values ('race@example.com', 'Race', 'support')");
    const outcomes = await Promise.all(
      ['sub-a', 'sub-b', 'sub-c'].map((subject) => admitOidcSignIn(t.db, { identity: { issuer, subject }, email: 'race@example.com', verified: true })),
    );
    expect(outcomes.filter((outcome) => outcome === true)).toHaveLength(1);
    expect(await linkedTo('race@example.com')).toHaveLength(1);
  });
});
