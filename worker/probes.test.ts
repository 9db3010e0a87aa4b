import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { PROMTOOL_MISSING, promtool, runPromtool } from '@/testing/promtool';
import { withDatabase } from '@/testing/database';
import { spawnWorker, type WorkerProcess } from '@/testing/worker-process';

/**
 * A real worker process's probes while its database goes away and comes back: /healthz stays
 * 200 (the process lives; restarting it would not help), /readyz turns 503 naming the database
 * and the queue connection (pg-boss lives in the same database), and 200 again once it is back.
 */

let t: TestDatabase;
let worker: WorkerProcess;
let base = '';

beforeAll(async () => {
  t = await createTestDatabase();
  worker = spawnWorker({ DATABASE_URL: t.url, WORKER_CONCURRENCY: '1' });
  base = `http://127.0.0.1:${(await worker.ready).metricsPort}`;
});
afterAll(async () => {
  await worker.stop();
  await t.drop();
});

async function onServer(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: withDatabase(inject('pgServerUrl'), 'postgres') });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

async function get(path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${base}${path}`);
  return { status: response.status, body: await response.text() };
}

type Readiness = { status: string; database: { ok: boolean; reason?: string }; queue: { ok: boolean; reason?: string } };

describe("the worker's /healthz and /readyz (real process, real database outage)", () => {
  it.skipIf(!promtool)(`its /metrics, as the process serves it, passes promtool check metrics (${PROMTOOL_MISSING})`, async () => {
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    expect(runPromtool(['check', 'metrics'], { input: metrics.body })).toEqual({ code: 0, output: '' });
  });

  it('ready with both connections up; 503 naming both while the database refuses connections; ready again after', async () => {
    expect(await get('/healthz')).toEqual({ status: 200, body: 'ok\n' });
    const up = await get('/readyz');
    expect(up.status).toBe(200);
    expect(JSON.parse(up.body)).toEqual({ status: 'ready', database: { ok: true }, queue: { ok: true } });

    await onServer(`alter database ${t.name} with allow_connections false`);
    try {
      await onServer(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${t.name}' and pid <> pg_backend_pid()`);
      // The first probe may still meet a connection the termination has not reached; the
      // server refuses every new one, so the probe settles at 503 for both checks.
      const down = await vi.waitFor(
        async () => {
          const answer = await get('/readyz');
          const state = JSON.parse(answer.body) as Readiness;
          expect({ status: answer.status, database: state.database.ok, queue: state.queue.ok }).toEqual({ status: 503, database: false, queue: false });
          return state;
        },
        { timeout: 15_000, interval: 100 },
      );
      expect(down.status).toBe('not_ready');
      expect(down.database.reason).toMatch(/^database unreachable: /);
      expect(down.queue.reason).toMatch(/^pg-boss cannot reach PostgreSQL: /);
      expect(await get('/healthz')).toEqual({ status: 200, body: 'ok\n' });
    } finally {
      await onServer(`alter database ${t.name} with allow_connections true`);
    }

    await vi.waitFor(async () => expect((await get('/readyz')).status).toBe(200), { timeout: 15_000, interval: 100 });
    expect(worker.child.exitCode).toBeNull();
  });
});
