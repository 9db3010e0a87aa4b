import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getLedgerRow, listQuarantined } from '@/db/queries/ledger/read';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { createTestDatabase } from '@/testing/db';
import { waitForAttemptsBy } from '@/testing/attempts';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startTwilioPeer } from '@/testing/twilio-peer';
import { metricValue, spawnWorker } from '@/testing/worker-process';

/**
 * worker/crash.test.ts for an SMS notice: SIGKILL a real worker at each crash position while it
 * sends through the official twilio client to the local peer, restart it, let pg-boss redeliver,
 * and count at the peer: at most one message per business key, and the notice is `sent` or a
 * claim visible in quarantine. `during_send`: the peer has created the message and not answered.
 */
const positions = ['after_claim', 'during_send', 'after_send', 'after_commit'] as const;
type Position = (typeof positions)[number];

const expected: Record<Position, { messages: number; ledger: 'claimed' | 'sent'; redelivery: string }> = {
  after_claim: { messages: 0, ledger: 'claimed', redelivery: 'suppressed_duplicate' },
  during_send: { messages: 1, ledger: 'claimed', redelivery: 'suppressed_duplicate' },
  after_send: { messages: 1, ledger: 'claimed', redelivery: 'suppressed_duplicate' },
  after_commit: { messages: 1, ledger: 'sent', redelivery: 'discarded' },
};

describe.concurrent('worker crash positions for an SMS notice (real processes, real SIGKILL, Twilio peer)', () => {
  it.each(positions)(
    'SIGKILL %s: at most one SMS per business key, then sent or quarantined',
    async (position) => {
      const t = await createTestDatabase();
      const peer = await startTwilioPeer();
      peer.setCallbacks('drop');
      const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 2_000 });
      const workers: Array<ReturnType<typeof spawnWorker>> = [];
      try {
        await publisher.start();
        const env = {
          DATABASE_URL: t.url,
          SMTP_URL: 'smtp://127.0.0.1:9',
          VISIBILITY_TIMEOUT: '2s',
          QUARANTINE_AFTER: '1s',
          WORKER_CONCURRENCY: '1',
          TWILIO_ACCOUNT_SID: peer.accountSid,
          TWILIO_AUTH_TOKEN: peer.authToken,
          TWILIO_FROM: '+15005550006',
          TWILIO_API_BASE_URL: peer.baseUrl,
          TWILIO_TIMEOUT: '30s',
          PUBLIC_BASE_URL: 'http://127.0.0.1:9',
        };
        const id = randomBytes(4).toString('hex');
        const job = await insertTestJob(t.db, {
          fact: { type: 'payment_recovery', identity: { account_id: `acct_${id}`, reconciliation_id: `rec_${id}`, exception_id: `exc_${id}` }, revision: 0 },
          channel: 'sms',
          recipientPhone: '+14155550123',
          payload: { customer_name: 'Ada Lovelace', amount: '42.00', currency: 'EUR', reference: 'RC-2026-0042' },
        });
        const corr = correlationOf(job.noticeKey);

        if (position === 'during_send') peer.setFault({ kind: 'timeout' });
        const first = spawnWorker(position === 'during_send' ? env : { ...env, WORKER_CRASH_AT: position });
        workers.push(first);
        await first.ready;
        await publisher.publish({ jobId: job.id });
        if (position === 'during_send') {
          await peer.waitFor(() => peer.countByCorrelation(corr) === 1, 20_000);
          first.child.kill('SIGKILL');
        }
        expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
        peer.setFault({ kind: 'none' });

        const second = spawnWorker(env);
        workers.push(second);
        const { workerId } = await second.ready;
        // One or more wake-ups (the redelivery, perhaps the sweeper's too): each one refused, or the send.
        await waitForAttemptsBy(t.db, { jobId: job.id, workerId, outcome: expected[position].redelivery });

        expect(peer.countByCorrelation(corr)).toBe(expected[position].messages);
        expect(peer.countByCorrelation(corr)).toBeLessThanOrEqual(1);
        const ledger = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
        expect(ledger?.state).toBe(expected[position].ledger);
        const quarantined = (await listQuarantined(t.db, { quarantineAfterMs: 1_000, limit: 500 })).map((row) => row.noticeKey);
        if (expected[position].ledger === 'sent') {
          expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' });
          expect(ledger?.providerMessageId).toBe(peer.messages()[0]?.sid);
          expect(quarantined).not.toContain(job.noticeKey);
        } else {
          expect(quarantined).toContain(job.noticeKey);
        }
        expect(metricValue(await second.scrape(), 'notice_ledger_quarantined_claims')).toBe(expected[position].ledger === 'claimed' ? 1 : 0);
        // No phone number and no body in the worker's log lines.
        expect(JSON.stringify(second.logs())).not.toContain('+14155550123');
        expect(JSON.stringify(second.logs())).not.toContain('42.00');

        const stopped = await second.stop();
        expect(stopped).toEqual({ code: 0, signal: null });
      } finally {
        for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
        await Promise.all(workers.map((worker) => worker.exited));
        await publisher.stop();
        await peer.stop();
        await t.drop();
      }
    },
    90_000,
  );
});
