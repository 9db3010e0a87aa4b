import { and, eq, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { userMfa, type UserMfaRow } from '@/db/schema/auth';

export async function findUserMfa(db: DbOrTx, { userId }: { userId: string }): Promise<UserMfaRow | null> {
  const rows = await db.select().from(userMfa).where(eq(userMfa.userId, userId)).limit(1);
  return rows[0] ?? null;
}

/** A new pending enrollment, replacing an earlier pending one; null when the user already has MFA enabled. */
export async function beginUserMfa(db: DbOrTx, { userId, secretSealed }: { userId: string; secretSealed: string }): Promise<UserMfaRow | null> {
  const rows = await db
    .insert(userMfa)
    .values({ userId, secretSealed })
    .onConflictDoUpdate({
      target: userMfa.userId,
      set: { secretSealed, lastStep: null, recoveryCodeHashes: [], createdAt: sql`now()` },
      setWhere: isNull(userMfa.enabledAt),
    })
    .returning();
  return rows[0] ?? null;
}

/** The first code confirms a pending enrollment, once: its step becomes the last accepted one. */
export async function enableUserMfa(
  db: DbOrTx,
  { userId, step, recoveryCodeHashes, now }: { userId: string; step: number; recoveryCodeHashes: string[]; now: Date },
): Promise<boolean> {
  const rows = await db
    .update(userMfa)
    .set({ enabledAt: now, lastStep: step, recoveryCodeHashes })
    .where(and(eq(userMfa.userId, userId), isNull(userMfa.enabledAt)))
    .returning({ userId: userMfa.userId });
  return rows.length > 0;
}

/**
 * Takes a TOTP step for an enabled enrollment, only if it is later than the last one taken: of two
 * sign-ins with the same code at once, one gets it (the row lock orders them).
 */
export async function claimTotpStep(db: DbOrTx, { userId, step }: { userId: string; step: number }): Promise<boolean> {
  const rows = await db
    .update(userMfa)
    .set({ lastStep: step })
    .where(and(eq(userMfa.userId, userId), isNotNull(userMfa.enabledAt), or(isNull(userMfa.lastStep), lt(userMfa.lastStep, step))))
    .returning({ userId: userMfa.userId });
  return rows.length > 0;
}

/** Spends one recovery code (its hash leaves the list): true once per code. */
export async function spendRecoveryCode(db: DbOrTx, { userId, codeHash }: { userId: string; codeHash: string }): Promise<boolean> {
  const rows = await db
    .update(userMfa)
    .set({ recoveryCodeHashes: sql`array_remove(${userMfa.recoveryCodeHashes}, ${codeHash})` })
    .where(and(eq(userMfa.userId, userId), isNotNull(userMfa.enabledAt), sql`${codeHash} = any(${userMfa.recoveryCodeHashes})`))
    .returning({ userId: userMfa.userId });
  return rows.length > 0;
}

export async function replaceRecoveryCodes(db: DbOrTx, { userId, recoveryCodeHashes }: { userId: string; recoveryCodeHashes: string[] }): Promise<boolean> {
  const rows = await db
    .update(userMfa)
    .set({ recoveryCodeHashes })
    .where(and(eq(userMfa.userId, userId), isNotNull(userMfa.enabledAt)))
    .returning({ userId: userMfa.userId });
  return rows.length > 0;
}

/** Removes the user's enrollment, pending or enabled; whether there was an enabled one. */
export async function removeUserMfa(db: DbOrTx, { userId }: { userId: string }): Promise<{ removed: boolean; wasEnabled: boolean }> {
  const rows = await db.delete(userMfa).where(eq(userMfa.userId, userId)).returning({ enabledAt: userMfa.enabledAt });
  const row = rows[0];
  return { removed: row !== undefined, wasEnabled: row?.enabledAt !== null && row !== undefined };
}
