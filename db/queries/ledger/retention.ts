import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';

/**
 * Settled ledger rows only: a `claimed` row is an open question for on-call, whatever its age.
 * At most `limit` rows per statement (`ctid in (select … limit n)`), like the rest of
 * db/queries/retention.ts, so retention runs next to live traffic in small transactions.
 */
export async function deleteSettledLedgerBefore(db: DbOrTx, { before, limit }: { before: Date; limit: number }): Promise<number> {
  const result = await db.execute(
    sql`delete from notice_ledger where ctid in (
          select ctid from notice_ledger where state in ('sent', 'suppressed', 'released') and updated_at < ${before} limit ${limit})`,
  );
  return result.rowCount ?? 0;
}
