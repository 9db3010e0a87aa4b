import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { users } from '@/db/schema/auth';

/**
 * A sign-in: the user's activity clock starts now, and if every earlier session of theirs was
 * already idle past `idleMs`, their version is raised so none of those comes back to life with
 * this activity. Returns the version the new session carries (null: no such user).
 */
export async function startSession(db: DbOrTx, { userId, now, idleMs }: { userId: string; now: Date; idleMs: number }): Promise<number | null> {
  const at = now.toISOString();
  const [row] = await db
    .update(users)
    .set({
      sessionVersion: sql`case when ${users.sessionSeenAt} is null or ${users.sessionSeenAt} <= ${at}::timestamptz - make_interval(secs => ${idleMs / 1000}::float8)
        then ${users.sessionVersion} + 1 else ${users.sessionVersion} end`,
      sessionSeenAt: sql`${at}::timestamptz`,
    })
    .where(eq(users.id, userId))
    .returning({ sessionVersion: users.sessionVersion });
  return row?.sessionVersion ?? null;
}

/** Moves the activity clock of a live session's user; the caller calls it at most once a minute per user. */
export async function touchSession(db: DbOrTx, { userId, version, now }: { userId: string; version: number; now: Date }): Promise<void> {
  await db
    .update(users)
    .set({ sessionSeenAt: sql`greatest(${users.sessionSeenAt}, ${now.toISOString()}::timestamptz)` })
    .where(and(eq(users.id, userId), eq(users.sessionVersion, version)));
}

/**
 * Ends every session of the user: each carries the version it was issued with, and from now
 * on none matches. With `ifVersion`, only when the user is still at that version (a sign-out
 * with a session that was already ended changes nothing).
 */
export async function endSessions(db: DbOrTx, { userId, ifVersion }: { userId: string; ifVersion?: number }): Promise<boolean> {
  const rows = await db
    .update(users)
    .set({ sessionVersion: sql`${users.sessionVersion} + 1` })
    .where(ifVersion === undefined ? eq(users.id, userId) : and(eq(users.id, userId), eq(users.sessionVersion, ifVersion)))
    .returning({ id: users.id });
  return rows.length > 0;
}
