import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { createDb, createPool } from './client';

/**
 * db/migrations beside this file, or, from the worker's bundle (dist/worker/main.mjs, where this
 * module is inlined), in the project's db/ two floors up.
 */
function findMigrationsFolder(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.join(here, 'migrations'), path.join(here, '..', '..', 'db', 'migrations')];
  return candidates.find((folder) => existsSync(path.join(folder, 'meta', '_journal.json'))) ?? (candidates[0] as string);
}

const migrationsFolder = findMigrationsFolder();

/** Applies the generated migrations; safe to run on every start and from several processes. */
export async function migrateDatabase(url: string): Promise<void> {
  const pool = createPool(url, { max: 2, applicationName: 'notice-ledger-migrate' });
  try {
    const client = await pool.connect();
    try {
      // Two processes starting together must not both apply the same migration.
      await client.query('select pg_advisory_lock(727274)');
      try {
        await migrate(createDb(pool), { migrationsFolder });
      } finally {
        await client.query('select pg_advisory_unlock(727274)');
      }
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}
