import type { DbOrTx } from '@/db/client';
import { insertAuditEntries, recordSignIn, type AuditEntry } from '@/db/queries/audit';
import { replacePasswordHash, reserveSignInAttempt } from '@/db/queries/sign-in';
import { findUserByEmail } from '@/db/queries/users';
import type { SignInClient } from './address-throttle';
import { PasswordHashingBusy } from './hash-gate';
import { config } from '@/lib/config';
import { lockoutSchedule } from './lockout';
import { enabledMfaOf, spendSecondFactor, type SecondFactor } from './mfa';
import { dummyPasswordHash, hashPassword, needsRehash, verifyPassword } from './password';
import { isRole, type Role } from './roles';
import {
  addressDetail,
  auditDisabledSignIn,
  auditThrottledAddress,
  auditUnknownSignIn,
  auditUserSignIn,
  MAX_EMAIL_LENGTH,
  signInActions,
  type SignInMethod,
} from './sign-in-audit';

export type ConsoleUser = { id: string; email: string; name: string; role: Role };

/**
 * What happened, for the audit log and the tests. What the person signing in is told is only
 * "wrong email or password" for every failure (lib/auth/options.ts), or "busy" / "throttled",
 * which depend on the load and the client address, never on the account.
 */
export type AuthenticateResult =
  | { ok: true; user: ConsoleUser }
  | { ok: false; reason: 'invalid' | 'locked' | 'disabled' | 'busy'; lockedUntil?: Date }
  | { ok: false; reason: 'throttled'; retryInMs: number };

/** Longer passwords are refused unread: scrypt's cost grows with the input. */
export const MAX_PASSWORD_LENGTH = 1024;

/**
 * Checks an email + password and writes one audit row per attempt (two when this failure
 * starts a lock): `sign_in.success`, `sign_in.failure`, `sign_in.lockout`, `sign_in.refused`.
 * The password itself is never stored or logged.
 *
 * Every path costs one scrypt: unknown email, OIDC-only, disabled and locked accounts compare
 * against a dummy hash, so neither the answer nor its timing reveals which emails exist or
 * which are locked. A known account's attempt is counted before its check, atomically
 * (reserveSignInAttempt): 50 guesses sent at once reach the password check at most
 * FREE_ATTEMPTS times, the rest are refused as locked.
 *
 * With a `client` (its address known through trusted proxies), every attempt is first counted
 * against that address the same way (AddressThrottle.admit), and a success gives its count
 * back; the failure that uses up the address's window writes `sign_in.throttled`. Until the
 * window ends the address is refused before any lookup or scrypt work, writing nothing: that
 * bounds both the CPU and the audit rows an anonymous client can cost, and stops it locking
 * out account after account. Without one, the process's hash gate (hash-gate.ts) still bounds
 * the scrypt work in flight, answering `busy` beyond it.
 */
export async function authenticate(
  db: DbOrTx,
  {
    email,
    password,
    code = '',
    now = new Date(),
    client,
    method = 'credentials',
  }: {
    email: string;
    password: string;
    code?: string;
    now?: Date;
    client?: SignInClient;
    method?: Extract<SignInMethod, 'credentials' | 'cli' | 'reauthenticate'>;
  },
): Promise<AuthenticateResult> {
  if (!client) return checkCredentialsUnlessBusy(db, { email, password, code, now, method });
  const { admitted, attempts, retryInMs } = await client.throttle.admit(client.address);
  if (!admitted) return { ok: false, reason: 'throttled', retryInMs };
  const result = await checkCredentialsUnlessBusy(db, { email, password, code, now, method, clientAddress: client.address });
  if (result.ok) {
    await client.throttle.forgive(client.address);
    return result;
  }
  // Exactly one admitted attempt holds the last place of the window (the store increments
  // atomically), however many arrive at once; the ones after it were never checked.
  const { maxFailures, windowMs } = client.throttle;
  if (attempts === maxFailures) await auditThrottledAddress(db, { address: client.address, method, failures: attempts, windowMs, retryInMs });
  return result;
}

