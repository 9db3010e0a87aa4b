import { gt, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { auditLog, type AuditRow } from '@/db/schema/audit';

/** The newest audit_log id (0 when empty). */
export async function lastAuditId(db: Db): Promise<number> {
  const [row] = await db.select({ id: sql<number>`coalesce(max(${auditLog.id}), 0)::int` }).from(auditLog);
  return row?.id ?? 0;
}

/** Runs `attempt` and returns exactly the audit rows written meanwhile, oldest first. */
export async function auditRowsWrittenBy(db: Db, attempt: () => Promise<unknown>): Promise<AuditRow[]> {
  const before = await lastAuditId(db);
  await attempt();
  return db.select().from(auditLog).where(gt(auditLog.id, before)).orderBy(auditLog.id);
}
