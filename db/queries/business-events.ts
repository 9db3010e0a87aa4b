import { and, asc, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { reminderJobs, type JobRow } from '@/db/schema/jobs';
import { businessEvents, unplannedNotices } from '@/db/schema/planning';

export type BusinessEventRow = typeof businessEvents.$inferSelect;
export type NewBusinessEvent = typeof businessEvents.$inferInsert;
export type UnplannedRow = typeof unplannedNotices.$inferSelect;
export type NewUnplanned = typeof unplannedNotices.$inferInsert;

export type EventIdentity = { type: string; identity: Record<string, string> };

const sameIdentity = ({ type, identity }: EventIdentity) =>
  and(eq(businessEvents.type, type), sql`${businessEvents.identity} = ${JSON.stringify(identity)}::jsonb`);

/**
 * Serialises every revision of one event identity for the rest of the transaction: two posts of
 * the same event (or of two revisions) plan one after the other, so a revision never re-plans
 * against a half-written older one. jsonb's text form is canonical, so key order does not matter.
 */
export async function lockEventIdentity(db: DbOrTx, { type, identity }: EventIdentity): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${type} || ' ' || (${JSON.stringify(identity)}::jsonb)::text, 15))`);
}

/**
 * lockEventIdentity for many identities at once, in the order of their lock keys: a batch takes
 * every lock of its chunk first, so two batches (or a batch and a single post) that share
 * identities wait for each other instead of deadlocking. Each lock is held to the end of the
 * transaction, and taking one again (the single path's lockEventIdentity) is free.
 */
export async function lockEventIdentities(db: DbOrTx, facts: EventIdentity[]): Promise<void> {
  if (facts.length === 0) return;
  await db.execute(sql`
    select pg_advisory_xact_lock(lock_key) from (
      select distinct hashtextextended(fact.type || ' ' || fact.identity::text, 15) as lock_key
      from unnest(${sql.param(facts.map((fact) => fact.type))}::text[], ${sql.param(facts.map((fact) => JSON.stringify(fact.identity)))}::jsonb[]) as fact(type, identity)
    ) as keys
    order by lock_key`);
}

export async function findEvent(db: DbOrTx, fact: EventIdentity & { revision: number }): Promise<BusinessEventRow | null> {
  const [row] = await db
    .select()
    .from(businessEvents)
    .where(and(sameIdentity(fact), eq(businessEvents.revision, fact.revision)))
    .limit(1);
  return row ?? null;
}

/** The highest revision received for this identity, or null. */
export async function latestRevision(db: DbOrTx, fact: EventIdentity): Promise<BusinessEventRow | null> {
  const [row] = await db
    .select()
    .from(businessEvents)
    .where(sameIdentity(fact))
    .orderBy(sql`${businessEvents.revision} desc`)
    .limit(1);
  return row ?? null;
}

/** Inserts unless (type, identity, revision) exists (business_events_fact_unique); `created` says which. */
export async function insertEventUnlessExists(db: DbOrTx, event: NewBusinessEvent): Promise<{ event: BusinessEventRow; created: boolean }> {
  const [inserted] = await db
    .insert(businessEvents)
    .values(event)
    .onConflictDoNothing({ target: [businessEvents.type, businessEvents.identity, businessEvents.revision] })
    .returning();
  if (inserted) return { event: inserted, created: true };
  const existing = await findEvent(db, { type: event.type, identity: event.identity, revision: event.revision ?? 0 });
  if (!existing) throw new Error('business event conflicted but no row found');
  return { event: existing, created: false };
}

/** Jobs planned by older revisions of this identity, locked: the re-plan cancels the pending ones. */
export async function lockJobsOfOlderRevisions(db: DbOrTx, fact: EventIdentity & { revision: number }): Promise<JobRow[]> {
  const older = db
    .select({ id: businessEvents.id })
    .from(businessEvents)
    .where(and(sameIdentity(fact), lt(businessEvents.revision, fact.revision)));
  return db.select().from(reminderJobs).where(inArray(reminderJobs.eventId, older)).orderBy(asc(reminderJobs.createdAt)).for('update');
}

export async function jobsOfEvent(db: DbOrTx, { eventId }: { eventId: string }): Promise<JobRow[]> {
  return db.select().from(reminderJobs).where(eq(reminderJobs.eventId, eventId)).orderBy(asc(reminderJobs.createdAt), asc(reminderJobs.noticeType));
}

export async function unplannedOfEvent(db: DbOrTx, { eventId }: { eventId: string }): Promise<UnplannedRow[]> {
  return db.select().from(unplannedNotices).where(eq(unplannedNotices.eventId, eventId)).orderBy(asc(unplannedNotices.id));
}

export async function insertUnplanned(db: DbOrTx, rows: NewUnplanned[]): Promise<UnplannedRow[]> {
  if (rows.length === 0) return [];
  return db.insert(unplannedNotices).values(rows).returning();
}

/** Open gaps of older revisions are worked by the new revision's plan: resolved, with why. */
export async function resolveOpenGapsOfOlderRevisions(
  db: DbOrTx,
  fact: EventIdentity & { revision: number; at: Date; by: string; resolution: string },
): Promise<number> {
  const older = db
    .select({ id: businessEvents.id })
    .from(businessEvents)
    .where(and(sameIdentity(fact), lt(businessEvents.revision, fact.revision)));
  const rows = await db
    .update(unplannedNotices)
    .set({ resolvedAt: fact.at, resolvedBy: fact.by, resolution: fact.resolution })
    .where(and(inArray(unplannedNotices.eventId, older), isNull(unplannedNotices.resolvedAt)))
    .returning({ id: unplannedNotices.id });
  return rows.length;
}
