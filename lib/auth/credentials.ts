import type { DbOrTx } from '@/db/client';
import { findUserByEmail, lockUser, recordFailedLogin, recordSuccessfulLogin } from '@/db/queries/users';
import { isLocked, lockoutAfterFailures } from './lockout';
import { dummyPasswordHash, verifyPassword } from './password';
import { isRole, type Role } from './roles';

export type ConsoleUser = { id: string; email: string; name: string; role: Role };

export type AuthenticateResult =
  | { ok: true; user: ConsoleUser }
  | { ok: false; reason: 'invalid' | 'locked' | 'disabled'; lockedUntil?: Date };

/**
 * Checks an email + password. Unknown email, wrong password and OIDC-only accounts all
 * answer `invalid` after the same scrypt work, so the answer reveals nothing about which
 * emails exist. A locked account is refused before the password is looked at.
 */
export async function authenticate(
  db: DbOrTx,
  { email, password, now = new Date() }: { email: string; password: string; now?: Date },
): Promise<AuthenticateResult> {
  // PostgreSQL text cannot hold NUL, so no stored email does: such input matches nobody and
  // must not reach the query (next-auth would show the driver's error on the sign-in page).
  const user = email.includes('\0') ? null : await findUserByEmail(db, { email });
  if (!user || !user.passwordHash) {
    await verifyPassword(password, await dummyPasswordHash());
    return { ok: false, reason: 'invalid' };
  }
  if (user.disabledAt) return { ok: false, reason: 'disabled' };
  if (isLocked(user.lockedUntil, now) && user.lockedUntil) return { ok: false, reason: 'locked', lockedUntil: user.lockedUntil };
  const matches = await verifyPassword(password, user.passwordHash);
  if (!matches) {
    const failures = await recordFailedLogin(db, { id: user.id });
    const lockMs = lockoutAfterFailures(failures);
    if (lockMs > 0) {
      const until = new Date(now.getTime() + lockMs);
      await lockUser(db, { id: user.id, until });
      return { ok: false, reason: 'locked', lockedUntil: until };
    }
    return { ok: false, reason: 'invalid' };
  }
  await recordSuccessfulLogin(db, { id: user.id });
  if (!isRole(user.role)) return { ok: false, reason: 'invalid' };
  return { ok: true, user: { id: user.id, email: user.email, name: user.name, role: user.role } };
}
