import { eq } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { recipientSuppressions } from '@/db/schema/events';
import type { RecipientSuppressionReason } from '@/db/schema/states';

export type RecipientSuppression = typeof recipientSuppressions.$inferSelect;

/**
 * Idempotent: the first reason recorded for an address stays (a later complaint about an
 * address that already hard-bounced changes nothing the send path does). Returns true when
 * this call added the address.
 */
export async function addRecipientSuppression(
  db: DbOrTx,
  { email, reason, sourceEventId, note }: { email: string; reason: RecipientSuppressionReason; sourceEventId: string | null; note?: string | null },
): Promise<boolean> {
  const rows = await db
    .insert(recipientSuppressions)
    .values({ email: email.trim().toLowerCase(), reason, sourceEventId, note: note ?? null })
    .onConflictDoNothing({ target: recipientSuppressions.email })
    .returning({ email: recipientSuppressions.email });
  return rows.length > 0;
}

export async function findRecipientSuppression(db: DbOrTx, { email }: { email: string }): Promise<RecipientSuppression | null> {
  const rows = await db.select().from(recipientSuppressions).where(eq(recipientSuppressions.email, email.trim().toLowerCase())).limit(1);
  return rows[0] ?? null;
}

/** Takes the address off the suppression list; the removed row, or null when it was not on it. */
export async function removeRecipientSuppression(db: DbOrTx, { email }: { email: string }): Promise<RecipientSuppression | null> {
  const rows = await db.delete(recipientSuppressions).where(eq(recipientSuppressions.email, email.trim().toLowerCase())).returning();
  return rows[0] ?? null;
}

/** The row, locked for the transaction: support's add / remove reads the before it audits under it. */
export async function lockRecipientSuppression(db: DbOrTx, { email }: { email: string }): Promise<RecipientSuppression | null> {
  const rows = await db.select().from(recipientSuppressions).where(eq(recipientSuppressions.email, email.trim().toLowerCase())).for('update').limit(1);
  return rows[0] ?? null;
}
