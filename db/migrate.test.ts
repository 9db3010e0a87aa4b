import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { inject } from 'vitest';
import { ensureDatabase } from './embedded';
import { migrateDatabase } from './migrate';
import { withDatabase } from '@/testing/database';

const name = `nl_migrate_${process.pid}_${Date.now()}`;
let url: string;

beforeAll(async () => {
  await ensureDatabase(inject('pgServerUrl'), name);
  url = withDatabase(inject('pgServerUrl'), name);
});

afterAll(async () => {
  const client = new pg.Client({ connectionString: inject('pgServerUrl') });
  await client.connect();
  await client.query(`drop database if exists ${name} with (force)`);
  await client.end();
});

async function query<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

const tables = [
  'api_tokens',
  'audit_log',
  'delivery_attempts',
  'evidence',
  'notice_ledger',
  'provider_events',
  'recipient_suppressions',
  'reminder_jobs',
  'replays',
  'users',
];

describe('migrations', () => {
  it('apply to an empty database and create every table', async () => {
    await migrateDatabase(url);
    const rows = await query<{ table_name: string }>("select table_name from information_schema.tables where table_schema = 'public' order by table_name");
    expect(rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(tables));
  });

  it('are idempotent, also when two processes start at once', async () => {
    const before = await query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations');
    await Promise.all([migrateDatabase(url), migrateDatabase(url)]);
    const after = await query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations');
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  it('carry the invariants as constraints', async () => {
    await migrateDatabase(url);
    const insertLedger = (key: string, state: string) =>
      query(`insert into notice_ledger (notice_key, notice_type, identity, state) values ('${key}', 't', '{}', '${state}')`);
    await insertLedger('k1', 'claimed');
    await expect(insertLedger('k1', 'claimed')).rejects.toThrow(/duplicate key/);
    await expect(insertLedger('k2', 'nonsense')).rejects.toThrow(/notice_ledger_state_check/);
    await expect(insertLedger('k3', 'sent')).rejects.toThrow(/notice_ledger_sent_has_time/);
  });

  it('create the partial indexes the console relies on', async () => {
    const rows = await query<{ indexname: string; indexdef: string }>(
      "select indexname, indexdef from pg_indexes where schemaname = 'public' and indexname in ('notice_ledger_claimed_idx', 'reminder_jobs_pending_idx')",
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.indexdef).toMatch(/WHERE/);
  });
});
