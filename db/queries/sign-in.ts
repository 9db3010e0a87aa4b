import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { users } from '@/db/schema/auth';

export type LockoutSchedule = { freeAttempts: number; baseMs: number; capMs: number };

/**
 * One password check's place in its account's count, taken before the check, in one statement:
 * the failure count goes up by one and, from the schedule's free attempts on, the lock starts
 * now (lib/auth/lockout.ts, the same arithmetic). The row lock makes attempts arriving together
 * queue here, so each sees the count and the lock of those before it: at most `freeAttempts`
 * in a row ever reach the password check, however many are sent at once. A check that then
 * succeeds clears both (recordSignIn). Null: the account is locked (or gone), nothing counted.
 */
export async function reserveSignInAttempt(
  db: DbOrTx,
  { userId, now, schedule }: { userId: string; now: Date; schedule: LockoutSchedule },
): Promise<{ failedLogins: number; lockedUntil: Date | null } | null> {
  const at = now.toISOString();
  const result = await db.execute<{ failed_logins: number; locked_until: string | Date | null }>(sql`
    update users u set
      failed_logins = u.failed_logins + 1,
      locked_until = case when u.failed_logins + 1 >= ${schedule.freeAttempts}
        then ${at}::timestamptz + make_interval(secs => least(
          ${schedule.baseMs / 1000}::float8 * power(2, least(u.failed_logins + 1 - ${schedule.freeAttempts}, 20)),
          ${schedule.capMs / 1000}::float8))
        else u.locked_until end
    where u.id = ${userId} and (u.locked_until is null or u.locked_until <= ${at}::timestamptz)
    returning u.failed_logins, u.locked_until`);
  const row = result.rows[0];
  if (!row) return null;
  return { failedLogins: row.failed_logins, lockedUntil: row.locked_until === null ? null : new Date(row.locked_until) };
}

/** A successful sign-in whose stored hash was made at an older cost: store the new one, unless the password changed meanwhile. */
export async function replacePasswordHash(db: DbOrTx, { userId, from, to }: { userId: string; from: string; to: string }): Promise<boolean> {
  const rows = await db
    .update(users)
    .set({ passwordHash: to })
    .where(and(eq(users.id, userId), eq(users.passwordHash, from)))
    .returning({ id: users.id });
  return rows.length > 0;
}
