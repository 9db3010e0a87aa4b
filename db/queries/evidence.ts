import { eq } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { evidence } from '@/db/schema/events';

export type EvidenceRow = typeof evidence.$inferSelect;

export async function findEvidence(db: DbOrTx, { ref, lock = false }: { ref: string; lock?: boolean }): Promise<EvidenceRow | null> {
  const query = db.select().from(evidence).where(eq(evidence.ref, ref)).limit(1);
  const [row] = lock ? await query.for('update') : await query;
  return row ?? null;
}

/** Opens a record unless one exists; `created` says which happened. */
export async function insertEvidenceUnlessExists(
  db: DbOrTx,
  params: { ref: string; kind: string; summary: string | null; details: Record<string, unknown>; now: Date },
): Promise<{ row: EvidenceRow; created: boolean }> {
  const [inserted] = await db
    .insert(evidence)
    .values({ ref: params.ref, kind: params.kind, summary: params.summary, details: params.details, state: 'open', openedAt: params.now })
    .onConflictDoNothing({ target: evidence.ref })
    .returning();
  if (inserted) return { row: inserted, created: true };
  const existing = await findEvidence(db, { ref: params.ref, lock: true });
  if (!existing) throw new Error('evidence ref conflicted but no row found');
  return { row: existing, created: false };
}

export async function insertResolvedEvidence(db: DbOrTx, params: { ref: string; kind: string; resolvedBy: string; now: Date }): Promise<EvidenceRow | null> {
  const [row] = await db
    .insert(evidence)
    .values({ ref: params.ref, kind: params.kind, state: 'resolved', openedAt: params.now, resolvedAt: params.now, resolvedBy: params.resolvedBy })
    .onConflictDoNothing({ target: evidence.ref })
    .returning();
  return row ?? null;
}

export async function markEvidenceResolved(db: DbOrTx, { ref, resolvedBy, now }: { ref: string; resolvedBy: string; now: Date }): Promise<EvidenceRow | null> {
  const [row] = await db.update(evidence).set({ state: 'resolved', resolvedAt: now, resolvedBy }).where(eq(evidence.ref, ref)).returning();
  return row ?? null;
}
