import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrateDatabase } from '@/db/migrate';
import { assertLocalDatabaseUrl, withDatabase } from '@/testing/database';

/**
 * A throw-away database for `npm run chaos`: a fresh one on the local server DATABASE_URL
 * names, else an embedded PostgreSQL in a temporary directory. Dropped afterwards unless
 * `keep` is set, so a failing run can be inspected; an embedded server is always stopped.
 */
export type ChaosDatabase = { url: string; describe: string; release: (keep: boolean) => Promise<void> };

async function admin(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function provisionChaosDatabase({ serverUrl }: { serverUrl: string | undefined }): Promise<ChaosDatabase> {
  const name = `nl_chaos_${randomBytes(5).toString('hex')}`;
  if (serverUrl) {
    assertLocalDatabaseUrl(serverUrl);
    await admin(serverUrl, `create database ${name}`);
    const url = withDatabase(serverUrl, name);
    await migrateDatabase(url);
    return {
      url,
      describe: `database ${name} on the DATABASE_URL server`,
      release: async (keep) => {
        if (!keep) await admin(serverUrl, `drop database if exists ${name} with (force)`);
      },
    };
  }
  const { startEmbeddedPostgres } = await import('@/db/embedded');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'notice-ledger-chaos-'));
  // Running as root, the package starts postgres as the `postgres` user: it must reach the directory.
  await chmod(dir, 0o755);
  const server = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), database: name });
  await migrateDatabase(server.url);
  return {
    url: server.url,
    describe: `embedded PostgreSQL in ${dir}`,
    release: async (keep) => {
      // Never left running: a kept directory can be started again to inspect it.
      await server.stop();
      if (!keep) await rm(dir, { recursive: true, force: true });
    },
  };
}
