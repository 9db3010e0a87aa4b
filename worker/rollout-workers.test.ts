import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { createUser } from '@/db/queries/users';
import { decideEnforce, requestEnforce } from '@/lib/controls/rollout';
import { setPause } from '@/lib/controls/service';
import { backfillFromCsv } from '@/lib/ledger/backfill';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createPgBossQueue, type PgBossQueue } from '@/lib/queue/pgboss';
import type { Actor } from '@/lib/replay/transitions';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { metricValue, spawnWorker, type WorkerProcess } from '@/testing/worker-process';

/**
 * The runtime controls reaching real worker processes (worker/main.ts), real pg-boss, the real
 * SMTP sink and PostgreSQL: the ledger mode switched in the store, and the kill switch. Every
 * wait polls a condition (metrics over HTTP, rows, the sink); nothing sleeps.
 */

type Rig = { t: TestDatabase; sink: SmtpSink; publisher: PgBossQueue; workers: WorkerProcess[]; env: Record<string, string> };

const refreshMs = 250;

async function withRig(run: (rig: Rig) => Promise<void>): Promise<void> {
  const t = await createTestDatabase();
  const sink = await startSmtpSink();
  const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 30_000 });
  const rig: Rig = {
    t,
    sink,
    publisher,
    workers: [],
    env: { DATABASE_URL: t.url, SMTP_URL: sink.url, VISIBILITY_TIMEOUT: '30s', WORKER_CONCURRENCY: '2', RUNTIME_CONTROLS_REFRESH: `${refreshMs}ms` },
  };
  try {
    await publisher.start();
    await run(rig);
    for (const worker of rig.workers) expect(await worker.stop()).toEqual({ code: 0, signal: null });
  } finally {
    for (const worker of rig.workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await Promise.all(rig.workers.map((worker) => worker.exited));
    await publisher.stop();
    await sink.stop();
    await t.drop();
  }
}

function start(rig: Rig, env: Record<string, string> = {}): WorkerProcess {
  const worker = spawnWorker({ ...rig.env, ...env });
  rig.workers.push(worker);
  return worker;
}

async function user(t: TestDatabase, role: Actor['role']): Promise<Actor> {
  const row = await createUser(t.db, { email: `${role}-${randomBytes(3).toString('hex')}@test.local`, name: role, role, passwordHash: null });
  if (!row) throw new Error('user not created');
  return { id: row.id, email: row.email, role };
}

const modeOf = async (worker: WorkerProcess) => {
  const text = await worker.scrape();
  return { shadow: metricValue(text, 'notice_ledger_mode', { mode: 'shadow' }), enforce: metricValue(text, 'notice_ledger_mode', { mode: 'enforce' }) };
};

