import type { DbOrTx } from '@/db/client';
import { recordSignIn } from '@/db/queries/audit';
import { findIdentityOfUser, findUserByIdentity, linkIdentity, type OidcSubject } from '@/db/queries/user-identities';
import { findUserByEmail } from '@/db/queries/users';
import { isRole } from './roles';
import { auditDisabledSignIn, auditUnknownSignIn, auditUserSignIn, MAX_EMAIL_LENGTH, signInActions } from './sign-in-audit';

/** Where next-auth sends a single sign-on that has no usable console account. */
export const NO_CONSOLE_ACCOUNT = '/signin?error=NoConsoleAccount';

const method = 'oidc';

/**
 * The id_token's `email_verified` claim as a yes or no. Some providers send the strings "true"
 * and "false" instead of booleans (AWS Cognito, providers built on it): "false" must refuse
 * like false. A first sign-in links by email, so an email the provider does not vouch for
 * could be anybody's: a missing claim refuses unless OIDC_EMAIL_VERIFIED=when-sent says this
 * provider never sends it and its users cannot choose their own email (e.g. a single-tenant
 * Microsoft Entra ID).
 */
export function isEmailVerified(claim: unknown, { whenMissing }: { whenMissing: 'refuse' | 'trust' }): boolean {
  if (claim === undefined) return whenMissing === 'trust';
  return claim === true || (typeof claim === 'string' && claim.trim().toLowerCase() === 'true');
}

/**
 * next-auth's signIn callback for the OIDC provider. OIDC never creates accounts: an admin
 * creates the user first. A console user is found by the identity linked to it, the id_token's
 * issuer + subject (`user_identities`), never by email: an email at the provider can change
 * hands or be renamed, a subject cannot. The user's first single sign-on links the identity,
 * once, by their verified email, and only while the user has no subject at this issuer yet;
 * from then on another subject with that email is refused. Every outcome writes one audit row;
 * the answer is the same redirect whatever the reason for a refusal.
 */
export async function admitOidcSignIn(
  db: DbOrTx,
  { identity, email, verified }: { identity: OidcSubject; email: string; verified: boolean },
): Promise<true | string> {
  const linked = await findUserByIdentity(db, identity);
  const user = linked ?? (await userToLink(db, { email }));
  if (!user) {
    await auditUnknownSignIn(db, {
      email,
      method,
      reason: verified ? 'no console account for this single sign-on email' : 'single sign-on email not verified',
    });
    return NO_CONSOLE_ACCOUNT;
  }
  if (!linked && !verified) {
    await auditUserSignIn(db, { user, action: signInActions.failure, method, reason: 'single sign-on email not verified' });
    return NO_CONSOLE_ACCOUNT;
  }
  if (!linked && (await findIdentityOfUser(db, { userId: user.id, issuer: identity.issuer }))) {
    await auditUserSignIn(db, { user, action: signInActions.refused, method, reason: 'another single sign-on identity is linked to this account' });
    return NO_CONSOLE_ACCOUNT;
  }
  if (user.disabledAt) {
    await auditDisabledSignIn(db, { user, disabledAt: user.disabledAt, method });
    return NO_CONSOLE_ACCOUNT;
  }
  if (!isRole(user.role)) {
    await auditUserSignIn(db, { user, action: signInActions.refused, method, reason: 'role not recognised' });
    return NO_CONSOLE_ACCOUNT;
  }
  // Two first sign-ins racing with different subjects: the insert lets one through.
  if (!linked && !(await linkIdentity(db, { ...identity, userId: user.id }))) {
    await auditUserSignIn(db, { user, action: signInActions.refused, method, reason: 'another single sign-on identity is linked to this account' });
    return NO_CONSOLE_ACCOUNT;
  }
  await recordSignIn(db, {
    userId: user.id,
    entry: {
      actor: user.email,
      action: signInActions.success,
      reason: 'signed in with single sign-on',
      before: { failedLogins: user.failedLogins },
      after: { method, role: user.role, failedLogins: 0, issuer: identity.issuer, identity: linked ? 'linked' : 'newly linked' },
    },
  });
  return true;
}

async function userToLink(db: DbOrTx, { email }: { email: string }) {
  const trimmed = email.trim();
  const lookable = trimmed.length > 0 && trimmed.length <= MAX_EMAIL_LENGTH && !trimmed.includes('\0');
  return lookable ? findUserByEmail(db, { email: trimmed }) : null;
}
