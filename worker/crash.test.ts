import { describe, expect, it } from 'vitest';
import { getLedgerRow, listQuarantined } from '@/db/queries/ledger/read';
import { correlationOf } from '@/lib/ledger/notice-key';
import { startSmtpSink } from '@/testing/smtp-sink';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { createTestDatabase } from '@/testing/db';
import { waitForAttemptsBy } from '@/testing/attempts';
import { insertTestJob, readJob } from '@/testing/jobs';
import { metricValue, spawnWorker } from '@/testing/worker-process';

/**
 * SIGKILL a real worker at each crash position of the send path, restart it, let pg-boss
 * redeliver after the visibility window, and check: at most one message per notice reached
 * the SMTP peer, and the notice is either `sent` or a claim visible in quarantine.
 */
const positions = ['after_claim', 'during_send', 'after_send', 'after_commit'] as const;
type Position = (typeof positions)[number];

const expected: Record<Position, { messages: number; ledger: 'claimed' | 'sent'; redelivery: string }> = {
  after_claim: { messages: 0, ledger: 'claimed', redelivery: 'suppressed_duplicate' },
  during_send: { messages: 1, ledger: 'claimed', redelivery: 'suppressed_duplicate' },
  after_send: { messages: 1, ledger: 'claimed', redelivery: 'suppressed_duplicate' },
  after_commit: { messages: 1, ledger: 'sent', redelivery: 'discarded' },
};

describe.concurrent('worker crash positions (real processes, real SIGKILL)', () => {
  it.each(positions)(
    'SIGKILL %s: at most one message, then sent or quarantined',
    async (position) => {
      const t = await createTestDatabase();
      const sink = await startSmtpSink();
      const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 2_000 });
      const workers: Array<ReturnType<typeof spawnWorker>> = [];
      try {
        await publisher.start();
        const env = { DATABASE_URL: t.url, SMTP_URL: sink.url, VISIBILITY_TIMEOUT: '2s', QUARANTINE_AFTER: '1s', WORKER_CONCURRENCY: '1' };
        const job = await insertTestJob(t.db);
        const corr = correlationOf(job.noticeKey);

        if (position === 'during_send') sink.setFault({ kind: 'stall' });
        const first = spawnWorker(position === 'during_send' ? env : { ...env, WORKER_CRASH_AT: position });
        workers.push(first);
        await first.ready;
        await publisher.publish({ jobId: job.id });
        if (position === 'during_send') {
          await sink.waitFor(() => sink.stalled().some((m) => m.correlation === corr), 20_000);
          first.child.kill('SIGKILL');
        }
        expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
        if (position === 'during_send') {
          // The relay had the bytes when the worker died: it delivers them.
          sink.setFault({ kind: 'none' });
          expect(sink.releaseStalled()).toBe(1);
        }

        const second = spawnWorker(env);
        workers.push(second);
        const { workerId } = await second.ready;
        // One or more wake-ups (the redelivery, perhaps the sweeper's too): each one refused, or the send.
        await waitForAttemptsBy(t.db, { jobId: job.id, workerId, outcome: expected[position].redelivery });

        expect(sink.countByCorrelation(corr)).toBe(expected[position].messages);
        expect(sink.countByCorrelation(corr)).toBeLessThanOrEqual(1);
        const ledger = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
        expect(ledger?.state).toBe(expected[position].ledger);
        const quarantined = (await listQuarantined(t.db, { quarantineAfterMs: 1_000, limit: 500 })).map((row) => row.noticeKey);
        if (expected[position].ledger === 'sent') {
          expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' });
          expect(quarantined).not.toContain(job.noticeKey);
        } else {
          expect(quarantined).toContain(job.noticeKey);
        }
        expect(metricValue(await second.scrape(), 'notice_ledger_quarantined_claims')).toBe(expected[position].ledger === 'claimed' ? 1 : 0);

        const stopped = await second.stop();
        if (stopped.code !== 0) console.log(JSON.stringify(second.logs().slice(-8)));
        expect(stopped).toEqual({ code: 0, signal: null });
      } finally {
        for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
        await Promise.all(workers.map((worker) => worker.exited));
        await publisher.stop();
        await sink.stop();
        await t.drop();
      }
    },
    90_000,
  );
});