describe.concurrent('runtime controls in real worker processes', () => {
  it('the ledger mode switched in the store reaches both running workers within seconds, and the send path applies it', async () => {
    await withRig(async (rig) => {
      const { t, sink, publisher } = rig;
      // The first worker stores its LEDGER_MODE; the second one's disagreeing LEDGER_MODE is ignored, with a warning.
      const first = start(rig, { LEDGER_MODE: 'shadow' });
      await first.ready;
      const second = start(rig, { LEDGER_MODE: 'enforce' });
      await second.ready;
      expect(second.logs().some((line) => line.msg?.toString().startsWith('LEDGER_MODE ignored') && line.stored === 'shadow')).toBe(true);
      for (const worker of [first, second]) expect(await modeOf(worker)).toEqual({ shadow: 1, enforce: 0 });

      const operator = await user(t, 'operator');
      const manager = await user(t, 'manager');
      expect(await requestEnforce(t.db, { actor: operator, reason: 'a full cycle in shadow' })).toMatchObject({ ok: true });
      expect(await decideEnforce(t.db, { actor: manager, decision: 'approve', reason: 'duplicates as expected' })).toMatchObject({ ok: true });
      const switchedAt = Date.now();
      await vi.waitFor(
        async () => {
          for (const worker of [first, second]) expect(await modeOf(worker)).toEqual({ shadow: 0, enforce: 1 });
        },
        { timeout: 10_000, interval: 50 },
      );
      const reachedMs = Date.now() - switchedAt;
      // One refresh, plus a scrape: well within the seconds the rollout promises.
      expect(reachedMs).toBeLessThan(5_000);

      // The send path applies it: duplicates of backfilled notices are suppressed by whichever worker takes them, none sent.
      // Marked woken, as a planner marks the wake-up it publishes: left unmarked, a worker's horizon
      // dispatcher could publish a second wake-up beside the test's own, whose delivery after the
      // suppression is recorded `discarded` (seen once on a slow host, 2026-12-07).
      const woken = { wakeupPublishedAt: new Date() };
      const duplicates = await Promise.all([insertTestJob(t.db, woken), insertTestJob(t.db, woken), insertTestJob(t.db, woken), insertTestJob(t.db, woken)]);
      const csv = [
        'notice_type,revision,sent_at,subscription_id,period_start',
        ...duplicates.map((job) => `renewal_notice_t72,0,2026-01-01T00:00:00Z,${job.identity.subscription_id},${job.identity.period_start}`),
      ];
      expect(await backfillFromCsv({ db: t.db, text: csv.join('\n'), secret: process.env.NOTICE_KEY_SECRET ?? '' })).toMatchObject({ inserted: 4 });
      for (const job of duplicates) await publisher.publish({ jobId: job.id });
      await vi.waitFor(
        async () => {
          for (const job of duplicates) expect(await readJob(t.db, job.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'duplicate' });
        },
        { timeout: 20_000, interval: 100 },
      );
      for (const job of duplicates) expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
      const attempts = (await Promise.all(duplicates.map((job) => listAttemptsForJob(t.db, { jobId: job.id })))).flat();
      expect(new Set(attempts.map((a) => `${a.outcome}:${a.mode}`))).toEqual(new Set(['suppressed_duplicate:enforce']));
    });
  }, 90_000);

  it('a paused type sends nothing, counts no attempt, and resumes without a restart; another type keeps sending (control)', async () => {
    await withRig(async (rig) => {
      const { t, sink, publisher } = rig;
      const workers = [start(rig), start(rig)];
      await Promise.all(workers.map((worker) => worker.ready));

      await setPause(t.db, {
        action: 'pause',
        target: { scope: 'notice_type', noticeType: 'renewal_notice_t72' },
        reason: 'incident 42',
        actor: 'op@test.local',
      });
      await vi.waitFor(
        async () => {
          for (const worker of workers)
            expect(metricValue(await worker.scrape(), 'notice_ledger_sending_paused', { scope: 'notice_type', target: 'renewal_notice_t72' })).toBe(1);
        },
        { timeout: 10_000, interval: 50 },
      );

      // Marked published, as enqueueNotice marks a job whose wake-up it sent: the test publishes the
      // one wake-up of each, so no dispatcher adds a second (whose handling after the resume would be
      // a suppressed duplicate beside the send).
      const paused = await insertTestJob(t.db, { wakeupPublishedAt: new Date() });
      const other = await insertTestJob(t.db, {
        wakeupPublishedAt: new Date(),
        fact: { type: 'renewal_notice_t24', identity: { subscription_id: `sub_${randomBytes(5).toString('hex')}`, period_start: '2026-10-01' }, revision: 0 },
      });
      const messagesBefore = sink.messages().length;
      await publisher.publish({ jobId: paused.id });
      await publisher.publish({ jobId: other.id });
      // The paused job was handled, and deferred (the wake-up comes back every refresh), more than once.
      await vi.waitFor(
        async () => {
          const deferred = await Promise.all(
            workers.map(async (worker) =>
              metricValue(await worker.scrape(), 'notice_ledger_deferrals_total', { notice_type: 'renewal_notice_t72', cause: 'sending_paused' }),
            ),
          );
          expect(deferred.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(3);
        },
        { timeout: 20_000, interval: 100 },
      );
      await vi.waitFor(async () => expect((await readJob(t.db, other.id)).state).toBe('sent'), { timeout: 20_000, interval: 100 });
      expect(sink.countByCorrelation(correlationOf(other.noticeKey))).toBe(1);
      // Nothing of the paused type went out: the sink got only the control's message.
      expect(sink.countByCorrelation(correlationOf(paused.noticeKey))).toBe(0);
      expect(sink.messages().length).toBe(messagesBefore + 1);
      expect(await readJob(t.db, paused.id)).toMatchObject({ state: 'pending', attempts: 0, deadlineAt: paused.deadlineAt });
      expect(await listAttemptsForJob(t.db, { jobId: paused.id })).toEqual([]);
      expect(await getLedgerRow(t.db, { noticeKey: paused.noticeKey })).toBeFalsy();

      // Resumed in the store: the same running workers send it, once.
      await setPause(t.db, {
        action: 'resume',
        target: { scope: 'notice_type', noticeType: 'renewal_notice_t72' },
        reason: 'incident 42 fixed',
        actor: 'op@test.local',
      });
      await vi.waitFor(async () => expect((await readJob(t.db, paused.id)).state).toBe('sent'), { timeout: 20_000, interval: 100 });
      expect(sink.countByCorrelation(correlationOf(paused.noticeKey))).toBe(1);
      expect(await readJob(t.db, paused.id)).toMatchObject({ attempts: 1 });
      expect((await listAttemptsForJob(t.db, { jobId: paused.id })).map((a) => a.outcome)).toEqual(['sent']);
      for (const worker of workers) expect(worker.child.exitCode).toBeNull();
    });
  }, 90_000);
});
