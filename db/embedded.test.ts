import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from './embedded';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'notice-ledger-embedded-'));
  await chmod(dir, 0o755);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function scalar(url: string, text: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows[0];
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL', () => {
  it('keeps its data across a stop and a restart', async () => {
    const dataDir = path.join(dir, 'pg');
    const first = await startEmbeddedPostgres({ dir: dataDir });
    expect(first.owned).toBe(true);
    await scalar(first.url, 'create table survivor (note text)');
    await scalar(first.url, "insert into survivor values ('still here')");
    await first.stop();

    const second = await startEmbeddedPostgres({ dir: dataDir });
    try {
      expect(await scalar(second.url, 'select note from survivor')).toEqual({ note: 'still here' });
    } finally {
      await second.stop();
    }
  });

  it('lets a second process attach to the running server instead of starting another', async () => {
    const dataDir = path.join(dir, 'shared');
    const owner = await startEmbeddedPostgres({ dir: dataDir });
    try {
      const attached = await startEmbeddedPostgres({ dir: dataDir });
      expect(attached.owned).toBe(false);
      expect(attached.port).toBe(owner.port);
      expect(await scalar(attached.url, 'select 1 as one')).toEqual({ one: 1 });
    } finally {
      await owner.stop();
    }
  });
});
