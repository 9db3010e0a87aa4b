import { sql, type SQL } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import pg from 'pg';
import type { DbOrTx } from '@/db/client';

/**
 * The send path's hot statements run as NAMED prepared statements (parsed and planned once per
 * connection): through drizzle's unnamed path the worker spent ~25 % more per statement.
 * Inside a transaction (tests, tools) they run on that transaction's connection, unnamed.
 */
export async function hotQuery<T extends pg.QueryResultRow>(db: DbOrTx, name: string, text: string, values: unknown[]): Promise<T[]> {
  const client = db instanceof PgTransaction || !('$client' in db) ? null : db.$client;
  if (client instanceof pg.Pool) return (await client.query<T>({ name, text, values })).rows;
  // A transaction: keep its connection, so the statement is part of it.
  const chunks: SQL[] = [];
  let last = 0;
  for (const match of text.matchAll(/\$(\d+)/g)) {
    chunks.push(sql.raw(text.slice(last, match.index)));
    chunks.push(sql`${values[Number(match[1]) - 1]}`);
    last = match.index + match[0].length;
  }
  chunks.push(sql.raw(text.slice(last)));
  const result = await db.execute<T>(sql.join(chunks));
  return result.rows as T[];
}
