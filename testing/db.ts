import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createDb, createPool, type Db } from '@/db/client';
import { withDatabase } from './database';

export type TestDatabase = {
  url: string;
  name: string;
  pool: pg.Pool;
  db: Db;
  drop: () => Promise<void>;
};

/** A fresh, migrated database cloned from the run's template. Call in beforeAll; drop in afterAll. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = inject('pgServerUrl');
  const template = inject('pgTemplateDatabase');
  const name = `nl_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${template}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(serverUrl, name);
  const pool = createPool(url, { max: 10, applicationName: 'notice-ledger-test' });
  return {
    url,
    name,
    pool,
    db: createDb(pool),
    drop: async () => {
      await pool.end();
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}
