import type { DbOrTx } from '@/db/client';
import { recordFailedSignIn, recordLockout, recordSignIn } from '@/db/queries/audit';
import { findUserByEmail } from '@/db/queries/users';
import type { SignInClient } from './address-throttle';
import { isLocked, lockoutAfterFailures } from './lockout';
import { dummyPasswordHash, verifyPassword } from './password';
import { isRole, type Role } from './roles';
import { addressDetail, auditThrottledAddress, auditUnknownSignIn, auditUserSignIn, MAX_EMAIL_LENGTH, signInActions } from './sign-in-audit';

export type ConsoleUser = { id: string; email: string; name: string; role: Role };

export type AuthenticateResult =
  | { ok: true; user: ConsoleUser }
  | { ok: false; reason: 'invalid' | 'locked' | 'disabled'; lockedUntil?: Date }
  | { ok: false; reason: 'throttled'; retryInMs: number };

/** Longer passwords are refused unread: scrypt's cost grows with the input. */
export const MAX_PASSWORD_LENGTH = 1024;

const method = 'credentials';

/**
 * Checks an email + password and writes one audit row per attempt (two when this failure
 * starts a lock): `sign_in.success`, `sign_in.failure`, `sign_in.lockout`, `sign_in.refused`.
 * The password itself is never stored or logged.
 *
 * Unknown email, wrong password and OIDC-only accounts all answer `invalid` after the same
 * scrypt work and the same number of statements after it (one: the audit row, which for a
 * known user also counts the failure), so neither the answer nor its timing reveals which
 * emails exist. A disabled account answers like them; a locked one is refused before the
 * password is looked at.
 *
 * With a `client` (its address known through trusted proxies), every failure also counts
 * against that address, one more statement whatever the email; the failure that uses up the
 * address's window writes `sign_in.throttled`. From then until the window ends the address
 * is refused before any lookup or scrypt work, writing nothing: that bounds both the CPU and
 * the audit rows an anonymous client can cost, and stops it locking out account after account.
 */
export async function authenticate(
  db: DbOrTx,
  { email, password, now = new Date(), client }: { email: string; password: string; now?: Date; client?: SignInClient },
): Promise<AuthenticateResult> {
  if (!client) return checkCredentials(db, { email, password, now });
  const refusal = await client.throttle.refusal(client.address);
  if (refusal) return { ok: false, reason: 'throttled', retryInMs: refusal.retryInMs };
  const result = await checkCredentials(db, { email, password, now, clientAddress: client.address });
  if (result.ok) return result;
  const { maxFailures, windowMs } = client.throttle;
  const { failures, retryInMs } = await client.throttle.countFailure(client.address);
  // Exactly one failure sees the count reach the limit (the store increments atomically),
  // however many arrive at once: the ones racing past the check above count beyond it.
  if (failures === maxFailures) await auditThrottledAddress(db, { address: client.address, method, failures, windowMs, retryInMs });
  return result;
}

async function checkCredentials(
  db: DbOrTx,
  { email, password, now, clientAddress }: { email: string; password: string; now: Date; clientAddress?: string },
): Promise<AuthenticateResult> {
  const origin = addressDetail(clientAddress);
  if (!password || password.length > MAX_PASSWORD_LENGTH) {
    await auditUnknownSignIn(db, { email, method, reason: `no password, or one over ${MAX_PASSWORD_LENGTH} characters`, clientAddress });
    return { ok: false, reason: 'invalid' };
  }
  // PostgreSQL text cannot hold NUL, so no stored email does, nor one longer than users are
  // created with: such input matches nobody and must not reach the query (next-auth would
  // show the driver's error on the sign-in page).
  const trimmed = email.trim();
  const lookable = trimmed.length > 0 && trimmed.length <= MAX_EMAIL_LENGTH && !trimmed.includes('\0');
  const user = lookable ? await findUserByEmail(db, { email: trimmed }) : null;
  if (!user || !user.passwordHash || user.disabledAt) {
    await verifyPassword(password, await dummyPasswordHash());
    if (!user) await auditUnknownSignIn(db, { email, method, reason: 'unknown email', clientAddress });
    else if (user.disabledAt)
      await auditUserSignIn(db, {
        user,
        action: signInActions.refused,
        method,
        reason: 'account disabled',
        after: { disabledAt: user.disabledAt.toISOString() },
        clientAddress,
      });
    else await auditUserSignIn(db, { user, action: signInActions.failure, method, reason: 'no password set (single sign-on only)', clientAddress });
    return user?.disabledAt ? { ok: false, reason: 'disabled' } : { ok: false, reason: 'invalid' };
  }
  if (isLocked(user.lockedUntil, now) && user.lockedUntil) {
    await auditUserSignIn(db, {
      user,
      action: signInActions.refused,
      method,
      reason: 'account locked',
      after: { lockedUntil: user.lockedUntil.toISOString() },
      clientAddress,
    });
    return { ok: false, reason: 'locked', lockedUntil: user.lockedUntil };
  }
  if (!(await verifyPassword(password, user.passwordHash))) {
    const failures = await recordFailedSignIn(db, {
      userId: user.id,
      entry: { actor: user.email, action: signInActions.failure, reason: 'wrong password', after: { method, ...origin } },
    });
    const lockMs = lockoutAfterFailures(failures);
    if (lockMs <= 0) return { ok: false, reason: 'invalid' };
    const until = new Date(now.getTime() + lockMs);
    await recordLockout(db, {
      userId: user.id,
      until,
      entry: {
        actor: user.email,
        action: signInActions.lockout,
        reason: `locked for ${Math.round(lockMs / 1000)} s after ${failures} failed sign-ins`,
        before: { lockedUntil: user.lockedUntil?.toISOString() ?? null },
        after: { ...origin, lockedUntil: until.toISOString(), failedLogins: failures },
      },
    });
    return { ok: false, reason: 'locked', lockedUntil: until };
  }
  if (!isRole(user.role)) {
    await auditUserSignIn(db, { user, action: signInActions.refused, method, reason: 'role not recognised', clientAddress });
    return { ok: false, reason: 'invalid' };
  }
  await recordSignIn(db, {
    userId: user.id,
    entry: {
      actor: user.email,
      action: signInActions.success,
      reason: 'signed in with email and password',
      before: { failedLogins: user.failedLogins },
      after: { method, ...origin, role: user.role, failedLogins: 0 },
    },
  });
  return { ok: true, user: { id: user.id, email: user.email, name: user.name, role: user.role } };
}