async function checkCredentialsUnlessBusy(db: DbOrTx, params: CheckParams): Promise<AuthenticateResult> {
  try {
    return await checkCredentials(db, params);
  } catch (error) {
    if (error instanceof PasswordHashingBusy) return { ok: false, reason: 'busy' };
    throw error;
  }
}

type CheckParams = { email: string; password: string; code: string; now: Date; method: SignInMethod; clientAddress?: string };

async function checkCredentials(db: DbOrTx, { email, password, code, now, method, clientAddress }: CheckParams): Promise<AuthenticateResult> {
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
    else if (user.disabledAt) await auditDisabledSignIn(db, { user, disabledAt: user.disabledAt, method, clientAddress });
    else await auditUserSignIn(db, { user, action: signInActions.failure, method, reason: 'no password set (single sign-on only)', clientAddress });
    return user?.disabledAt ? { ok: false, reason: 'disabled' } : { ok: false, reason: 'invalid' };
  }
  const reserved = await reserveSignInAttempt(db, { userId: user.id, now, schedule: lockoutSchedule });
  if (!reserved) {
    await verifyPassword(password, await dummyPasswordHash());
    // As read before the count: a lock that a concurrent attempt just started shows as null here.
    const lockedUntil = user.lockedUntil;
    await auditUserSignIn(db, {
      user,
      action: signInActions.refused,
      method,
      reason: 'account locked',
      after: { lockedUntil: lockedUntil?.toISOString() ?? null },
      clientAddress,
    });
    return { ok: false, reason: 'locked', ...(lockedUntil ? { lockedUntil } : {}) };
  }
  const startedLock = reserved.failedLogins >= lockoutSchedule.freeAttempts && reserved.lockedUntil !== null;
  // A wrong code is a wrong password: the same count, lock and answer (only the audit row differs).
  const refuseCounted = async (reason: string): Promise<AuthenticateResult> => {
    const failures = reserved.failedLogins;
    const entries: AuditEntry[] = [
      {
        actor: user.email,
        action: signInActions.failure,
        targetType: 'user',
        targetId: user.id,
        reason,
        before: { failedLogins: failures - 1 },
        after: { method, ...origin, failedLogins: failures },
      },
    ];
    if (startedLock && reserved.lockedUntil) {
      const lockMs = reserved.lockedUntil.getTime() - now.getTime();
      entries.push({
        actor: user.email,
        action: signInActions.lockout,
        targetType: 'user',
        targetId: user.id,
        reason: `locked for ${Math.round(lockMs / 1000)} s after ${failures} failed sign-ins`,
        before: { lockedUntil: user.lockedUntil?.toISOString() ?? null },
        after: { ...origin, lockedUntil: reserved.lockedUntil.toISOString(), failedLogins: failures },
      });
    }
    await insertAuditEntries(db, { entries });
    return startedLock && reserved.lockedUntil ? { ok: false, reason: 'locked', lockedUntil: reserved.lockedUntil } : { ok: false, reason: 'invalid' };
  };
  if (!(await verifyPassword(password, user.passwordHash))) return refuseCounted('wrong password');
  // Re-entering the password inside a session that already passed its second factor asks no code.
  const mfa = method === 'reauthenticate' ? null : await enabledMfaOf(db, user.id);
  let secondFactor: SecondFactor | null = null;
  if (mfa) {
    secondFactor = await spendSecondFactor(db, { mfa, code, now, noticeKeySecret: config().NOTICE_KEY_SECRET });
    if (!secondFactor) return refuseCounted(code ? 'wrong or already used authentication code' : 'no authentication code (MFA enrolled)');
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
      reason: secondFactor
        ? `signed in with email, password and ${secondFactor === 'totp' ? 'an authenticator code' : 'a recovery code'}`
        : 'signed in with email and password',
      before: { failedLogins: reserved.failedLogins - 1 },
      after: { method, ...origin, role: user.role, failedLogins: 0, ...(secondFactor ? { secondFactor } : {}) },
    },
  });
  if (needsRehash(user.passwordHash)) await replacePasswordHash(db, { userId: user.id, from: user.passwordHash, to: await hashPassword(password) });
  return { ok: true, user: { id: user.id, email: user.email, name: user.name, role: user.role } };
}
