import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EmbeddedAccessError, assertEmbeddedReachable } from '@/db/embedded-access';

/**
 * Runs first in `npm test`: what the tests need, checked before minutes of typecheck, lint and
 * vitest. The embedded PostgreSQL must be reachable by the user it runs as (db/embedded-access.ts). Chromium is where CHROMIUM_PATH says (playwright.config.ts reads the same
 * setting), by default Debian's /usr/bin/chromium. Missing, it is installed as .ci/run does
 * when this is root with apt-get and the default path; otherwise the run stops here with the
 * exact command.
 */

export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';
export const INSTALL_COMMAND = 'apt-get install -y chromium';

export type ChromiumPlan = { action: 'ok' } | { action: 'install' } | { action: 'stop'; message: string };

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(command: string, searchPath: string): boolean {
  return searchPath
    .split(path.delimiter)
    .filter(Boolean)
    .some((dir) => isExecutable(path.join(dir, command)));
}

export function planChromium({
  chromiumPath,
  explicit,
  present,
  isRoot,
  hasApt,
}: {
  chromiumPath: string;
  /** CHROMIUM_PATH was set: a browser of the caller's, never replaced by an install. */
  explicit: boolean;
  present: boolean;
  isRoot: boolean;
  hasApt: boolean;
}): ChromiumPlan {
  if (present) return { action: 'ok' };
  if (explicit) {
    return {
      action: 'stop',
      message: `CHROMIUM_PATH=${chromiumPath} is not an executable Chromium. Point CHROMIUM_PATH at one, or unset it and install Debian's: ${isRoot ? '' : 'sudo '}${INSTALL_COMMAND}`,
    };
  }
  if (isRoot && hasApt) return { action: 'install' };
  return {
    action: 'stop',
    message: `Chromium is not installed at ${chromiumPath}; the browser tests need it. Install it with:\n\n    ${isRoot ? '' : 'sudo '}${INSTALL_COMMAND}\n\n(or set CHROMIUM_PATH to a Chromium of your own). Playwright's browser download is not used.`,
  };
}

/** The tests' embedded PostgreSQL (data under the temporary directory) must be startable: as root, by the postgres user. */
function embeddedDatabaseProblem(): string | null {
  if (process.env.DATABASE_URL) return null;
  try {
    assertEmbeddedReachable(path.join(os.tmpdir(), 'notice-ledger-test'));
    return null;
  } catch (error) {
    if (error instanceof EmbeddedAccessError) return error.message;
    throw error;
  }
}

function main(): number {
  const database = embeddedDatabaseProblem();
  if (database) {
    console.error(`\n[preflight] ${database}\n`);
    return 1;
  }
  const explicit = Boolean(process.env.CHROMIUM_PATH);
  const chromiumPath = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
  const plan = planChromium({
    chromiumPath,
    explicit,
    present: isExecutable(chromiumPath),
    isRoot: process.getuid?.() === 0,
    hasApt: onPath('apt-get', process.env.PATH ?? ''),
  });
  if (plan.action === 'ok') return 0;
  if (plan.action === 'stop') {
    console.error(`\n[preflight] ${plan.message}\n`);
    return 1;
  }
  console.error("[preflight] Chromium is missing: installing Debian's (root, apt-get), as .ci/run does…");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', 'chromium'],
  ]) {
    const result = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (result.status !== 0) {
      console.error(`\n[preflight] apt-get ${args.join(' ')} failed (exit ${result.status ?? result.signal}). Install Chromium with: ${INSTALL_COMMAND}\n`);
      return 1;
    }
  }
  if (!isExecutable(chromiumPath)) {
    console.error(`\n[preflight] apt-get installed chromium, but ${chromiumPath} is still missing: set CHROMIUM_PATH to where it is.\n`);
    return 1;
  }
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main();
