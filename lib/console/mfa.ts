import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { beginUserMfa, enableUserMfa, findUserMfa, removeUserMfa, replaceRecoveryCodes } from '@/db/queries/mfa';
import { endSessions } from '@/db/queries/sessions';
import { findUserById } from '@/db/queries/users';
import type { UserView } from '@/lib/api/console/users';
import { authenticate } from '@/lib/auth/credentials';
import { mfaEnabled, spendSecondFactor } from '@/lib/auth/mfa';
import { openMfaSecret, sealMfaSecret } from '@/lib/auth/mfa-secret';
import { acceptedTotpStep, hashRecoveryCode, newRecoveryCodes, newTotpSecret, otpauthUri, RECOVERY_CODE_COUNT } from '@/lib/auth/totp';
import { config } from '@/lib/config';
import { ok, refuse, type Result } from '@/lib/http/refusal';
import { view } from './users';

const WRONG_PASSWORD = 'The password is not right (after several wrong ones the account locks for a few minutes).';

export type MfaStatus = { state: 'none' | 'pending' | 'enabled'; recoveryCodesLeft: number; enabledAt: string | null };

export async function loadMfaStatus(db: DbOrTx, userId: string): Promise<MfaStatus> {
  const mfa = await findUserMfa(db, { userId });
  if (!mfa) return { state: 'none', recoveryCodesLeft: 0, enabledAt: null };
  if (!mfaEnabled(mfa)) return { state: 'pending', recoveryCodesLeft: 0, enabledAt: null };
  return { state: 'enabled', recoveryCodesLeft: mfa.recoveryCodeHashes.length, enabledAt: mfa.enabledAt.toISOString() };
}

/**
 * A new secret for the user's authenticator, pending until its first code. The secret is in this
 * answer only (to be scanned or typed); stored sealed, never logged or audited. The password is
 * asked again, so a borrowed session cannot tie the account to someone else's phone.
 */
export async function beginMfaEnrollment(
  db: DbOrTx,
  { userId, email, currentPassword }: { userId: string; email: string; currentPassword: string },
): Promise<Result<{ secret: string; uri: string }>> {
  const current = await authenticate(db, { email, password: currentPassword, method: 'reauthenticate' });
  if (!current.ok || current.user.id !== userId) return refuse('forbidden', WRONG_PASSWORD);
  const secret = newTotpSecret();
  const row = await beginUserMfa(db, { userId, secretSealed: sealMfaSecret({ secret, userId, noticeKeySecret: config().NOTICE_KEY_SECRET }) });
  if (!row) return refuse('conflict', 'Your authenticator is already set up. To replace it, disable it first (with your password and a current code).');
  return ok({ secret, uri: otpauthUri({ email, secret }) });
}

/** The first code from the app turns the enrollment on and yields the recovery codes, shown once. */
export async function confirmMfaEnrollment(
  db: DbOrTx,
  { userId, email, code, now = new Date() }: { userId: string; email: string; code: string; now?: Date },
): Promise<Result<{ recoveryCodes: string[] }>> {
  const mfa = await findUserMfa(db, { userId });
  if (!mfa || mfaEnabled(mfa))
    return refuse('conflict', mfa ? 'Your authenticator is already set up.' : 'Start the setup first: no secret is waiting for a code.');
  const secret = openMfaSecret({ sealed: mfa.secretSealed, userId, noticeKeySecret: config().NOTICE_KEY_SECRET });
  const step = secret ? acceptedTotpStep({ secret, code: code.trim(), now, lastStep: null }) : null;
  if (step === null) return refuse('invalid_input', 'That code is not the one your app shows now. Check the phone’s clock and type the current six digits.');
  const codes = newRecoveryCodes();
  return db.transaction(async (tx) => {
    if (!(await enableUserMfa(tx, { userId, step, recoveryCodeHashes: codes.map(hashRecoveryCode), now })))
      return refuse('conflict', 'Your authenticator is already set up.');
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: email,
          action: 'user.mfa_enroll',
          targetType: 'user',
          targetId: userId,
          reason: 'set up an authenticator app',
          before: { mfa: 'none' },
          after: { mfa: 'totp', recoveryCodes: RECOVERY_CODE_COUNT },
        },
      ],
    });
    return ok({ recoveryCodes: codes });
  });
}

