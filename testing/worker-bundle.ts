import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The worker as production runs it (package.json "worker": the bundle scripts/build-worker.ts
 * writes, on plain Node), built once per test process, so every test that spawns a worker runs
 * the code of this tree and not a stale bundle. Building takes about a second.
 */

const root = path.resolve(import.meta.dirname, '..');
const tsxLoader = pathToFileURL(path.join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
export const WORKER_BUNDLE = path.join(root, 'dist', 'worker', 'main.mjs');

const built = globalThis as typeof globalThis & { __noticeLedgerWorkerBuilt?: boolean };

/** node's arguments to run the worker: the bundle, built on first use in this process. */
export function workerNodeArgs(): string[] {
  if (!built.__noticeLedgerWorkerBuilt) {
    execFileSync(process.execPath, ['--import', tsxLoader, 'scripts/build-worker.ts'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    built.__noticeLedgerWorkerBuilt = true;
  }
  return ['--enable-source-maps', WORKER_BUNDLE];
}
