import { createDb, createPool, type Db } from '@/db/client';
import { processEnv } from '@/lib/config';

let processDb: Db | undefined;

/**
 * The process's one pool, at DATABASE_URL (db/client.ts takes its URL; the settings are read
 * here, on lib/'s floor). DATABASE_URL must be resolved by then: the demo launcher and
 * worker/main.ts start the embedded server first and export its URL.
 */
export function getDb(): Db {
  if (processDb) return processDb;
  const url = processEnv.databaseUrl();
  if (!url) throw new Error('DATABASE_URL is not set: start through `npm run demo` or set DATABASE_URL');
  processDb = createDb(createPool(url, { applicationName: processEnv.processName() ?? 'notice-ledger' }));
  return processDb;
}
