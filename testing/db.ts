import type pg from 'pg';
import { inject } from 'vitest';
import { createDb, createPool, type Db } from '@/db/client';
import { provisionDatabase } from './database';

export type TestDatabase = {
  url: string;
  name: string;
  pool: pg.Pool;
  db: Db;
  drop: () => Promise<void>;
};

/** A fresh, migrated database cloned from the run's template. Call in beforeAll; drop in afterAll. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const database = await provisionDatabase({ prefix: 'nl_test', serverUrl: inject('pgServerUrl'), template: inject('pgTemplateDatabase') });
  const pool = createPool(database.url, { max: 10, applicationName: 'notice-ledger-test' });
  return {
    url: database.url,
    name: database.name,
    pool,
    db: createDb(pool),
    drop: async () => {
      await pool.end();
      await database.release();
    },
  };
}
