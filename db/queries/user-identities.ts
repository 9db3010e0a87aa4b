import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { userIdentities, users, type UserIdentityRow, type UserRow } from '@/db/schema/auth';

export type OidcSubject = { issuer: string; subject: string };

/** The console user a single sign-on identity is linked to. */
export async function findUserByIdentity(db: DbOrTx, { issuer, subject }: OidcSubject): Promise<UserRow | null> {
  const [row] = await db
    .select({ user: users })
    .from(userIdentities)
    .innerJoin(users, eq(users.id, userIdentities.userId))
    .where(and(eq(userIdentities.issuer, issuer), eq(userIdentities.subject, subject)))
    .limit(1);
  return row?.user ?? null;
}

/** The identity this user already has at this issuer, if any. */
export async function findIdentityOfUser(db: DbOrTx, { userId, issuer }: { userId: string; issuer: string }): Promise<UserIdentityRow | null> {
  const [row] = await db
    .select()
    .from(userIdentities)
    .where(and(eq(userIdentities.userId, userId), eq(userIdentities.issuer, issuer)))
    .limit(1);
  return row ?? null;
}

/**
 * Links the identity to the user, once: nothing is written when the subject is taken or the
 * user already has a subject at this issuer (two first sign-ins racing: one wins). True when linked.
 */
export async function linkIdentity(db: DbOrTx, { issuer, subject, userId }: OidcSubject & { userId: string }): Promise<boolean> {
  const rows = await db.insert(userIdentities).values({ issuer, subject, userId }).onConflictDoNothing().returning({ subject: userIdentities.subject });
  return rows.length > 0;
}
