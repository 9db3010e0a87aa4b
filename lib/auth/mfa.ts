import type { DbOrTx } from '@/db/client';
import { claimTotpStep, findUserMfa, spendRecoveryCode } from '@/db/queries/mfa';
import type { UserMfaRow } from '@/db/schema/auth';
import { openMfaSecret } from './mfa-secret';
import type { Role } from './roles';
import { acceptedTotpStep, hashRecoveryCode, secondFactorKind } from './totp';
import type { Permission } from './permissions';

export type SecondFactor = 'totp' | 'recovery';

export const MFA_PENDING_MESSAGE =
  'Your role must sign in with an authenticator app: set one up on the Account page (/account) first. Until then the console allows nothing else.';

/** What a session pending MFA may still do: its Account page (enroll, change the password). */
export function allowedBeforeMfa(permission: Permission): boolean {
  return permission === 'account.password' || permission === 'account.mfa';
}

/** Roles that may act only after signing in with a second factor (README, "Multi-factor sign-in"). */
export function roleNeedsMfa(role: Role, requiredRoles: readonly Role[]): boolean {
  return requiredRoles.includes(role);
}

/**
 * A password account whose role needs MFA and that has none enabled may sign in only to enroll
 * (lib/http/console-route.ts `authorize`). Single sign-on-only accounts (no password) leave the
 * second factor to their identity provider.
 */
export function mfaPendingFor({
  role,
  hasPassword,
  mfa,
  requiredRoles,
}: {
  role: Role;
  hasPassword: boolean;
  mfa: UserMfaRow | null;
  requiredRoles: readonly Role[];
}): boolean {
  return hasPassword && roleNeedsMfa(role, requiredRoles) && !mfa?.enabledAt;
}

export function mfaEnabled(mfa: UserMfaRow | null): mfa is UserMfaRow & { enabledAt: Date } {
  return mfa?.enabledAt instanceof Date;
}

/**
 * Checks a TOTP or recovery code against an enabled enrollment and spends it: a TOTP's step is
 * claimed (a step at or before the last claimed one is refused), a recovery code leaves the list.
 * Null for a wrong, reused or malformed code, or a secret that does not open (wrong key).
 */
export async function spendSecondFactor(
  db: DbOrTx,
  { mfa, code, now, noticeKeySecret }: { mfa: UserMfaRow; code: string; now: Date; noticeKeySecret: string },
): Promise<SecondFactor | null> {
  const kind = secondFactorKind(code);
  if (kind === 'recovery') return (await spendRecoveryCode(db, { userId: mfa.userId, codeHash: hashRecoveryCode(code) })) ? 'recovery' : null;
  if (kind !== 'totp') return null;
  const secret = openMfaSecret({ sealed: mfa.secretSealed, userId: mfa.userId, noticeKeySecret });
  if (!secret) return null;
  const step = acceptedTotpStep({ secret, code: code.trim(), now, lastStep: mfa.lastStep });
  if (step === null) return null;
  return (await claimTotpStep(db, { userId: mfa.userId, step })) ? 'totp' : null;
}

/** The user's enabled enrollment, or null (none, or still pending its first code). */
export async function enabledMfaOf(db: DbOrTx, userId: string): Promise<UserMfaRow | null> {
  const mfa = await findUserMfa(db, { userId });
  return mfaEnabled(mfa) ? mfa : null;
}
