import { and, desc, getTableColumns, eq, ilike, inArray, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { auditLog, type AuditRow } from '@/db/schema/audit';

export type AuditEntry = {
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  reason: string;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
};

export async function insertAuditEntries(db: DbOrTx, { entries }: { entries: AuditEntry[] }): Promise<void> {
  if (entries.length === 0) return;
  await db.insert(auditLog).values(entries.map((entry) => ({ ...entry, before: entry.before ?? null, after: entry.after ?? null })));
}

/** A sign-in's audit row about a known user: the target is always that user. */
export type UserAuditEntry = Omit<AuditEntry, 'targetType' | 'targetId'>;

/** A successful sign-in: clears the failure count and any lock, stamps last_login_at and writes its audit row, in one statement. */
export async function recordSignIn(db: DbOrTx, { userId, entry }: { userId: string; entry: UserAuditEntry }): Promise<void> {
  await db.execute(sql`
    with signed_in as (
      update users set failed_logins = 0, locked_until = null, last_login_at = now() where id = ${userId} returning id
    )
    insert into audit_log (actor, action, target_type, target_id, reason, before, after)
    select ${entry.actor}, ${entry.action}, 'user', ${userId}, ${entry.reason}, ${json(entry.before)}::jsonb, ${json(entry.after)}::jsonb
    from signed_in`);
}

function json(value: Record<string, unknown> | null | undefined): string | null {
  return value ? JSON.stringify(value) : null;
}

/** `at` is the timestamp as PostgreSQL printed it: microseconds survive, a JS Date would round them. */
export type AuditCursor = { at: string; id: number };
export type AuditFilter = { actor?: string; action?: string; target?: string };

/**
 * Newest first, keyset on (at, id) so page 1000 costs what page 1 costs. An actor filter
 * uses audit_log_actor_idx (actor, at); a target filter uses audit_log_target_idx.
 */
export async function listAuditEntries(
  db: DbOrTx,
  { filter, before, limit }: { filter: AuditFilter; before?: AuditCursor; limit: number },
): Promise<(AuditRow & { cursorAt: string })[]> {
  const conditions: SQL[] = [];
  if (filter.actor) conditions.push(eq(auditLog.actor, filter.actor.trim().toLowerCase()));
  if (filter.action) conditions.push(ilike(auditLog.action, `${escapeLike(filter.action.trim())}%`));
  if (filter.target) conditions.push(eq(auditLog.targetId, filter.target.trim()));
  if (before) conditions.push(sql`(${auditLog.at}, ${auditLog.id}) < (${before.at}::timestamptz, ${before.id})`);
  return db
    .select({ ...getTableColumns(auditLog), cursorAt: sql<string>`${auditLog.at}::text` })
    .from(auditLog)
    .where(conditions.length > 0 ? and(...conditions) : undefined)
    .orderBy(desc(auditLog.at), desc(auditLog.id))
    .limit(limit);
}

export async function listAuditForTargets(db: DbOrTx, { targetIds }: { targetIds: string[] }): Promise<AuditRow[]> {
  if (targetIds.length === 0) return [];
  return db.select().from(auditLog).where(inArray(auditLog.targetId, targetIds)).orderBy(auditLog.at, auditLog.id).limit(500);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (match) => `\\${match}`);
}
