import { describe, expect, it, vi } from 'vitest';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { createTestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startOtlpCollector } from '@/testing/otlp-collector';
import { startSmtpSink } from '@/testing/smtp-sink';
import { spawnWorker } from '@/testing/worker-process';

/**
 * A real worker process with OTEL_EXPORTER_OTLP_ENDPOINT set exports its spans over OTLP/HTTP:
 * a local collector stand-in receives POST /v1/traces (the exporter's JSON encoding) with the
 * worker's service name and the wake-up span of the notice it sent, flushed on SIGTERM.
 */

describe('OTLP/HTTP export from a worker process', () => {
  it('posts the wake-up span of a sent notice to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces as JSON, with the worker service name', async () => {
    const t = await createTestDatabase();
    const sink = await startSmtpSink();
    const collector = await startOtlpCollector();
    const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 30_000 });
    const worker = spawnWorker({ DATABASE_URL: t.url, SMTP_URL: sink.url, WORKER_CONCURRENCY: '1', OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    try {
      await publisher.start();
      await worker.ready;
      const job = await insertTestJob(t.db);
      await publisher.publish({ jobId: job.id });
      await vi.waitFor(async () => expect((await readJob(t.db, job.id)).state).toBe('sent'), { timeout: 20_000, interval: 100 });
      // The batch processor exports every 5 s; SIGTERM flushes what is left before the exit.
      expect(await worker.stop()).toEqual({ code: 0, signal: null });

      const traces = collector.received.filter((request) => request.path === 'POST /v1/traces');
      expect(traces.length).toBeGreaterThan(0);
      for (const request of traces) expect(request.headers['content-type']).toBe('application/json');
      expect(collector.serviceNames()).toEqual(['notice-ledger-worker']);
      const spans = collector.spans();
      const wakeup = spans.find(
        (span) => span.name === 'notice.wakeup' && span.attributes?.some((a) => a.key === 'notice.job_id' && a.value.stringValue === job.id),
      );
      expect(wakeup?.attributes?.find((a) => a.key === 'notice.correlation')?.value.stringValue).toBe(correlationOf(job.noticeKey));
      expect(spans.map((span) => span.name)).toEqual(
        expect.arrayContaining(['notice.policy', 'notice.token_wait', 'notice.claim', 'notice.send', 'notice.commit', 'queue.settle']),
      );
    } finally {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await worker.exited;
      await publisher.stop();
      await collector.close();
      await sink.stop();
      await t.drop();
    }
  });
});
