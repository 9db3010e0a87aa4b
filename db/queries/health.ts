import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';

/** One round trip: the database answers. */
export async function pingDatabase(db: DbOrTx): Promise<void> {
  await db.execute(sql`select 1`);
}

/**
 * The migrations drizzle's migrator has applied, by the journal's `when` (drizzle stores it as
 * created_at). Empty when the migrator never ran here (its table does not exist yet).
 */
export async function listAppliedMigrations(db: DbOrTx): Promise<number[]> {
  const table = await db.execute<{ present: boolean }>(sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`);
  if (table.rows[0]?.present !== true) return [];
  const result = await db.execute<{ createdAt: string | number }>(sql`select created_at as "createdAt" from drizzle.__drizzle_migrations`);
  return result.rows.map((row) => Number(row.createdAt));
}
