import { and, asc, eq, gt, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { users, type UserRow } from '@/db/schema/auth';
import type { Role } from '@/db/schema/states';
import { isUuid } from '@/db/uuid';

export type UserSummary = Pick<UserRow, 'id' | 'email' | 'name' | 'role' | 'disabledAt' | 'lockedUntil' | 'failedLogins' | 'createdAt' | 'lastLoginAt'>;

const summaryColumns = {
  id: users.id,
  email: users.email,
  name: users.name,
  role: users.role,
  disabledAt: users.disabledAt,
  lockedUntil: users.lockedUntil,
  failedLogins: users.failedLogins,
  createdAt: users.createdAt,
  lastLoginAt: users.lastLoginAt,
};

export async function findUserByEmail(db: DbOrTx, { email }: { email: string }): Promise<UserRow | null> {
  const [row] = await db.select().from(users).where(eq(users.email, email.trim().toLowerCase())).limit(1);
  return row ?? null;
}

export async function findUserById(db: DbOrTx, { id }: { id: string }): Promise<UserRow | null> {
  if (!isUuid(id)) return null;
  const [row] = await db.select().from(users).where(eq(users.id, id)).limit(1);
  return row ?? null;
}

export async function createUser(
  db: DbOrTx,
  params: { email: string; name: string; role: Role; passwordHash: string | null; createdBy?: string | null },
): Promise<UserSummary | null> {
  const [row] = await db
    .insert(users)
    .values({
      email: params.email.trim().toLowerCase(),
      name: params.name,
      role: params.role,
      passwordHash: params.passwordHash,
      createdBy: params.createdBy ?? null,
    })
    .onConflictDoNothing({ target: users.email })
    .returning(summaryColumns);
  return row ?? null;
}

export async function setUserRole(db: DbOrTx, { id, role }: { id: string; role: Role }): Promise<UserSummary | null> {
  const [row] = await db
    .update(users)
    .set({ role, sessionVersion: sql`${users.sessionVersion} + 1` })
    .where(eq(users.id, id))
    .returning(summaryColumns);
  return row ?? null;
}

export async function setUserDisabled(db: DbOrTx, { id, disabled }: { id: string; disabled: boolean }): Promise<UserSummary | null> {
  const [row] = await db
    .update(users)
    .set({ disabledAt: disabled ? sql`coalesce(${users.disabledAt}, now())` : null, sessionVersion: sql`${users.sessionVersion} + 1` })
    .where(eq(users.id, id))
    .returning(summaryColumns);
  return row ?? null;
}

/** Keyset page ordered by email (unique); `after` is the last email of the previous page. */
export async function listUsers(db: DbOrTx, { after, limit }: { after?: string; limit: number }): Promise<UserSummary[]> {
  return db
    .select(summaryColumns)
    .from(users)
    .where(after ? and(gt(users.email, after)) : undefined)
    .orderBy(asc(users.email))
    .limit(limit);
}

/** An admin's unlock: the failure count and the lock cleared. Null: no such user. */
export async function unlockUser(db: DbOrTx, { id }: { id: string }): Promise<UserSummary | null> {
  const [row] = await db.update(users).set({ failedLogins: 0, lockedUntil: null }).where(eq(users.id, id)).returning(summaryColumns);
  return row ?? null;
}

/**
 * A new password (the user's own change or an admin's reset): every session of the user ends,
 * and any lock is lifted (the password the lock protected is gone). With `ifHash`, only while
 * the stored hash is still that one (a change that raced another is refused).
 */
export async function setUserPassword(
  db: DbOrTx,
  { id, passwordHash, ifHash }: { id: string; passwordHash: string; ifHash?: string },
): Promise<UserSummary | null> {
  const [row] = await db
    .update(users)
    .set({ passwordHash, failedLogins: 0, lockedUntil: null, sessionVersion: sql`${users.sessionVersion} + 1` })
    .where(ifHash === undefined ? eq(users.id, id) : and(eq(users.id, id), eq(users.passwordHash, ifHash)))
    .returning(summaryColumns);
  return row ?? null;
}
