import { describe, expect, it } from 'vitest';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { createTestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startSmtpSink } from '@/testing/smtp-sink';
import { metricValue, spawnWorker } from '@/testing/worker-process';

/**
 * WORKER_CLAIM_WINDOW as an operator sets it, on the real worker process (its settings, its
 * wiring in worker/start.ts, its /metrics): with 8 handlers and a window of 2, a relay that holds
 * every message leaves exactly 2 notices claimed and the others composed and waiting, visible on
 * the worker's gauge; once the relay answers, every notice goes out once.
 */
describe('the claim window in the worker process', () => {
  it('holds WORKER_CLAIM_WINDOW notices between claim and commit while the relay stalls; the rest wait unclaimed, then all are sent once', async () => {
    const t = await createTestDatabase();
    const sink = await startSmtpSink();
    const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 60_000 });
    const worker = spawnWorker({
      DATABASE_URL: t.url,
      SMTP_URL: sink.url,
      WORKER_CONCURRENCY: '8',
      WORKER_CLAIM_WINDOW: '2',
      VISIBILITY_TIMEOUT: '60s',
      RATE_LIMIT_PER_DOMAIN: '1000',
    });
    try {
      await publisher.start();
      await worker.ready;
      const jobs = await Promise.all(Array.from({ length: 6 }, (_, i) => insertTestJob(t.db, { recipientEmail: `window-${String(i)}@example.test` })));
      sink.setFault({ kind: 'stall' });
      for (const job of jobs) await publisher.publish({ jobId: job.id });
      await sink.waitFor(() => sink.stalled().length >= 2, 15_000);
      // The other four are fetched, composed and waiting for a place: the gauge says so.
      for (let text = await worker.scrape(); metricValue(text, 'notice_ledger_claim_window_notices', { state: 'waiting' }) < 4; text = await worker.scrape()) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const scraped = await worker.scrape();
      expect(metricValue(scraped, 'notice_ledger_claim_window_notices', { state: 'held' })).toBe(2);
      const rows = await Promise.all(jobs.map((job) => getLedgerRow(t.db, { noticeKey: job.noticeKey })));
      expect(rows.filter((row) => row !== null).map((row) => row?.state)).toEqual(['claimed', 'claimed']);
      expect(sink.stalled()).toHaveLength(2);

      sink.setFault({ kind: 'none' });
      sink.releaseStalled();
      await sink.waitFor(6, 15_000);
      for (const job of jobs) {
        expect(sink.countByCorrelation(correlationOf(job.noticeKey)), job.id).toBe(1);
        for (let state = (await readJob(t.db, job.id)).state; state !== 'sent'; state = (await readJob(t.db, job.id)).state) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    } finally {
      await worker.stop();
      await publisher.stop();
      await sink.stop();
      await t.drop();
    }
  }, 60_000);
});
