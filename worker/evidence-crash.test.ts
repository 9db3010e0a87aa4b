import { bodyText } from '@/db/queries/evidence-body';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Db } from '@/db/client';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createTestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { startPostmarkPeer } from '@/testing/postmark-peer';
import { startSmtpSink } from '@/testing/smtp-sink';
import { spawnWorker } from '@/testing/worker-process';

/**
 * The send's evidence entry is written by its result commit, never after it (issue 28: "written as
 * things happen"). A real worker process is SIGKILLed at `after_commit`, the instant the result's
 * statement or transaction returned and before anything else runs: the entry must already be
 * there, unchained (seq null), for the single SMTP path (accepted, and an outcome left unknown) and
 * for a batching Postmark worker (three notices in one call, their commits coalesced). Restarted,
 * a worker's chainer links what the dead one committed. Each case fails on a send path that
 * appends the entry after the commit (the SIGKILL lands between the two).
 */

type Entry = { kind: string; seq: number | null; job_id: string; body: string };

async function entriesOf(pool: pg.Pool, noticeKey: string): Promise<Entry[]> {
  const { rows } = await pool.query<Omit<Entry, 'body'> & { body: string | null; body_brotli: Buffer | null }>(
    'select e.kind, c.seq::int, e.job_id::text, e.body, e.body_brotli from evidence_entries e left join evidence_chain c on c.entry_id = e.id where e.notice_key = $1 order by e.id',
    [noticeKey],
  );
  return rows.map(({ body_brotli, ...row }) => ({ ...row, body: bodyText(row.body, body_brotli) }));
}

function requiredJob(db: Db, recipientEmail: string) {
  const { ruleSet } = activeNoticeConfig();
  return insertTestJob(db, {
    fact: { type: 'auto_renewal_notice', identity: { subscription_id: `sub_${crypto.randomUUID().slice(0, 12)}`, period_start: '2027-01-01' }, revision: 0 },
    category: 'required',
    ruleIds: ['US-CA/arl-annual'],
    ruleSetVersion: ruleSet.version,
    recipientEmail,
  });
}

describe('the send evidence under SIGKILL after the result commit (real processes)', () => {
  it.each([
    { fault: 'none' as const, kind: 'notice.sent', ledger: 'sent', outcome: 'accepted' },
    { fault: 'drop-after-data' as const, kind: 'notice.outcome', ledger: 'claimed', outcome: 'unknown:' },
  ])(
    'single SMTP path, send $outcome: the $kind entry committed with the result, then chained by the next worker',
    async ({ fault, kind, ledger, outcome }) => {
      const t = await createTestDatabase();
      const sink = await startSmtpSink();
      const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 2_000 });
      const workers: ReturnType<typeof spawnWorker>[] = [];
      try {
        await publisher.start();
        const env = {
          DATABASE_URL: t.url,
          SMTP_URL: sink.url,
          VISIBILITY_TIMEOUT: '2s',
          WORKER_CONCURRENCY: '1',
          EVIDENCE_FOR: 'required',
          EVIDENCE_SIGN_EVERY: '1s',
        };
        const job = await requiredJob(t.db, 'evidence-crash@example.test');
        if (fault !== 'none') sink.setFault({ kind: fault });
        const first = spawnWorker({ ...env, WORKER_CRASH_AT: 'after_commit' });
        workers.push(first);
        await first.ready;
        await publisher.publish({ jobId: job.id });
        expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

        expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe(ledger);
        const entries = await entriesOf(t.pool, job.noticeKey);
        expect(entries.map((entry) => entry.kind)).toEqual([kind]);
        expect(entries[0]).toMatchObject({ seq: null, job_id: job.id });
        const body = JSON.parse(entries[0]?.body ?? '{}') as { sending: { outcome: string; messageId: string } };
        expect(body.sending.outcome.startsWith(outcome)).toBe(true);
        expect(body.sending.messageId).toContain(correlationOf(job.noticeKey));

        // The chain is linked later, by whichever worker runs the pass: the entry the dead worker committed gets its place.
        sink.setFault({ kind: 'none' });
        const second = spawnWorker(env);
        workers.push(second);
        await second.ready;
        await expect.poll(async () => (await entriesOf(t.pool, job.noticeKey))[0]?.seq ?? null, { timeout: 15_000 }).toBe(1);
        expect(await second.stop()).toEqual({ code: 0, signal: null });
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

  it('batching Postmark worker: every required notice of the call has its notice.sent entry the moment the coalesced commit returned', async () => {
    const t = await createTestDatabase();
    const peer = await startPostmarkPeer();
    const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 4_000 });
    const worker = spawnWorker({
      DATABASE_URL: t.url,
      EMAIL_PROVIDER: 'postmark',
      POSTMARK_SERVER_TOKEN: peer.serverToken,
      POSTMARK_API_BASE_URL: peer.baseUrl,
      EMAIL_BATCH_SIZE: '3',
      EMAIL_BATCH_GATHER: '1s',
      WORKER_CONCURRENCY: '3',
      VISIBILITY_TIMEOUT: '4s',
      EVIDENCE_FOR: 'required',
      WORKER_CRASH_AT: 'after_commit',
    });
    try {
      await publisher.start();
      // Three notices of one type: one template version, so their commits are issued together and coalesce into one statement.
      const required = [0, 1, 2].map((index) => requiredJob(t.db, `batch-ev-${String(index)}@example.test`));
      const jobs = await Promise.all(required);
      // Published before the worker starts: its first fetch takes all three, and they make one batch.
      for (const job of jobs) await publisher.publish({ jobId: job.id });
      await worker.ready;
      expect(await worker.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(new Set(peer.messages().map((message) => message.requestIndex)).size).toBe(1);
      for (const job of jobs) {
        expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('sent');
        const entries = await entriesOf(t.pool, job.noticeKey);
        expect(entries.map((entry) => [entry.kind, entry.seq, entry.job_id])).toEqual([['notice.sent', null, job.id]]);
        expect((JSON.parse(entries[0]?.body ?? '{}') as { sending: { providerMessageId: string } }).sending.providerMessageId).toEqual(
          (await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.providerMessageId,
        );
      }
    } finally {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await worker.exited;
      await publisher.stop();
      await peer.stop();
      await t.drop();
    }
  }, 60_000);
});
