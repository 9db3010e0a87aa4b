import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { provisionDatabase } from './database';

async function databaseExists(serverUrl: string, name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

async function databaseCount(serverUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>('select count(*) as n from pg_database')).rows[0]?.n);
  } finally {
    await client.end();
  }
}

describe('provisionDatabase', () => {
  const serverUrl = inject('pgServerUrl');

  it('refuses a server that is not on this machine before creating anything', async () => {
    for (const url of ['postgres://user:secret@db.staging.example.com:5432/notice_ledger', 'postgres://user@10.0.0.7/notice_ledger', 'not a url']) {
      await expect(provisionDatabase({ prefix: 'nl_refused', serverUrl: url })).rejects.toThrow(/non-local database host|not a valid URL/);
    }
  });

  it('refuses a name that would have to be quoted, and creates nothing', async () => {
    const before = await databaseCount(serverUrl);
    await expect(provisionDatabase({ prefix: 'nl; drop database postgres', serverUrl })).rejects.toThrow(/prefix/);
    await expect(provisionDatabase({ prefix: 'nl_ok', serverUrl, template: 'x" template "y' })).rejects.toThrow(/template/);
    expect(await databaseCount(serverUrl)).toBe(before);
  });

  it('creates a fresh migrated database on a given server and drops it on release', async () => {
    const first = await provisionDatabase({ prefix: 'nl_provision', serverUrl });
    const second = await provisionDatabase({ prefix: 'nl_provision', serverUrl, template: inject('pgTemplateDatabase') });
    try {
      expect(first.name).toMatch(/^nl_provision_[0-9a-f]{12}$/);
      expect(second.name).not.toBe(first.name);
      expect(first.dataDir).toBeNull();
      for (const database of [first, second]) {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          // Migrated (or cloned from the migrated template): the ledger table is there, empty.
          expect((await client.query('select count(*)::int as n from notice_ledger')).rows[0]).toEqual({ n: 0 });
        } finally {
          await client.end();
        }
      }
    } finally {
      await first.release();
      await second.release();
    }
    expect(await databaseExists(serverUrl, first.name)).toBe(false);
    expect(await databaseExists(serverUrl, second.name)).toBe(false);
  });

  it('keeps the database on release({ keep: true })', async () => {
    const kept = await provisionDatabase({ prefix: 'nl_provision_kept', serverUrl });
    await kept.release({ keep: true });
    try {
      expect(await databaseExists(serverUrl, kept.name)).toBe(true);
    } finally {
      await kept.release();
    }
    expect(await databaseExists(serverUrl, kept.name)).toBe(false);
  });
});
