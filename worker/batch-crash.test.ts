import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { getLedgerRow, listQuarantined } from '@/db/queries/ledger/read';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { waitForAttemptsBy } from '@/testing/attempts';
import { createTestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import type { FaultSetting } from '@/testing/http-peer';
import { startPostmarkPeer } from '@/testing/postmark-peer';
import { startSendgridPeer } from '@/testing/sendgrid-peer';
import { startSesPeer } from '@/testing/ses-peer';
import { metricValue, spawnWorker } from '@/testing/worker-process';

/**
 * Batched sends under SIGKILL (issue 27 item 3): a real worker process on each batching
 * provider's local peer (Postmark `POST /email/batch`, SES `SendBulkEmail`), three notices per
 * call, killed before the call (after the batch's
 * claims committed), after the call before the commit, and in the middle of the result commit
 * (the statement running, held on a row lock). Restarted, the next worker sends nothing more:
 * at most one message per business key at the peer, and every item whose outcome is unknown
 * stays claimed and shows in quarantine.
 *
 * Then the provider reconciler (issue 27 item 4, lib/reconcile/provider-lookups.ts), in a third
 * worker, where the provider can be asked (Postmark's Messages API; SendGrid's Email Logs, its batch
 * one Mail Send with a personalization per notice): every item the peer holds
 * is recorded sent with the peer's message id, every item it does not hold is left to a person
 * with the reason (still claimed, never released), and nothing reaches the peer again. SES is not
 * asked (its events resolve claims): its items stay as they were.
 */
const positions = ['before_call', 'after_call', 'mid_commit'] as const;
type Position = (typeof positions)[number];

const expected: Record<Position, { messages: number }> = {
  before_call: { messages: 0 },
  after_call: { messages: 1 },
  mid_commit: { messages: 1 },
};

type Peer = {
  env: Record<string, string>;
  /** The provider message ids the peer handed out, as the ledger stores them. */
  providerIds: () => string[];
  countByCorrelation: (correlation: string) => number;
  requestIndexes: () => number[];
  requests: () => number;
  setFault: (fault: FaultSetting) => void;
  waitFor: (predicate: () => boolean, timeoutMs?: number) => Promise<void>;
  stop: () => Promise<void>;
};

/** `batching`: the worker batches its sends (a batch call exists); `reconciles`: the provider reconciler can ask it. */
type Provider = { name: string; batching: boolean; reconciles: boolean; start: () => Promise<Peer> };

const providers: Provider[] = [
  {
    name: 'postmark',
    batching: true,
    reconciles: true,
    start: async () => {
      const peer = await startPostmarkPeer();
      return {
        ...peer,
        env: { EMAIL_PROVIDER: 'postmark', POSTMARK_SERVER_TOKEN: peer.serverToken, POSTMARK_API_BASE_URL: peer.baseUrl },
        requestIndexes: () => peer.messages().map((message) => message.requestIndex),
        providerIds: () => peer.messages().map((message) => message.messageId),
      };
    },
  },
  {
    name: 'ses',
    batching: true,
    reconciles: false,
    start: async () => {
      const peer = await startSesPeer();
      return {
        ...peer,
        env: {
          EMAIL_PROVIDER: 'ses',
          SES_REGION: peer.region,
          SES_ACCESS_KEY_ID: peer.credentials.accessKeyId,
          SES_SECRET_ACCESS_KEY: peer.credentials.secretAccessKey,
          SES_ENDPOINT: peer.baseUrl,
        },
        requestIndexes: () => peer.messages().map((message) => message.requestIndex),
        providerIds: () => [],
      };
    },
  },
  {
    name: 'sendgrid',
    batching: true,
    reconciles: true,
    start: async () => {
      const peer = await startSendgridPeer();
      return {
        ...peer,
        env: { EMAIL_PROVIDER: 'sendgrid', SENDGRID_API_KEY: peer.apiKey, SENDGRID_API_BASE_URL: peer.baseUrl },
        requestIndexes: () => peer.messages().map((message) => message.requestIndex),
        providerIds: () => peer.messages().map((message) => message.xMessageId),
      };
    },
  },
];

/** A batch of three where the worker batches; one notice on the single path, so the kill point is that notice's. */
const noticesFor = (provider: Provider) => (provider.batching ? [0, 1, 2] : [0]);

/** The reconciler off in the first two workers (their assertions are about the send path); fast in the third. */
const reconcilerOff = { RECONCILE_AFTER: '1h', RECONCILE_GIVE_UP: '2h' };
const reconcilerFast = { RECONCILE_AFTER: '1s', RECONCILE_GIVE_UP: '4s', RECONCILE_EVERY: '200ms' };

describe.each(providers)('a worker on $name killed (real processes, real SIGKILL)', (provider) => {
  const { start } = provider;
  const notices = noticesFor(provider);
  it('without a crash: the notices in one call, each sent once with its message id (a batch of three on the metric where it batches)', async () => {
    const t = await createTestDatabase();
    const peer = await start();
    const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 4_000 });
    const worker = spawnWorker({
      DATABASE_URL: t.url,
      ...peer.env,
      EMAIL_BATCH_SIZE: '3',
      EMAIL_BATCH_GATHER: '1s',
      WORKER_CONCURRENCY: String(notices.length),
      VISIBILITY_TIMEOUT: '4s',
      ...reconcilerOff,
    });
    try {
      await publisher.start();
      const jobs = await Promise.all(notices.map((index) => insertTestJob(t.db, { recipientEmail: `batched-${String(index)}@example.test` })));
      for (const job of jobs) await publisher.publish({ jobId: job.id });
      await worker.ready;
      await peer.waitFor(() => jobs.every((job) => peer.countByCorrelation(correlationOf(job.noticeKey)) === 1), 20_000);
      expect(peer.requests()).toBe(1);
      for (const job of jobs) {
        await expect.poll(async () => (await readJob(t.db, job.id)).state, { timeout: 10_000 }).toBe('sent');
        expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.providerMessageId).toEqual(expect.any(String));
      }
      const scraped = await worker.scrape();
      expect(metricValue(scraped, 'notice_ledger_email_batch_size_count')).toBe(provider.batching ? 1 : 0);
      expect(metricValue(scraped, 'notice_ledger_email_batch_size_sum')).toBe(provider.batching ? 3 : 0);
      expect(await worker.stop()).toEqual({ code: 0, signal: null });
    } finally {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await worker.exited;
      await publisher.stop();
      await peer.stop();
      await t.drop();
    }
  }, 60_000);

  it.each(positions)(
    'SIGKILL %s: at most one message per notice at the peer, every item claimed and in quarantine, then settled by the provider reconciler where it can ask',
    async (position) => {
      const t = await createTestDatabase();
      const peer = await start();
      const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 4_000 });
      const workers: ReturnType<typeof spawnWorker>[] = [];
      const locker = new pg.Client({ connectionString: t.url });
      try {
        await publisher.start();
        await locker.connect();
        const env = {
          DATABASE_URL: t.url,
          ...peer.env,
          EMAIL_BATCH_SIZE: '3',
          EMAIL_BATCH_GATHER: '1s',
          WORKER_CONCURRENCY: String(notices.length),
          VISIBILITY_TIMEOUT: '4s',
          QUARANTINE_AFTER: '1s',
          ...reconcilerOff,
        };
        const jobs = await Promise.all(notices.map((index) => insertTestJob(t.db, { recipientEmail: `crash-${position}-${String(index)}@example.test` })));
        // Published before the worker starts: its first fetch takes all three, and they make one batch.
        for (const job of jobs) await publisher.publish({ jobId: job.id });

        const crashAt = position === 'before_call' ? 'after_claim' : position === 'after_call' ? 'after_send' : null;
        if (position === 'mid_commit') peer.setFault({ kind: 'delay', ms: 1_000 });
        const first = spawnWorker(crashAt ? { ...env, WORKER_CRASH_AT: crashAt } : env);
        workers.push(first);
        await first.ready;

        if (position === 'mid_commit') {
          // The call is out (the peer holds the three): lock one job row so the result commit blocks on it, then kill the worker mid-statement.
          await peer.waitFor(() => jobs.every((job) => peer.countByCorrelation(correlationOf(job.noticeKey)) === 1), 20_000);
          await locker.query('begin');
          await locker.query('select id from reminder_jobs where id = $1 for update', [jobs[0]?.id]);
          // Asked on another connection: inside the locker's transaction the activity view is one frozen snapshot.
          const waiting = async () =>
            (
              await t.pool.query<{ n: number }>(
                `select count(*)::int as n from pg_stat_activity
                  where datname = current_database() and application_name = 'notice-ledger-worker' and wait_event_type = 'Lock'
                    and query ilike '%update notice_ledger%'`,
              )
            ).rows[0]?.n ?? 0;
          const deadline = Date.now() + 20_000;
          while ((await waiting()) === 0) {
            if (Date.now() > deadline) throw new Error('the result commit never waited on the lock');
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          first.child.kill('SIGKILL');
          await first.exited;
          // The server learns of the dead client: its backends end, and the statement with them (nothing of it committed).
          await locker.query(
            `select pg_terminate_backend(pid) from pg_stat_activity
              where datname = current_database() and application_name = 'notice-ledger-worker' and pid <> pg_backend_pid()`,
          );
          await locker.query('rollback');
          peer.setFault({ kind: 'none' });
        }
        expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
        // All three were one batch: the claims committed together, and the call (if made) carried all three.
        for (const job of jobs) expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
        if (expected[position].messages === 1) expect(new Set(peer.requestIndexes()).size).toBe(1);

        const second = spawnWorker(env);
        workers.push(second);
        const { workerId } = await second.ready;
        for (const job of jobs) await waitForAttemptsBy(t.db, { jobId: job.id, workerId, outcome: 'suppressed_duplicate' });

        const quarantined = (await listQuarantined(t.db, { quarantineAfterMs: 1_000, limit: 500 })).map((row) => row.noticeKey);
        for (const job of jobs) {
          expect(peer.countByCorrelation(correlationOf(job.noticeKey))).toBe(expected[position].messages);
          expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
          expect((await readJob(t.db, job.id)).state).toBe('claimed');
          expect(quarantined).toContain(job.noticeKey);
        }
        expect(metricValue(await second.scrape(), 'notice_ledger_quarantined_claims')).toBe(jobs.length);
        expect(await second.stop()).toEqual({ code: 0, signal: null });

        if (!provider.reconciles) return;
        // The provider reconciler, in a third worker: asks the peer about every claim.
        const sendsBefore = peer.requests();
        const third = spawnWorker({ ...env, ...reconcilerFast });
        workers.push(third);
        await third.ready;
        const settled = async (noticeKey: string) => {
          const row = await getLedgerRow(t.db, { noticeKey });
          if (row?.state === 'sent') return 'sent';
          const lookup = await t.db.execute<{ outcome: string }>(sql`select outcome from provider_lookups where notice_key = ${noticeKey}`);
          return lookup.rows[0]?.outcome === 'gave_up' ? 'left to a person' : 'unsettled';
        };
        const expectedEnd = expected[position].messages === 1 ? 'sent' : 'left to a person';
        for (const job of jobs) await expect.poll(() => settled(job.noticeKey), { timeout: 20_000, interval: 100 }).toBe(expectedEnd);
        for (const job of jobs) {
          const row = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
          // Never released: still claimed where the peer has nothing, sent with the peer's own id where it has the message.
          if (expectedEnd === 'sent') {
            expect(row?.resolution).toBe('provider_evidence');
            expect(peer.providerIds()).toContain(row?.providerMessageId);
            expect((await readJob(t.db, job.id)).state).toBe('sent');
          } else {
            expect(row?.state).toBe('claimed');
            expect((await readJob(t.db, job.id)).state).toBe('claimed');
          }
          expect(peer.countByCorrelation(correlationOf(job.noticeKey))).toBe(expected[position].messages);
        }
        // Asking sends nothing.
        expect(peer.requests()).toBe(sendsBefore);
        const scraped = await third.scrape();
        const outcome = expectedEnd === 'sent' ? 'found' : 'gave_up';
        expect(metricValue(scraped, 'notice_ledger_reconcile_total', { provider: provider.name, outcome })).toBe(jobs.length);
        expect(await third.stop()).toEqual({ code: 0, signal: null });
      } finally {
        for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
        await Promise.all(workers.map((worker) => worker.exited));
        await locker.end().catch(() => undefined);
        await publisher.stop();
        await peer.stop();
        await t.drop();
      }
    },
    90_000,
  );
});
