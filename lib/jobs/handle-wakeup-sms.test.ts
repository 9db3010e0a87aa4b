import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow, listQuarantined } from '@/db/queries/ledger/read';
import { preferenceFor } from '@/db/queries/preferences';
import { twilioWebhook } from '@/lib/api/webhooks';
import { providerRoute } from '@/lib/http/provider-route';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createLogger } from '@/lib/log';
import { createMailTransport } from '@/lib/mail/transport';
import type { Delivery } from '@/lib/queue/types';
import { createSmsTransport, statusCallbackUrl } from '@/lib/sms/transport';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startTwilioPeer, twilioSignature, type TwilioPeer } from '@/testing/twilio-peer';
import { createWakeupHandler, type SendPathSettings } from './handle-wakeup';
import { createDomainRateLimiter, type DomainRateLimiter } from './rate-limit';

/** The send path for an SMS notice: the official twilio client against the local peer, real PostgreSQL. */

let t: TestDatabase;
let peer: TwilioPeer;
let limiter: DomainRateLimiter;
const publicBase = 'https://notices.example.com';

const settings: SendPathSettings = {
  mode: 'enforce',
  noticeConfig: activeNoticeConfig().config,
  retryBaseMs: 1_000,
  retryCapMs: 10_000,
  maxAttempts: 3,
  secret: process.env.NOTICE_KEY_SECRET ?? '',
  cancelBaseUrl: publicBase,
  maxTokenWaitMs: 1_000,
};

function handlerFor({ timeoutMs = 2_000, overrides = {} }: { timeoutMs?: number; overrides?: Partial<SendPathSettings> } = {}) {
  return createWakeupHandler({
    db: t.db,
    // Nothing listens there: an SMS job must never reach the mail transport.
    mail: createMailTransport({ smtpUrl: 'smtp://127.0.0.1:9', timeoutMs: 500, from: 'n@notices.test', messageIdDomain: 'notices.test' }),
    rateLimiter: limiter,
    sms: {
      transport: createSmsTransport({
        twilio: { accountSid: peer.accountSid, authToken: peer.authToken, sender: { from: '+15005550006' }, apiBaseUrl: peer.baseUrl, timeoutMs },
        statusCallbackFor: (correlation) => statusCallbackUrl(publicBase, correlation),
      }),
      sender: '+15005550006',
      rateLimiter: limiter,
    },
    settings: { ...settings, ...overrides },
    workerId: 'sms-test-worker',
    logger: createLogger('test', 'silent'),
  });
}

let deliveries = 0;
function delivery(jobId: string): Delivery {
  deliveries += 1;
  return { wakeup: { jobId }, messageId: `sms-${deliveries}`, signal: new AbortController().signal };
}

// The payment_recovery template's declared variables (config/notice-ledger.json templates.definitions).
const recoveryPayload = { customer_name: 'Ada Lovelace', amount: '42.00', currency: 'EUR', reference: 'RC-2026-0042' };

function smsJob(payload: Record<string, unknown> = recoveryPayload, phone = `+1415555${String(Math.floor(1000 + Math.random() * 8999))}`) {
  const id = randomBytes(4).toString('hex');
  return insertTestJob(t.db, {
    fact: { type: 'payment_recovery', identity: { account_id: `acct_${id}`, reconciliation_id: `rec_${id}`, exception_id: `exc_${id}` }, revision: 0 },
    channel: 'sms',
    recipientPhone: phone,
    payload,
  });
}

beforeAll(async () => {
  t = await createTestDatabase();
  peer = await startTwilioPeer();
  peer.setCallbacks('drop');
  limiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 });
});
afterAll(async () => {
  await peer.stop();
  await t.drop();
});
beforeEach(() => {
  peer.setFault({ kind: 'none' });
  peer.setCallbacks('drop');
});

