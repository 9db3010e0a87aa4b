import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import journal from '@/db/migrations/meta/_journal.json';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { withDatabase } from '@/testing/database';
import { inject } from 'vitest';

/**
 * The console's probes against a real database: /api/health answers while the process serves,
 * /api/ready only while the database answers and its migrations are this build's.
 */

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
});
afterAll(async () => {
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
});

async function probe(path: '/api/health' | '/api/ready'): Promise<{ status: number; body: unknown }> {
  const { GET } = path === '/api/health' ? await import('@/app/api/health/route') : await import('./route');
  const response = await GET(new Request(`http://console.test${path}`));
  expect(response.headers.get('cache-control')).toBe('no-store');
  return { status: response.status, body: await response.json() };
}

/** Runs `sql` on the server's maintenance database, outside the database under test. */
async function onServer(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: withDatabase(inject('pgServerUrl'), 'postgres') });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

describe('/api/health and /api/ready', () => {
  it('health answers 200 to anyone, ready 200 saying only that it is ready', async () => {
    expect(await probe('/api/health')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await probe('/api/ready')).toEqual({ status: 200, body: { status: 'ready' } });
  });

  it('ready is 503 naming the migration a database lacks, and 200 again once it is applied', async () => {
    const last = journal.entries.at(-1);
    if (!last) throw new Error('the journal lists no migration');
    const removed = await t.pool.query<{ id: number; hash: string; created_at: string }>(
      'delete from drizzle.__drizzle_migrations where created_at = $1 returning id, hash, created_at',
      [last.when],
    );
    expect(removed.rowCount).toBe(1);
    try {
      // Which migration is missing is the log's: an anonymous caller learns only "down".
      expect(await probe('/api/ready')).toEqual({ status: 503, body: { error: 'unavailable' } });
      expect((await probe('/api/health')).status).toBe(200);
    } finally {
      const row = removed.rows[0];
      await t.pool.query('insert into drizzle.__drizzle_migrations (id, hash, created_at) values ($1, $2, $3)', [row?.id, row?.hash, row?.created_at]);
    }
    expect((await probe('/api/ready')).status).toBe(200);
  });

  it('ready is 503 with the reason while the database refuses connections; health stays 200', async () => {
    await onServer(`alter database ${t.name} with allow_connections false`);
    await onServer(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${t.name}' and pid <> pg_backend_pid()`);
    try {
      // The first probe may meet a pooled connection the server just terminated; the next one
      // opens a new connection, which the server refuses.
      // The driver's words (they name the database) never reach the anonymous caller.
      for (let attempt = 0; attempt < 2; attempt += 1) expect(await probe('/api/ready')).toEqual({ status: 503, body: { error: 'unavailable' } });
      expect(await probe('/api/health')).toEqual({ status: 200, body: { status: 'ok' } });
    } finally {
      await onServer(`alter database ${t.name} with allow_connections true`);
    }
    expect((await probe('/api/ready')).status).toBe(200);
  });
});
