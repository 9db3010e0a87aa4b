import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { printTable, type TargetRow } from './support';

/**
 * `npm run bench`: every benchmark with a target, one after another, each in its own process
 * with its own embedded PostgreSQL (so one's seed cannot warm another's cache), then one table
 * of every target. About 20 minutes on two cores, most of it seeding 10 M ledger rows twice.
 *
 *   bench/run.ts            the bare ledger path vs the worker end to end, latency, RSS (~4 min;
 *                           alone: `npm run bench:worker`)
 *   bench/console-scale.ts  every console page's queries at 10 M ledger rows / 1 M pending jobs
 *   bench/replay-dry-run.ts 1 M uploaded keys against a 10 M-row ledger
 *
 * Their environment knobs pass through (BENCH_SCALE, BENCH_KEYS, BENCH_LEDGER, AMQP_URL, …).
 */
const steps = ['bench/run.ts', 'bench/console-scale.ts', 'bench/replay-dry-run.ts'];

function runStep(script: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: 'inherit', env });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'notice-ledger-bench-all-'));
const targetsFile = path.join(dir, 'targets.jsonl');
const failed: string[] = [];
try {
  for (const script of steps) {
    console.log(`\n=== ${script} ===`);
    const started = performance.now();
    const code = await runStep(script, { ...process.env, BENCH_TARGETS_FILE: targetsFile });
    console.log(`\n(${script}: ${((performance.now() - started) / 60_000).toFixed(1)} min${code === 0 ? '' : `, exit code ${String(code)}`})`);
    if (code !== 0) failed.push(script);
  }
  const text = await readFile(targetsFile, 'utf8').catch(() => '');
  const rows = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as TargetRow);
  printTable(`Every target (${os.cpus().length.toString()} cores, Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)})`, rows);
  if (failed.length > 0) {
    console.error(`\nFailed: ${failed.join(', ')} — their targets are missing above.`);
    process.exitCode = 1;
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