/** The password (counted like a sign-in) and a current code, or a refusal that says which part to retype. */
async function checkOwnFactors(db: DbOrTx, { userId, email, currentPassword, code }: { userId: string; email: string; currentPassword: string; code: string }) {
  const current = await authenticate(db, { email, password: currentPassword, method: 'reauthenticate' });
  if (!current.ok || current.user.id !== userId) return refuse('forbidden', WRONG_PASSWORD);
  const mfa = await findUserMfa(db, { userId });
  if (!mfaEnabled(mfa)) return refuse('conflict', 'You have no authenticator set up.');
  const factor = await spendSecondFactor(db, { mfa, code, now: new Date(), noticeKeySecret: config().NOTICE_KEY_SECRET });
  if (!factor) return refuse('forbidden', 'That code is not right or was already used; type the current six digits or an unused recovery code.');
  return ok(factor);
}

export async function regenerateRecoveryCodes(
  db: DbOrTx,
  params: { userId: string; email: string; currentPassword: string; code: string },
): Promise<Result<{ recoveryCodes: string[] }>> {
  const checked = await checkOwnFactors(db, params);
  if (!checked.ok) return checked;
  const codes = newRecoveryCodes();
  return db.transaction(async (tx) => {
    if (!(await replaceRecoveryCodes(tx, { userId: params.userId, recoveryCodeHashes: codes.map(hashRecoveryCode) })))
      return refuse('conflict', 'You have no authenticator set up.');
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: params.email,
          action: 'user.mfa_recovery_codes',
          targetType: 'user',
          targetId: params.userId,
          reason: 'made new recovery codes (the old ones no longer work)',
          before: { recoveryCodes: 'replaced' },
          after: { recoveryCodes: RECOVERY_CODE_COUNT },
        },
      ],
    });
    return ok({ recoveryCodes: codes });
  });
}

export async function disableOwnMfa(
  db: DbOrTx,
  params: { userId: string; email: string; currentPassword: string; code: string },
): Promise<Result<{ disabled: true }>> {
  const checked = await checkOwnFactors(db, params);
  if (!checked.ok) return checked;
  return db.transaction(async (tx) => {
    await removeUserMfa(tx, { userId: params.userId });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: params.email,
          action: 'user.mfa_disable',
          targetType: 'user',
          targetId: params.userId,
          reason: `turned off their authenticator (confirmed with password and ${checked.data === 'totp' ? 'a current code' : 'a recovery code'})`,
          before: { mfa: 'totp' },
          after: { mfa: 'none' },
        },
      ],
    });
    return ok({ disabled: true as const });
  });
}

/** An admin removes another user's authenticator (a lost phone): audited, and every session of theirs ends. */
export async function resetUserMfa(db: DbOrTx, params: { actorId: string; actor: string; id: string; reason: string }): Promise<Result<UserView>> {
  if (params.actorId === params.id) return refuse('conflict', 'Turn off your own authenticator on the Account page, with your password and a code.');
  return db.transaction(async (tx) => {
    const target = await findUserById(tx, { id: params.id });
    if (!target) return refuse('not_found', 'No such user.');
    const { wasEnabled } = await removeUserMfa(tx, { userId: params.id });
    if (!wasEnabled) return refuse('conflict', `${target.email} has no authenticator set up; nothing was changed.`);
    await endSessions(tx, { userId: params.id });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: params.actor,
          action: 'user.mfa_reset',
          targetType: 'user',
          targetId: params.id,
          reason: params.reason,
          before: { email: target.email, mfa: 'totp' },
          after: { email: target.email, mfa: 'none', sessions: 'ended' },
        },
      ],
    });
    const { id, email, name, role, disabledAt, lockedUntil, failedLogins, createdAt, lastLoginAt } = target;
    return ok(view({ id, email, name, role, disabledAt, lockedUntil, failedLogins, createdAt, lastLoginAt }));
  });
}