describe('send path for an SMS notice', () => {
  it('accepted: one message at the peer with the correlation, ledger sent with the Message SID, a redelivery discarded', async () => {
    const job = await smsJob();
    const handle = handlerFor();
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    const corr = correlationOf(job.noticeKey);
    expect(peer.countByCorrelation(corr)).toBe(1);
    const message = peer.messages().find((m) => m.correlation === corr);
    expect(message?.to).toBe(job.recipientPhone);
    expect(message?.statusCallback).toBe(`${publicBase}/api/webhooks/twilio?c=${corr}`);
    // The amount as the template formats it for the fallback locale (en).
    expect(message?.body).toContain('€42.00');
    const ledger = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
    expect(ledger).toMatchObject({ state: 'sent', providerMessageId: message?.sid });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' });
    await handle(delivery(job.id));
    expect(peer.countByCorrelation(corr)).toBe(1);
  });

  it('21211 invalid number: released and failed, nothing sent', async () => {
    peer.setFault({ kind: 'refuse', code: 21211 });
    const job = await smsJob();
    await handlerFor()(delivery(job.id));
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'released' });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'failed', lastErrorClass: 'twilio_21211' });
    expect(peer.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
  });

  it('21610 the recipient replied STOP: failed, and their SMS opt-out is recorded', async () => {
    const job = await smsJob();
    peer.unsubscribe(job.recipientPhone ?? '');
    await handlerFor()(delivery(job.id));
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'failed', lastErrorClass: 'twilio_21610' });
    expect(await preferenceFor(t.db, { recipient: job.recipientPhone ?? '', category: 'courtesy', channel: 'sms' })).toBe('opted_out');
  });

  it('429 / 20429: released, retried with backoff, then sent once', async () => {
    peer.setFault({ kind: 'status', status: 429 });
    const job = await smsJob();
    const first = await handlerFor()(delivery(job.id));
    expect(first).toMatchObject({ ack: true, wakeAt: expect.any(Date) });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'pending', attempts: 1, lastErrorClass: 'twilio_429' });
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'released' });
    peer.setFault({ kind: 'none' });
    // The backoff has expired by the time the retry wakes: move next_attempt_at to now.
    await t.pool.query('update reminder_jobs set next_attempt_at = now() where id = $1', [job.id]);
    await handlerFor()(delivery(job.id));
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' });
    expect(peer.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
  });

  it('timeout after the request was sent: unknown, the claim stays, quarantine shows it, the status callback confirms it', async () => {
    peer.setFault({ kind: 'timeout' });
    peer.setCallbacks('normal');
    const job = await smsJob();
    const corr = correlationOf(job.noticeKey);
    await handlerFor({ timeoutMs: 300 })(delivery(job.id));
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'claimed' });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'claimed', lastErrorClass: 'timeout' });
    const attempts = await listAttemptsForJob(t.db, { jobId: job.id });
    expect(attempts.map((a) => a.outcome)).toContain('unknown');
    // A redelivery is refused: the claim is held.
    peer.setFault({ kind: 'none' });
    await handlerFor()(delivery(job.id));
    expect(peer.countByCorrelation(corr)).toBe(1);
    expect((await listQuarantined(t.db, { quarantineAfterMs: 0, limit: 500 })).map((row) => row.noticeKey)).toContain(job.noticeKey);

    // The peer posted its signed callbacks to the public URL, which does not resolve here; deliver
    // them to the route handler as the reverse proxy in front of the console would.
    await peer.settle();
    const route = providerRoute(twilioWebhook, {
      settings: () => ({
        snsTopicArns: [],
        snsKeyResolver: async () => Promise.reject(new Error('none')),
        twilioAuthToken: peer.authToken,
        publicBaseUrl: publicBase,
      }),
      db: () => t.db,
    });
    for (const callback of peer.callbacks().filter((c) => c.params.MessageSid === peer.messages().find((m) => m.correlation === corr)?.sid)) {
      const response = await route(
        new Request(callback.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            'x-twilio-signature': twilioSignature(peer.authToken, callback.url, callback.params),
          },
          body: new URLSearchParams(callback.params).toString(),
        }),
      );
      expect(response.status).toBe(200);
    }
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'sent', resolution: 'provider_evidence' });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' });
    expect((await listQuarantined(t.db, { quarantineAfterMs: 0, limit: 500 })).map((row) => row.noticeKey)).not.toContain(job.noticeKey);
  });

  it('over the type’s maxSegments: permanent failure too_many_segments with the count in words, nothing sent', async () => {
    // Emoji force UCS-2 (67 characters a segment): a long reference (a string the template shows) takes more than 1.
    const job = await smsJob({ ...recoveryPayload, reference: '😀'.repeat(30) + 'x'.repeat(30) });
    const config = structuredClone(activeNoticeConfig().config);
    const type = config.noticeTypes.payment_recovery;
    if (!type) throw new Error('payment_recovery missing');
    config.noticeTypes.payment_recovery = { ...type, maxSegments: 1 };
    await handlerFor({ overrides: { noticeConfig: config } })(delivery(job.id));
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'failed', lastErrorClass: 'too_many_segments' });
    const attempts = await listAttemptsForJob(t.db, { jobId: job.id });
    expect(attempts.find((a) => a.outcome === 'permanent_failure')?.detail).toMatch(/takes \d+ UCS-2 segments; payment_recovery allows 1 \(maxSegments\)/);
    expect(peer.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
  });
});
