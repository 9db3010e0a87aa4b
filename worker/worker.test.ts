import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { setRuntimeControl } from '@/db/queries/runtime-controls';
import { resolveQuarantine } from '@/lib/console/quarantine';
import { deliveryAttempts, recipientSuppressions } from '@/db/schema';
import { backfillFromCsv } from '@/lib/ledger/backfill';
import { correlationOf } from '@/lib/ledger/notice-key';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { createPgBossQueue, type PgBossQueue } from '@/lib/queue/pgboss';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { oneTimeCodeIn } from '@/testing/recipient';
import { metricValue, spawnWorker, type WorkerProcess } from '@/testing/worker-process';

/** Real worker processes, real pg-boss, real SMTP peer; metrics read over HTTP from /metrics. */

type Rig = { t: TestDatabase; sink: SmtpSink; publisher: PgBossQueue; workers: WorkerProcess[]; env: Record<string, string> };

async function withRig(visibilityMs: number, run: (rig: Rig) => Promise<void>): Promise<void> {
  const t = await createTestDatabase();
  const sink = await startSmtpSink();
  const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: visibilityMs });
  const rig: Rig = {
    t,
    sink,
    publisher,
    workers: [],
    env: {
      DATABASE_URL: t.url,
      SMTP_URL: sink.url,
      VISIBILITY_TIMEOUT: `${visibilityMs}ms`,
      WORKER_CONCURRENCY: '1',
      RETRY_BASE: '2s',
      QUARANTINE_AFTER: '15m',
    },
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

const type = { notice_type: 'renewal_notice_t72' };
const amqpUrl = process.env.AMQP_URL ?? '';

describe.concurrent('worker processes', () => {
  it('two workers, visibility expiry shorter than a stalled send: the second is suppressed, one email', async () => {
    await withRig(1_000, async (rig) => {
      const { t, sink, publisher } = rig;
      const job = await insertTestJob(t.db);
      const corr = correlationOf(job.noticeKey);
      sink.setFault({ kind: 'stall' });
      const first = start(rig);
      await first.ready;
      await publisher.publish({ jobId: job.id });
      await sink.waitFor(() => sink.stalled().some((m) => m.correlation === corr), 20_000);

      const second = start(rig);
      const { workerId: secondId } = await second.ready;
      await vi.waitFor(
        async () => {
          const rows = await t.db
            .select()
            .from(deliveryAttempts)
            .where(and(eq(deliveryAttempts.jobId, job.id), eq(deliveryAttempts.workerId, secondId)));
          expect(rows.length).toBeGreaterThan(0);
          expect(new Set(rows.map((row) => `${row.outcome}:${row.detail}`))).toEqual(new Set(['suppressed_duplicate:ledger_claimed']));
        },
        { timeout: 30_000, interval: 200 },
      );
      const secondMetrics = await second.scrape();
      expect(metricValue(secondMetrics, 'notice_ledger_duplicates_suppressed_total', { reason: 'ledger_claimed' })).toBeGreaterThanOrEqual(1);
      expect(metricValue(secondMetrics, 'notice_ledger_claims_minted_total')).toBe(0);

      sink.setFault({ kind: 'none' });
      expect(sink.releaseStalled()).toBe(1);
      await vi.waitFor(async () => expect((await readJob(t.db, job.id)).state).toBe('sent'), { timeout: 20_000, interval: 100 });
      expect(sink.countByCorrelation(corr)).toBe(1);
      expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'sent' });

      const firstMetrics = await first.scrape();
      expect(metricValue(firstMetrics, 'notice_ledger_claims_minted_total', { ...type, mode: 'enforce' })).toBe(1);
      expect(metricValue(firstMetrics, 'notice_ledger_send_outcomes_total', { ...type, outcome: 'accepted' })).toBe(1);
      expect(metricValue(firstMetrics, 'notice_ledger_claim_to_commit_seconds_count', type)).toBe(1);
      // The stall held the claim open for over a second: the histogram shows the wide gap.
      expect(metricValue(firstMetrics, 'notice_ledger_claim_to_commit_seconds_bucket', { ...type, le: '1' })).toBe(0);
      expect(metricValue(firstMetrics, 'notice_ledger_quarantined_claims')).toBe(0);
    });
  }, 90_000);

  it('451 then 550: retried, then failed, no claim left; a 451 never bypasses a later bounce; unknown keeps the claim; a resend reuses the code', async () => {
    await withRig(5_000, async (rig) => {
      const { t, sink, publisher } = rig;
      const worker = start(rig);
      await worker.ready;

      const job = await insertTestJob(t.db);
      const corr = correlationOf(job.noticeKey);
      sink.setFault({ kind: 'reject', code: 451, times: 1 });
      await publisher.publish({ jobId: job.id });
      await vi.waitFor(() => expect(sink.rejections().filter((r) => r.correlation === corr)).toHaveLength(1), { timeout: 20_000, interval: 50 });
      sink.setFault({ kind: 'reject', code: 550, times: 1 });
      await vi.waitFor(async () => expect((await readJob(t.db, job.id)).state).toBe('failed'), { timeout: 20_000, interval: 100 });
      expect(await readJob(t.db, job.id)).toMatchObject({ attempts: 2, lastErrorClass: 'smtp_550' });
      expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'released', claimToken: null });
      expect(
        sink
          .rejections()
          .filter((r) => r.correlation === corr)
          .map((r) => r.code),
      ).toEqual([451, 550]);
      expect(sink.countByCorrelation(corr)).toBe(0);
      const outcomes = (await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => a.outcome).filter((o) => o.endsWith('_failure'));
      expect(outcomes).toEqual(['retryable_failure', 'permanent_failure']);
      sink.setFault({ kind: 'none' });

      const bounced = await insertTestJob(t.db, { recipientEmail: 'soon-bounced@example.test' });
      sink.setFault({ kind: 'reject', code: 451, times: 1 });
      await publisher.publish({ jobId: bounced.id });
      await vi.waitFor(() => expect(sink.rejections().filter((r) => r.correlation === correlationOf(bounced.noticeKey))).toHaveLength(1), {
        timeout: 20_000,
        interval: 50,
      });
      await t.db.insert(recipientSuppressions).values({ email: 'soon-bounced@example.test', reason: 'hard_bounce' });
      await vi.waitFor(async () => expect(await readJob(t.db, bounced.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'hard_bounce' }), {
        timeout: 20_000,
        interval: 100,
      });
      expect(sink.countByCorrelation(correlationOf(bounced.noticeKey))).toBe(0);

      // Connection cut after the message was handed over: unknown, the claim stays.
      const dropped = await insertTestJob(t.db);
      sink.setFault({ kind: 'drop-after-data', times: 1 });
      await publisher.publish({ jobId: dropped.id });
      await vi.waitFor(async () => expect(await readJob(t.db, dropped.id)).toMatchObject({ state: 'claimed', lastErrorClass: 'connection_lost' }), {
        timeout: 20_000,
        interval: 100,
      });
      expect(await getLedgerRow(t.db, { noticeKey: dropped.noticeKey })).toMatchObject({ state: 'claimed' });

      // On-call finds no provider trace and releases it for resend through the console's quarantine
      // action (what POST /api/console/quarantine/resolve calls): the resend carries the first code.
      expect(
        await resolveQuarantine(t.db, {
          action: 'release',
          selection: { keys: [dropped.noticeKey] },
          actor: 'oncall@example.test',
          reason: 'no provider evidence',
          quarantineAfterMs: 0,
        }),
      ).toEqual({ action: 'release', resolved: [dropped.noticeKey], skipped: 0 });
      await publisher.publish({ jobId: dropped.id });
      await vi.waitFor(async () => expect((await readJob(t.db, dropped.id)).state).toBe('sent'), { timeout: 20_000, interval: 100 });
      const codes = sink
        .messages()
        .filter((m) => m.correlation === correlationOf(dropped.noticeKey))
        .map((m) => oneTimeCodeIn(m.raw));
      expect(codes).toHaveLength(2);
      expect(codes[0]).toMatch(/^[A-Z2-9]{10}$/);
      expect(codes[1]).toBe(codes[0]);

      const metrics = await worker.scrape();
      expect(metricValue(metrics, 'notice_ledger_send_outcomes_total', { ...type, outcome: 'unknown' })).toBe(1);
      expect(metricValue(metrics, 'notice_ledger_send_outcomes_total', { ...type, outcome: 'retryable' })).toBe(2);
      expect(metricValue(metrics, 'notice_ledger_send_outcomes_total', { ...type, outcome: 'permanent' })).toBe(1);
      expect(metricValue(metrics, 'notice_ledger_send_outcomes_total', { ...type, outcome: 'accepted' })).toBe(1);
      expect(metricValue(metrics, 'notice_ledger_claims_minted_total', type)).toBe(5);
      expect(metricValue(metrics, 'notice_ledger_policy_suppressions_total', { ...type, reason: 'hard_bounce' })).toBe(1);
    });
  }, 90_000);

  it('shadow mode sends a backfilled duplicate and counts it; enforce mode suppresses it', async () => {
    await withRig(5_000, async (rig) => {
      const { t, sink, publisher } = rig;
      const shadowDuplicate = await insertTestJob(t.db);
      const shadowFresh = await insertTestJob(t.db);
      const backfill = async (job: { identity: Record<string, string> }) => {
        const csv = [
          'notice_type,revision,sent_at,subscription_id,period_start',
          `renewal_notice_t72,0,2026-01-01T00:00:00Z,${job.identity.subscription_id},${job.identity.period_start}`,
        ];
        expect(await backfillFromCsv({ db: t.db, text: csv.join('\n'), secret: process.env.NOTICE_KEY_SECRET ?? '' })).toMatchObject({
          inserted: 1,
          invalid: [],
        });
      };
      await backfill(shadowDuplicate);

      const shadow = start(rig, { LEDGER_MODE: 'shadow' });
      await shadow.ready;
      await publisher.publish({ jobId: shadowDuplicate.id });
      await publisher.publish({ jobId: shadowFresh.id });
      await vi.waitFor(
        async () => expect([(await readJob(t.db, shadowDuplicate.id)).state, (await readJob(t.db, shadowFresh.id)).state]).toEqual(['sent', 'sent']),
        { timeout: 20_000, interval: 100 },
      );
      expect(sink.countByCorrelation(correlationOf(shadowDuplicate.noticeKey))).toBe(1);
      const shadowMetrics = await shadow.scrape();
      expect(metricValue(shadowMetrics, 'notice_ledger_would_suppress_total', type)).toBe(1);
      expect(metricValue(shadowMetrics, 'notice_ledger_claims_minted_total', { ...type, mode: 'shadow' })).toBe(1);
      // Shadow never suppresses on the ledger (discarding a wake-up for a job already sent is not the ledger's doing).
      expect(metricValue(shadowMetrics, 'notice_ledger_duplicates_suppressed_total', { reason: 'ledger_sent' })).toBe(0);
      expect(await shadow.stop()).toEqual({ code: 0, signal: null });

      // Created only now: a running worker's sweeper would otherwise wake it in shadow mode.
      const enforceDuplicate = await insertTestJob(t.db);
      await backfill(enforceDuplicate);

      // The mode is stored (the shadow worker stored its LEDGER_MODE): switch it as the Rollout page's approval does.
      await setRuntimeControl(t.db, { name: 'ledger_mode', value: 'enforce', reason: 'test: enforce', changedBy: 'manager@test.local' });
      const enforce = start(rig);
      await enforce.ready;
      await publisher.publish({ jobId: enforceDuplicate.id });
      await vi.waitFor(async () => expect(await readJob(t.db, enforceDuplicate.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'duplicate' }), {
        timeout: 20_000,
        interval: 100,
      });
      expect(sink.countByCorrelation(correlationOf(enforceDuplicate.noticeKey))).toBe(0);
      const enforceMetrics = await enforce.scrape();
      expect(metricValue(enforceMetrics, 'notice_ledger_duplicates_suppressed_total', { ...type, reason: 'ledger_sent' })).toBe(1);
      expect(metricValue(enforceMetrics, 'notice_ledger_would_suppress_total')).toBe(0);
    });
  }, 90_000);

  it('SIGTERM the instant "worker ready" is read: a clean stop, never the default signal action', async () => {
    await withRig(30_000, async (rig) => {
      // A supervisor may signal the moment it reads the line; three at once to widen the race.
      const workers = [start(rig), start(rig), start(rig)];
      await Promise.all(
        workers.map(async (worker) => {
          await worker.ready;
          worker.child.kill('SIGTERM');
        }),
      );
      for (const worker of workers) {
        expect(await worker.exited).toEqual({ code: 0, signal: null });
        expect(worker.logs().some((line) => line.msg === 'stopped')).toBe(true);
      }
    });
  }, 90_000);

  it('SIGTERM during a send: no new work, the in-flight send finishes and commits before its ack', async () => {
    await withRig(30_000, async (rig) => {
      const { t, sink, publisher } = rig;
      const job = await insertTestJob(t.db);
      const corr = correlationOf(job.noticeKey);
      sink.setFault({ kind: 'stall' });
      const worker = start(rig);
      await worker.ready;
      await publisher.publish({ jobId: job.id });
      await sink.waitFor(() => sink.stalled().some((m) => m.correlation === corr), 20_000);

      worker.child.kill('SIGTERM');
      await vi.waitFor(() => expect(worker.logs().some((line) => line.msg === 'stopping: no new work, finishing in-flight sends')).toBe(true), {
        timeout: 10_000,
        interval: 50,
      });
      expect(worker.child.exitCode).toBeNull();
      const later = await insertTestJob(t.db);
      await publisher.publish({ jobId: later.id });

      sink.setFault({ kind: 'none' });
      expect(sink.releaseStalled()).toBe(1);
      expect(await worker.exited).toEqual({ code: 0, signal: null });
      expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' });
      expect(sink.countByCorrelation(corr)).toBe(1);
      // The wake-up that carried the send (ours, or the sweeper's for the same job) was acked.
      const [sent] = (await listAttemptsForJob(t.db, { jobId: job.id })).filter((a) => a.outcome === 'sent');
      const acked = await t.pool.query<{ state: string }>('select state from pgboss.job where id = $1', [sent?.queueMessageId]);
      expect(acked.rows[0]?.state).toBe('completed');
      // Published after the stop began: left for the next worker.
      expect((await readJob(t.db, later.id)).state).toBe('pending');
      expect(await getLedgerRow(t.db, { noticeKey: later.noticeKey })).toBeNull();
    });
  }, 90_000);

  // The same worker against a real broker, when one is configured (the code never needs it).
  it.skipIf(!amqpUrl)(
    'RabbitMQ (needs AMQP_URL, e.g. amqp://guest:guest@127.0.0.1:5672: skipped without it): a requeue after the visibility window mid-send is suppressed; one email',
    async () => {
      const queueName = `nl-test-${randomBytes(6).toString('hex')}`;
      try {
        await withRig(1_000, async (rig) => {
          const { t, sink } = rig;
          const env = { QUEUE_BACKEND: 'rabbitmq', AMQP_URL: amqpUrl, QUEUE_NAME: queueName };
          const job = await insertTestJob(t.db);
          const corr = correlationOf(job.noticeKey);
          sink.setFault({ kind: 'stall' });
          // No publish: the worker's dispatcher wakes the due job itself.
          const first = start(rig, env);
          await first.ready;
          await sink.waitFor(() => sink.stalled().some((m) => m.correlation === corr), 20_000);
          const second = start(rig, env);
          await second.ready;
          await vi.waitFor(async () => expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => a.outcome)).toContain('suppressed_duplicate'), {
            timeout: 30_000,
            interval: 200,
          });
          sink.setFault({ kind: 'none' });
          expect(sink.releaseStalled()).toBe(1);
          await vi.waitFor(async () => expect((await readJob(t.db, job.id)).state).toBe('sent'), { timeout: 20_000, interval: 100 });
          expect(sink.countByCorrelation(corr)).toBe(1);
          const suppressed =
            metricValue(await first.scrape(), 'notice_ledger_duplicates_suppressed_total', { reason: 'ledger_claimed' }) +
            metricValue(await second.scrape(), 'notice_ledger_duplicates_suppressed_total', { reason: 'ledger_claimed' });
          expect(suppressed).toBeGreaterThanOrEqual(1);
        });
      } finally {
        const connection = await amqp.connect(amqpUrl);
        const channel = await connection.createChannel();
        await channel.deleteQueue(queueName).catch(() => undefined);
        await connection.close();
      }
    },
    90_000,
  );
});
