import type { DbOrTx } from '@/db/client';
import { recordSignIn } from '@/db/queries/audit';
import { findUserByEmail } from '@/db/queries/users';
import { isRole } from './roles';
import { auditUnknownSignIn, auditUserSignIn, MAX_EMAIL_LENGTH, signInActions } from './sign-in-audit';

/** Where next-auth sends a single sign-on that has no usable console account. */
export const NO_CONSOLE_ACCOUNT = '/signin?error=NoConsoleAccount';

const method = 'oidc';

/**
 * The id_token's `email_verified` claim as a yes or no. Some providers send the strings "true"
 * and "false" instead of booleans (AWS Cognito, providers built on it): "false" must refuse
 * like false. Accounts are matched by email, so an email the provider does not vouch for
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
 * creates the user first and single sign-on matches on the verified email. Every outcome
 * writes one audit row; the answer is the same redirect whatever the reason for a refusal.
 */
export async function admitOidcSignIn(db: DbOrTx, { email, verified }: { email: string; verified: boolean }): Promise<true | string> {
  const trimmed = email.trim();
  const lookable = trimmed.length > 0 && trimmed.length <= MAX_EMAIL_LENGTH && !trimmed.includes('\0');
  const user = lookable ? await findUserByEmail(db, { email: trimmed }) : null;
  if (!user) {
    await auditUnknownSignIn(db, {
      email,
      method,
      reason: verified ? 'no console account for this single sign-on email' : 'single sign-on email not verified',
    });
    return NO_CONSOLE_ACCOUNT;
  }
  if (!verified) {
    await auditUserSignIn(db, { user, action: signInActions.failure, method, reason: 'single sign-on email not verified' });
    return NO_CONSOLE_ACCOUNT;
  }
  if (user.disabledAt) {
    await auditUserSignIn(db, {
      user,
      action: signInActions.refused,
      method,
      reason: 'account disabled',
      after: { disabledAt: user.disabledAt.toISOString() },
    });
    return NO_CONSOLE_ACCOUNT;
  }
  if (!isRole(user.role)) {
    await auditUserSignIn(db, { user, action: signInActions.refused, method, reason: 'role not recognised' });
    return NO_CONSOLE_ACCOUNT;
  }
  await recordSignIn(db, {
    userId: user.id,
    entry: {
      actor: user.email,
      action: signInActions.success,
      reason: 'signed in with single sign-on',
      before: { failedLogins: user.failedLogins },
      after: { method, role: user.role, failedLogins: 0 },
    },
  });
  return true;
}
