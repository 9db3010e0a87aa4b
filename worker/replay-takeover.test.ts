import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { encode } from 'next-auth/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '@/db/queries/users';
import { correlationOf } from '@/lib/ledger/notice-key';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { deleteRabbitQueue } from '@/testing/queue/rabbitmq';
import { decideReplay, requestReplay, startReplay } from '@/lib/replay/service';
import type { Actor } from '@/lib/replay/transitions';
import { ensureProductionBuild } from '@/scripts/production-build';
import { startConsoleServer, type ConsoleServer } from '@/testing/console-server';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { spawnWorker, type WorkerProcess } from '@/testing/worker-process';

/**
 * Replays are published by the workers, so neither a console deploy nor a worker crash pauses
 * one. Real processes: `next start` over the production build, workers under tsx, an SMTP
 * sink. Every wait is on database state, with a deadline.
 */

const secret = process.env.NOTICE_KEY_SECRET ?? '';
const amqpUrl = process.env.AMQP_URL ?? '';
const sessionSecret = randomBytes(32).toString('hex');
const ROWS = 40;
// 8 batches of 5; one recipient domain at 20 a second paces them 250 ms apart. A killed worker
// may also have held wake-ups it had fetched: the send path's own recovery (redelivery, the
// sweeper after twice the visibility window) hands them to the survivor.
const workerEnv = { REPLAY_BATCH: '5', RATE_LIMIT_PER_DOMAIN: '20', VISIBILITY_TIMEOUT: '2s', SWEEP_EVERY: '1s', WORKER_CONCURRENCY: '4' };

let t: TestDatabase;
let sink: SmtpSink;
let operator: Actor;
let manager: Actor;
const workers: WorkerProcess[] = [];
const consoles: ConsoleServer[] = [];

async function user(role: Actor['role']): Promise<Actor> {
  const row = await createUser(t.db, { email: `${role}-${randomBytes(3).toString('hex')}@takeover.test`, name: role, role, passwordHash: null });
  if (!row) throw new Error('user not created');
  return { id: row.id, email: row.email, role };
}

function worker(env: Record<string, string>): WorkerProcess {
  const started = spawnWorker({ DATABASE_URL: t.url, SMTP_URL: sink.url, ...workerEnv, ...env });
  workers.push(started);
  return started;
}

async function startConsole(): Promise<ConsoleServer> {
  const server = await startConsoleServer({
    env: { DATABASE_URL: t.url, NOTICE_KEY_SECRET: secret, NEXTAUTH_SECRET: sessionSecret, LOG_LEVEL: 'warn', NOTICE_LEDGER_PROCESS: 'takeover-console' },
  });
  consoles.push(server);
  return server;
}

/** An uploaded list of ROWS new notices, requested and approved: the workers will create and send each. */
async function approvedUpload(tag: string): Promise<{ id: string; batchId: string }> {
  const due = new Date(Date.now() - 3_600_000).toISOString();
  const deadline = new Date(Date.now() + 86_400_000).toISOString();
  // The charge two days out; every row carries what the renewal template declares, as a producer's request must.
  const anchor = new Date(Date.now() + 2 * 86_400_000).toISOString();
  const payload = `"${JSON.stringify({ customer_name: 'Ada Lovelace', plan_name: 'Pro annual', amount: '49.00', currency: 'EUR' }).replace(/"/g, '""')}"`;
  const lines = ['notice_type,subscription_id,period_start,revision,recipient_email,due_at,deadline_at,anchor_at,payload'];
  for (let i = 0; i < ROWS; i += 1) lines.push(`renewal_notice_t24,sub_${tag}_${i},2026-12-01,0,r${i}@${tag}.test,${due},${deadline},${anchor},${payload}`);
  const requested = await requestReplay(t.db, { actor: operator, input: { reason: `takeover ${tag}`, csv: lines.join('\n') }, secret });
  if (!requested.ok) throw new Error(requested.refusal.message);
  expect(requested.data.dryRun).toMatchObject({ accepted: ROWS, rejections: [] });
  const { id, batchId } = requested.data.replay;
  const approved = await decideReplay(t.db, { id, actor: manager, decision: 'approve', reason: 'checked' });
  if (!approved.ok) throw new Error(approved.refusal.message);
  return { id, batchId };
}

type Progress = { state: string; published: number; total: number; sent: number };

async function progressOf(replay: { id: string; batchId: string }): Promise<Progress> {
  const result = await t.pool.query<Progress>(
    `select r.state, r.published, r.total,
       (select count(*)::int from reminder_jobs j where j.batch_id = r.batch_id and j.state = 'sent') as sent
     from replays r where r.id = $1`,
    [replay.id],
  );
  const row = result.rows[0];
  if (!row) throw new Error('replay vanished');
  return row;
}

