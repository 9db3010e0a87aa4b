import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { PgTransaction } from 'drizzle-orm/pg-core';
import type { NodePgQueryResultHKT } from 'drizzle-orm/node-postgres';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import pg from 'pg';
import * as schema from './schema';

export type Schema = typeof schema;
export type Db = NodePgDatabase<Schema> & { $client: pg.Pool };
export type Tx = PgTransaction<NodePgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Every query in db/queries takes this, so it runs inside or outside a transaction. */
export type DbOrTx = NodePgDatabase<Schema> | Tx;

// timestamptz comes back as a Date; bigint counts (count(*)) as a JS number — they stay far
// below 2^53 here, and a string count in every caller is a bug magnet.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export type PoolOptions = { max?: number; applicationName?: string };

export function createPool(url: string, { max = 10, applicationName = 'notice-ledger' }: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, application_name: applicationName });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => undefined);
  // Nor a checked-out one (a transaction's client at a failover): pg emits the socket's error on
  // the client, which the pool listens to only while it is idle, and an 'error' no one listens to
  // is thrown. The statement in flight still fails with it, and the pool discards the client.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export function createDb(pool: pg.Pool): Db {
  return drizzle(pool, { schema });
}
