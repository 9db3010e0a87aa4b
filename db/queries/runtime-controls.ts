import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { runtimeControls, type RuntimeControlRow } from '@/db/schema/controls';

/** Every control: the workers' one cheap read per refresh (a handful of rows), and the console's banner. */
export async function listRuntimeControls(db: DbOrTx): Promise<RuntimeControlRow[]> {
  return db.select().from(runtimeControls).orderBy(runtimeControls.name);
}

/** Set one control; returns the row as it was before (null: never set). The caller audits, in the same transaction. */
export async function setRuntimeControl(
  db: DbOrTx,
  { name, value, reason, changedBy }: { name: string; value: string; reason: string; changedBy: string },
): Promise<RuntimeControlRow | null> {
  const before = await db.execute<{ name: string; value: string; reason: string; changed_by: string; changed_at: string }>(
    sql`select name, value, reason, changed_by, changed_at::text from runtime_controls where name = ${name} for update`,
  );
  await db
    .insert(runtimeControls)
    .values({ name, value, reason, changedBy })
    .onConflictDoUpdate({ target: runtimeControls.name, set: { value, reason, changedBy, changedAt: sql`now()` } });
  const row = before.rows[0];
  return row ? { name: row.name, value: row.value, reason: row.reason, changedBy: row.changed_by, changedAt: new Date(row.changed_at) } : null;
}

/** Stores a control only when it has no row yet; returns the row that holds afterwards and whether this call wrote it. */
export async function insertRuntimeControlIfAbsent(
  db: DbOrTx,
  { name, value, reason, changedBy }: { name: string; value: string; reason: string; changedBy: string },
): Promise<{ row: RuntimeControlRow; inserted: boolean }> {
  const inserted = await db
    .insert(runtimeControls)
    .values({ name, value, reason, changedBy })
    .onConflictDoNothing({ target: runtimeControls.name })
    .returning();
  if (inserted[0]) return { row: inserted[0], inserted: true };
  const [row] = await db.select().from(runtimeControls).where(eq(runtimeControls.name, name));
  if (!row) throw new Error(`runtime control ${name} vanished between insert and read`);
  return { row, inserted: false };
}

/** One control, locked for the caller's transaction (null: no row). */
export async function lockRuntimeControl(db: DbOrTx, { name }: { name: string }): Promise<RuntimeControlRow | null> {
  const [row] = await db.select().from(runtimeControls).where(eq(runtimeControls.name, name)).for('update');
  return row ?? null;
}

/** Removes a control (a decided request); returns the row removed. */
export async function deleteRuntimeControl(db: DbOrTx, { name }: { name: string }): Promise<RuntimeControlRow | null> {
  const [row] = await db.delete(runtimeControls).where(eq(runtimeControls.name, name)).returning();
  return row ?? null;
}