async function waitFor(what: string, check: () => Promise<boolean>, { timeoutMs = 60_000, detail = async () => '' } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} ${await detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every item published once, every notice sent, and exactly one message per notice key at the sink. */
async function expectDeliveredOnce(replay: { id: string; batchId: string }): Promise<void> {
  await waitFor(
    'every wake-up handled',
    async () => {
      const progress = await progressOf(replay);
      return progress.state === 'completed' && progress.sent === ROWS;
    },
    { detail: async () => JSON.stringify(await progressOf(replay)) },
  );
  expect(await progressOf(replay)).toEqual({ state: 'completed', published: ROWS, total: ROWS, sent: ROWS });
  const items = await t.pool.query<{ key: string; published: boolean }>(
    'select notice_key as key, published_at is not null as published from replay_items where replay_id = $1',
    [replay.id],
  );
  expect(items.rows).toHaveLength(ROWS);
  for (const item of items.rows) {
    expect(item.published).toBe(true);
    expect(sink.countByCorrelation(correlationOf(item.key))).toBe(1);
  }
  const audit = await t.pool.query<{ action: string }>("select action from audit_log where target_id = $1 and actor = 'system:replay-runner'", [
    replay.batchId,
  ]);
  expect(audit.rows.map((row) => row.action)).toEqual(['replay.complete']);
}

beforeAll(async () => {
  await ensureProductionBuild({ root: path.resolve(import.meta.dirname, '..'), log: (line) => console.log(`replay-takeover: ${line}`) });
  t = await createTestDatabase();
  sink = await startSmtpSink();
  operator = await user('operator');
  manager = await user('manager');
}, 900_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(consoles.map((c) => c.stop()));
  await sink?.stop();
  await t?.drop();
});

describe('replays live in the workers (real processes)', () => {
  it('SIGKILL the console mid-replay: the workers finish it while the console is down, and the restarted console reports it completed', async () => {
    const w = worker({ REPLAY_EVERY: '50ms' });
    await w.ready;
    const app = await startConsole();
    const replay = await approvedUpload('console-kill');
    const cookie = `next-auth.session-token=${await encode({ token: { sub: operator.id, role: operator.role, email: operator.email }, secret: sessionSecret })}`;
    const run = await fetch(`${app.url}/api/console/replays/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: app.url, cookie },
      body: JSON.stringify({ id: replay.id }),
    });
    expect(run.status).toBe(202);

    await waitFor('the first batch', async () => (await progressOf(replay)).published > 0);
    await app.kill();
    expect(app.exit()).toMatchObject({ signal: 'SIGKILL' });
    const atKill = await progressOf(replay);
    expect(atKill.state).toBe('running');
    expect(atKill.published).toBeLessThan(ROWS);

    await expectDeliveredOnce(replay);
    // Still down: the console had no part in finishing it.
    expect(app.exit()).not.toBeNull();

    const restarted = await startConsole();
    const status = await fetch(`${restarted.url}/api/console/replays/status?id=${replay.id}`, { headers: { cookie } });
    expect(await status.json()).toMatchObject({ ok: true, data: { state: 'completed', progress: { total: ROWS, published: ROWS } } });
    await restarted.stop();
    await w.stop();
  }, 180_000);

  const workerKill = async (tag: string, queueEnv: Record<string, string>) => {
    // B looks every 400 ms, A every 10 ms: A claims one of the first batches and dies in it, uncommitted.
    const b = worker({ ...queueEnv, REPLAY_EVERY: '400ms' });
    const a = worker({ ...queueEnv, REPLAY_EVERY: '10ms', WORKER_CRASH_AT: 'replay_before_commit' });
    await Promise.all([a.ready, b.ready]);
    const replay = await approvedUpload(tag);
    const started = await startReplay(t.db, { id: replay.id, actor: operator, reason: 'go' });
    expect(started.ok).toBe(true);
    await waitFor('the crashing worker to claim a batch and die', async () => a.child.exitCode !== null || a.child.signalCode !== null, { timeoutMs: 30_000 });
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const atKill = await progressOf(replay);
    expect(atKill.state).toBe('running');
    expect(atKill.published).toBeLessThan(ROWS);

    await expectDeliveredOnce(replay);
    expect(sink.messages().filter((m) => m.to.some((to) => to.endsWith(`@${tag}.test`)))).toHaveLength(ROWS);
    await b.stop();
  };

  it('SIGKILL a worker mid-batch with a second worker running (pg-boss): the other takes the batch over, one message per key', async () => {
    await workerKill('worker-kill', {});
  }, 180_000);

  it.skipIf(!amqpUrl)(
    'SIGKILL a worker mid-batch with a second worker running (RabbitMQ, needs AMQP_URL: skipped without it): wake-ups for the jobs a batch creates wait for its commit; one message per key',
    async () => {
      const queueName = `replay-takeover-${randomBytes(4).toString('hex')}`;
      try {
        await workerKill('worker-kill-rabbit', { QUEUE_BACKEND: 'rabbitmq', AMQP_URL: amqpUrl, QUEUE_NAME: queueName });
      } finally {
        await deleteRabbitQueue(amqpUrl, queueName).catch(() => undefined);
      }
    },
    180_000,
  );
});
