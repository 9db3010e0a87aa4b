import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startSilentPeer, startSmtpSink } from '@/testing/smtp-sink';
import { spawnWorker } from '@/testing/worker-process';

/**
 * SIGTERM stops a worker within WORKER_STOP_GRACE, whatever its relay does, and each send in
 * flight ends as its phase says (lib/transport/phases.ts): one still waiting for a greeting is
 * released (nothing left), one whose body was handed over and never answered stays claimed
 * (unknown, for quarantine). Before, the worker waited for the send, up to SMTP_TIMEOUT per step
 * and without end in nodemailer's pool (issue 23: "still running 30 s later").
 */

let t: TestDatabase;
let publisher: ReturnType<typeof createPgBossQueue>;

beforeAll(async () => {
  t = await createTestDatabase();
  publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 600_000 });
  await publisher.start();
});

afterAll(async () => {
  await publisher?.stop();
  await t?.drop();
});

const env = (smtpUrl: string) => ({
  DATABASE_URL: t.url,
  SMTP_URL: smtpUrl,
  // Much longer than the grace: only the stop can end these sends.
  SMTP_TIMEOUT: '2m',
  SMTP_SEND_DEADLINE: '5m',
  VISIBILITY_TIMEOUT: '10m',
  WORKER_STOP_GRACE: '5s',
});

describe('SIGTERM with sends in flight', () => {
  it('a send waiting for a greeting that never comes: the worker exits at once and the claim is released', async () => {
    const silent = await startSilentPeer();
    const job = await insertTestJob(t.db, { wakeupPublishedAt: new Date() });
    const worker = spawnWorker(env(`smtp://127.0.0.1:${String(silent.port)}`));
    try {
      await worker.ready;
      await publisher.publish({ jobId: job.id });
      await vi.waitFor(async () => expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed'), { timeout: 20_000 });
      await vi.waitFor(() => expect(silent.connections()).toBe(1));
      const stoppedAt = Date.now();
      expect(await worker.stop()).toEqual({ code: 0, signal: null });
      expect(Date.now() - stoppedAt).toBeLessThan(5_000);
      expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('released');
      expect(await readJob(t.db, job.id)).toMatchObject({ state: 'pending', lastErrorClass: 'send_aborted' });
      expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((row) => row.outcome)).toEqual(['retryable_failure']);
    } finally {
      await worker.stop();
      await silent.stop();
    }
  });

  it('a body handed over and never answered: the worker exits within the grace and the claim stays (unknown)', async () => {
    const sink = await startSmtpSink();
    sink.setFault({ kind: 'stall' });
    const job = await insertTestJob(t.db, { wakeupPublishedAt: new Date() });
    const worker = spawnWorker(env(sink.url));
    try {
      await worker.ready;
      await publisher.publish({ jobId: job.id });
      await vi.waitFor(() => expect(sink.stalled()).toHaveLength(1), { timeout: 20_000 });
      const stoppedAt = Date.now();
      expect(await worker.stop()).toEqual({ code: 0, signal: null });
      const took = Date.now() - stoppedAt;
      expect(took).toBeLessThan(5_000);
      // It waited for the relay's answer until the cut-off (grace less 2 s to commit), not a moment more.
      expect(took).toBeGreaterThanOrEqual(2_500);
      expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
      expect(await readJob(t.db, job.id)).toMatchObject({ state: 'claimed', lastErrorClass: 'send_aborted' });
      expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((row) => row.outcome)).toEqual(['unknown']);
    } finally {
      await worker.stop();
      await sink.stop();
    }
  });
}, 90_000);
