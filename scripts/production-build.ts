import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The console's production build (`next build` into `.next/`), made once and shared by
 * everything that serves it with `next start`: `npm run demo`, `npm run test:e2e` and the
 * chaos suite. `ensureProductionBuild` builds only when a source is newer than the last
 * successful build, and under a lock, so two processes asking at once build once: the
 * second waits for the first and then finds the build fresh.
 *
 * One build serves callers with different environments, so it must not depend on the
 * environment it was built in. Next inlines into the bundles only NODE_ENV (`next build`
 * forces `production`), `NEXT_PUBLIC_*` variables (the product reads none) and next.config's
 * `env` (unset); every page and route handler is `force-dynamic`, so nothing reads the
 * configuration while building (the one static page is `_not-found`). The build therefore
 * runs with a fixed, minimal environment: a page that started reading secrets or settings at
 * build time would fail here instead of baking one caller's values into everyone's server.
 */

const SOURCE_DIRS = ['app', 'components', 'lib', 'db'];
const SOURCE_FILES = ['next.config.mjs', 'package.json', 'package-lock.json', 'tsconfig.json', 'proxy.ts', 'instrumentation.ts', 'instrumentation-client.ts'];
const STAMP_FILE = 'notice-ledger-build-stamp';
// Longer than any build on a loaded two-core machine: past it, a builder is assumed stuck.
const LOCK_WAIT_SECONDS = 900;

export type BuildState = 'fresh' | 'stale' | 'missing';

function newestSourceMtime(root: string): number {
  let newest = 0;
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (!entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const dir of SOURCE_DIRS) walk(path.join(root, dir));
  for (const file of SOURCE_FILES) {
    const full = path.join(root, file);
    if (existsSync(full)) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * The stamp holds the instant the build started and is written only after it succeeded, so a
 * source saved during a build, or a build that was interrupted, leaves the build stale. A
 * build without a stamp (a plain `npm run build`) is of unknown age: stale.
 */
export function readBuildState({ root }: { root: string }): BuildState {
  const stamp = path.join(root, '.next', STAMP_FILE);
  if (!existsSync(path.join(root, '.next', 'BUILD_ID'))) return 'missing';
  if (!existsSync(stamp)) return 'stale';
  const startedAt = Number(readFileSync(stamp, 'utf8'));
  return Number.isFinite(startedAt) && newestSourceMtime(root) <= startedAt ? 'fresh' : 'stale';
}

/** Holds an exclusive flock(1) on `file` until the returned release is called (or this process dies). */
async function lockFile(file: string): Promise<() => Promise<void>> {
  // The kernel drops the lock when `cat` exits: on release (stdin closed) or when this process
  // dies and takes the pipe with it, so a killed builder never leaves a stale lock behind.
  const holder = spawn('flock', ['--exclusive', '--wait', String(LOCK_WAIT_SECONDS), file, 'sh', '-c', 'echo locked && exec cat'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => holder.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    holder.once('error', (error) => reject(new Error(`could not run flock(1) to lock ${file}: ${error.message}`)));
    createInterface({ input: holder.stdout }).once('line', () => resolve());
    void exited.then((code) => reject(new Error(`could not lock ${file} within ${LOCK_WAIT_SECONDS} s (flock exited ${code}): is another build stuck?`)));
  });
  return async () => {
    holder.stdin.end();
    await exited;
  };
}

function runNextBuild(root: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-8_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`next build failed (${signal ?? `code ${String(code)}`}):\n${output}`))));
  });
}

/** Makes sure `.next/` holds a build of the current sources; builds (once, under a lock) when it does not. */
export async function ensureProductionBuild({ root, log = () => undefined }: { root: string; log?: (line: string) => void }): Promise<{ built: boolean }> {
  const release = await lockFile(path.join(root, '.next-build.lock'));
  try {
    const state = readBuildState({ root });
    if (state === 'fresh') return { built: false };
    log(`building the console (${state === 'missing' ? 'no build yet' : 'sources newer than the build'}; a minute or two) …`);
    const stamp = path.join(root, '.next', STAMP_FILE);
    await rm(stamp, { force: true });
    const startedAt = Date.now();
    await runNextBuild(root);
    await writeFile(stamp, String(startedAt));
    log(`console built in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
    return { built: true };
  } finally {
    await release();
  }
}
