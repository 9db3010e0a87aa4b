import { describe, expect, it, vi } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow, listQuarantined } from '@/db/queries/ledger/read';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { waitForAttemptsBy } from '@/testing/attempts';
import { createTestDatabase } from '@/testing/db';
import type { PeerControls } from '@/testing/http-peer';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startPostmarkPeer } from '@/testing/postmark-peer';
import { startSendgridPeer } from '@/testing/sendgrid-peer';
import { startSesPeer } from '@/testing/ses-peer';
import { spawnWorker } from '@/testing/worker-process';

/**
 * A real worker process (worker/start.ts, the registry's EMAIL_PROVIDER) on each HTTP provider's
 * local peer: a notice sent once with the provider's message id on its row; and SIGKILL after
 * the provider accepted, before the commit: the redelivery sends nothing more, the claim is in
 * quarantine.
 */
type Peer = { controls: Pick<PeerControls<{ correlation: string | null }, never>, 'countByCorrelation' | 'waitFor' | 'stop'>; env: Record<string, string> };

const providers: { name: string; start: () => Promise<Peer> }[] = [
  {
    name: 'postmark',
    start: async () => {
      const peer = await startPostmarkPeer();
      return { controls: peer, env: { EMAIL_PROVIDER: 'postmark', POSTMARK_SERVER_TOKEN: peer.serverToken, POSTMARK_API_BASE_URL: peer.baseUrl } };
    },
  },
  {
    name: 'ses',
    start: async () => {
      const peer = await startSesPeer();
      return {
        controls: peer,
        env: {
          EMAIL_PROVIDER: 'ses',
          SES_REGION: peer.region,
          SES_ACCESS_KEY_ID: peer.credentials.accessKeyId,
          SES_SECRET_ACCESS_KEY: peer.credentials.secretAccessKey,
          SES_ENDPOINT: peer.baseUrl,
        },
      };
    },
  },
  {
    name: 'sendgrid',
    start: async () => {
      const peer = await startSendgridPeer();
      return { controls: peer, env: { EMAIL_PROVIDER: 'sendgrid', SENDGRID_API_KEY: peer.apiKey, SENDGRID_API_BASE_URL: peer.baseUrl } };
    },
  },
];

describe.each(providers)('a worker process with EMAIL_PROVIDER=$name', ({ start }) => {
  it('sends a notice once through the provider, then a SIGKILL after the provider accepted leaves one message and a quarantined claim', async () => {
    const t = await createTestDatabase();
    const peer = await start();
    const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 2_000 });
    const workers: ReturnType<typeof spawnWorker>[] = [];
    try {
      await publisher.start();
      const env = { ...peer.env, DATABASE_URL: t.url, VISIBILITY_TIMEOUT: '2s', QUARANTINE_AFTER: '1s', WORKER_CONCURRENCY: '1' };

      const sent = await insertTestJob(t.db, { wakeupPublishedAt: new Date() });
      const first = spawnWorker(env);
      workers.push(first);
      await first.ready;
      await publisher.publish({ jobId: sent.id });
      await peer.controls.waitFor(() => peer.controls.countByCorrelation(correlationOf(sent.noticeKey)) === 1, 20_000);
      await vi.waitFor(async () => expect((await readJob(t.db, sent.id)).state).toBe('sent'), { timeout: 30_000, interval: 100 });
      // One send. A wake-up pg-boss hands out again after the 2 s visibility timeout (a send slower
      // than that on a loaded machine) finds the job final and is discarded, never sent.
      const outcomes = (await listAttemptsForJob(t.db, { jobId: sent.id })).map((row) => row.outcome);
      expect(outcomes.filter((outcome) => outcome === 'sent')).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome !== 'sent' && outcome !== 'discarded')).toEqual([]);
      expect((await getLedgerRow(t.db, { noticeKey: sent.noticeKey }))?.providerMessageId).toEqual(expect.any(String));
      expect(await first.stop()).toEqual({ code: 0, signal: null });

      const crashed = await insertTestJob(t.db, { wakeupPublishedAt: new Date() });
      const crashing = spawnWorker({ ...env, WORKER_CRASH_AT: 'after_send' });
      workers.push(crashing);
      await crashing.ready;
      await publisher.publish({ jobId: crashed.id });
      expect(await crashing.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const second = spawnWorker(env);
      workers.push(second);
      const { workerId } = await second.ready;
      await waitForAttemptsBy(t.db, { jobId: crashed.id, workerId, outcome: 'suppressed_duplicate' });
      expect(peer.controls.countByCorrelation(correlationOf(crashed.noticeKey))).toBe(1);
      expect((await getLedgerRow(t.db, { noticeKey: crashed.noticeKey }))?.state).toBe('claimed');
      expect((await listQuarantined(t.db, { quarantineAfterMs: 1_000, limit: 500 })).map((row) => row.noticeKey)).toContain(crashed.noticeKey);
      expect(await second.stop()).toEqual({ code: 0, signal: null });
    } finally {
      for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((worker) => worker.exited));
      await publisher.stop();
      await peer.controls.stop();
      await t.drop();
    }
  }, 120_000);
});
