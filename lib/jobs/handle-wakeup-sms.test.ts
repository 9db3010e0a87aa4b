import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow, listQuarantined } from '@/db/queries/ledger/read';
import { preferenceFor, setPreference } from '@/db/queries/preferences';
import { twilioInboundWebhook, twilioWebhook } from '@/lib/api/webhooks';
import { providerRoute } from '@/lib/http/provider-route';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createLogger } from '@/lib/log';
import { createMailTransport } from '@/lib/mail/transport';
import type { Delivery } from '@/lib/queue/types';
import { createSmsTransport, statusCallbackUrl } from '@/lib/sms/transport';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
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

function handlerFor({ timeoutMs = 2_000, overrides = {}, smtpUrl }: { timeoutMs?: number; overrides?: Partial<SendPathSettings>; smtpUrl?: string } = {}) {
  return createWakeupHandler({
    db: t.db,
    // By default nothing listens there: an SMS job must never reach the mail transport.
    mail: createMailTransport({
      smtpUrl: smtpUrl ?? 'smtp://127.0.0.1:9',
      timeoutMs: smtpUrl ? 5_000 : 500,
      from: 'n@notices.test',
      messageIdDomain: 'notices.test',
    }),
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

const randomPhone = () => `+1415555${String(Math.floor(1000 + Math.random() * 8999))}`;

function smsJob(
  payload: Record<string, unknown> = recoveryPayload,
  phone = randomPhone(),
  { category = 'courtesy', channel = 'sms', email }: { category?: 'courtesy' | 'required'; channel?: 'sms' | 'email'; email?: string } = {},
) {
  const id = randomBytes(4).toString('hex');
  return insertTestJob(t.db, {
    fact: { type: 'payment_recovery', identity: { account_id: `acct_${id}`, reconciliation_id: `rec_${id}`, exception_id: `exc_${id}` }, revision: 0 },
    channel,
    category,
    recipientPhone: phone,
    ...(email ? { recipientEmail: email } : {}),
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
    // The German text shows the reference (the English one, written to one segment, only the amount).
    await t.pool.query(`update reminder_jobs set recipient_locale = 'de-DE' where id = $1`, [job.id]);
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

describe('consent on the SMS channel (issue 16 × 17): the policy reads the preference of the job’s own channel', () => {
  let sink: SmtpSink;
  const webhookSettings = {
    snsTopicArns: [],
    snsKeyResolver: async () => Promise.reject(new Error('none')),
    twilioAuthToken: '',
    publicBaseUrl: publicBase,
  };
  const inboundRoute = providerRoute(twilioInboundWebhook, { settings: () => ({ ...webhookSettings, twilioAuthToken: peer.authToken }), db: () => t.db });
  let inbound = 0;

  /** The recipient texts `body` to our sender: Twilio's signed incoming-message webhook, delivered to the real route as the proxy would. */
  async function textFrom(phone: string, body: string): Promise<void> {
    inbound += 1;
    const url = `${publicBase}/api/webhooks/twilio/inbound`;
    const params = {
      AccountSid: peer.accountSid,
      ApiVersion: '2010-04-01',
      Body: body,
      From: phone,
      MessageSid: `SM${inbound.toString(16).padStart(8, '0')}${randomBytes(12).toString('hex')}`,
      NumMedia: '0',
      To: '+15005550006',
    };
    const response = await inboundRoute(
      new Request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature(peer.authToken, url, params) },
        body: new URLSearchParams(params).toString(),
      }),
    );
    expect(response.status).toBe(200);
  }

  /** None ships: the test's configuration makes payment recovery a legally required notice (its row's category is set at scheduling). */
  function withRequiredSmsType() {
    const config = structuredClone(activeNoticeConfig().config);
    const recovery = config.noticeTypes.payment_recovery;
    if (!recovery) throw new Error('payment_recovery missing');
    config.noticeTypes.payment_recovery = { ...recovery, category: 'required' };
    return config;
  }

  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(async () => sink.stop());

  it('STOP through the inbound route: the next courtesy SMS is suppressed unsubscribed before any request reaches Twilio; START opts back in and the next one goes out', async () => {
    const phone = randomPhone();
    await textFrom(phone, 'STOP');
    expect(await preferenceFor(t.db, { recipient: phone, category: 'courtesy', channel: 'sms' })).toBe('opted_out');

    const stopped = await smsJob(recoveryPayload, phone);
    const requestsBefore = peer.requests();
    expect(await handlerFor()(delivery(stopped.id))).toEqual({ ack: true });
    expect(await readJob(t.db, stopped.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'unsubscribed' });
    expect(await getLedgerRow(t.db, { noticeKey: stopped.noticeKey })).toBeNull();
    expect(peer.requests()).toBe(requestsBefore);
    expect(peer.messages().filter((m) => m.to === phone)).toHaveLength(0);
    expect((await listAttemptsForJob(t.db, { jobId: stopped.id })).map((a) => [a.outcome, a.detail])).toEqual([['suppressed_policy', 'opted_out']]);

    await textFrom(phone, 'START');
    expect(await preferenceFor(t.db, { recipient: phone, category: 'courtesy', channel: 'sms' })).toBe('opted_in');
    const again = await smsJob(recoveryPayload, phone);
    await handlerFor()(delivery(again.id));
    expect(await readJob(t.db, again.id)).toMatchObject({ state: 'sent' });
    expect(peer.countByCorrelation(correlationOf(again.noticeKey))).toBe(1);
    const [message] = peer.messages().filter((m) => m.to === phone);
    expect(message?.body).toMatch(/Reply STOP to opt out\.$/);
  });

  it('a required notice by SMS is still sent to a number opted out of courtesy texts (sms_keyword), and says nothing of STOP', async () => {
    const phone = randomPhone();
    await setPreference(t.db, { recipient: phone, category: 'courtesy', channel: 'sms', state: 'opted_out', source: 'sms_keyword' });
    const config = withRequiredSmsType();
    const courtesy = await smsJob(recoveryPayload, phone);
    const required = await smsJob(recoveryPayload, phone, { category: 'required' });
    await handlerFor()(delivery(courtesy.id));
    await handlerFor({ overrides: { noticeConfig: config } })(delivery(required.id));
    expect(await readJob(t.db, courtesy.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'unsubscribed' });
    expect(peer.countByCorrelation(correlationOf(courtesy.noticeKey))).toBe(0);
    expect(await readJob(t.db, required.id)).toMatchObject({ state: 'sent' });
    expect(peer.countByCorrelation(correlationOf(required.noticeKey))).toBe(1);
    const message = peer.messages().find((m) => m.correlation === correlationOf(required.noticeKey));
    expect(message?.body).toContain('€42.00');
    expect(message?.body).not.toContain('STOP');
  });

  it('when Twilio itself holds the STOP (21610), even a required SMS is refused there: failed twilio_21610, never retried', async () => {
    // Twilio's Advanced Opt-Out blocks every message from the sender after STOP, whatever our category.
    const phone = randomPhone();
    peer.unsubscribe(phone);
    const required = await smsJob(recoveryPayload, phone, { category: 'required' });
    await handlerFor({ overrides: { noticeConfig: withRequiredSmsType() } })(delivery(required.id));
    expect(await readJob(t.db, required.id)).toMatchObject({ state: 'failed', lastErrorClass: 'twilio_21610' });
    expect(peer.countByCorrelation(correlationOf(required.noticeKey))).toBe(0);
  });

  it('an email opt-out does not stop an SMS, and an SMS opt-out does not stop an email', async () => {
    const phone = randomPhone();
    const email = `both-${randomBytes(4).toString('hex')}@example.test`;
    await setPreference(t.db, { recipient: email, category: 'courtesy', channel: 'email', state: 'opted_out', source: 'one_click' });
    const bySms = await smsJob(recoveryPayload, phone, { email });
    await handlerFor()(delivery(bySms.id));
    expect(await readJob(t.db, bySms.id)).toMatchObject({ state: 'sent' });
    expect(peer.countByCorrelation(correlationOf(bySms.noticeKey))).toBe(1);

    const other = `sms-only-${randomBytes(4).toString('hex')}@example.test`;
    const otherPhone = randomPhone();
    await textFrom(otherPhone, 'STOP');
    const byEmail = await smsJob(recoveryPayload, otherPhone, { channel: 'email', email: other });
    await handlerFor({ smtpUrl: sink.url })(delivery(byEmail.id));
    expect(await readJob(t.db, byEmail.id)).toMatchObject({ state: 'sent' });
    expect(sink.countByCorrelation(correlationOf(byEmail.noticeKey))).toBe(1);
    expect(peer.messages().filter((m) => m.to === otherPhone)).toHaveLength(0);
    // Both opt-outs are still in place: each was read on its own channel only.
    expect(await preferenceFor(t.db, { recipient: email, category: 'courtesy', channel: 'email' })).toBe('opted_out');
    expect(await preferenceFor(t.db, { recipient: otherPhone, category: 'courtesy', channel: 'sms' })).toBe('opted_out');
  });
});
