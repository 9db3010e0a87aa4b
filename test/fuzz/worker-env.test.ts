import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { workerNodeArgs } from '@/testing/worker-bundle';

/**
 * The real worker process (worker/main.ts, bundled as production runs it) refuses to start on a bad environment: non-zero
 * exit, a stderr line naming the variable, no stack trace, and no half-started worker.
 */

const root = path.resolve(import.meta.dirname, '..', '..');
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t.drop();
});

function runWorker(env: Record<string, string>): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, workerNodeArgs(), {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      WORKER_METRICS_PORT: '0',
      DATABASE_URL: t.url,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  // A worker that wrongly starts would run forever: stop it so the assertion, not a hang, reports it.
  const deadline = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      clearTimeout(deadline);
      resolve({ code, signal, stderr, stdout });
    });
  });
}

describe('worker start-up with a bad environment', () => {
  it('exits non-zero naming NOTICE_KEY_SECRET when it is missing, and QUARANTINE_AFTER or WORKER_METRICS_HOST when malformed', async () => {
    const [missing, malformed, badHost] = await Promise.all([
      runWorker({}),
      runWorker({ NOTICE_KEY_SECRET: 'fuzz-notice-key-secret-0123456789abcdef', QUARANTINE_AFTER: "15 minutes'; drop table notice_ledger" }),
      runWorker({ NOTICE_KEY_SECRET: 'fuzz-notice-key-secret-0123456789abcdef', WORKER_METRICS_HOST: 'metrics.internal:9464' }),
    ]);
    for (const [result, name] of [
      [missing, 'NOTICE_KEY_SECRET'],
      [malformed, 'QUARANTINE_AFTER'],
      [badHost, 'WORKER_METRICS_HOST'],
    ] as const) {
      expect(result.signal, `${name}: the worker had to be killed: it started`).toBeNull();
      expect(result.code, name).not.toBe(0);
      expect(result.code, name).not.toBeNull();
      expect(result.stderr, name).toContain(name);
      expect(result.stderr, `${name}: stack trace on stderr`).not.toMatch(/\n\s+at\s/);
      expect(result.stdout, `${name}: the worker reported ready`).not.toContain('worker ready');
    }
    expect(malformed.stderr).not.toContain('fuzz-notice-key-secret-0123456789abcdef');
  });
});
