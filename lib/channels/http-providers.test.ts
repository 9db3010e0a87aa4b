import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { findLedgerLink } from '@/db/queries/ledger/evidence-match';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { listTransportsDown } from '@/db/queries/transport-status';
import { providerEvents } from '@/db/schema';
import { ingestEvents } from '@/lib/events/ingest';
import { parsePostmarkWebhook } from '@/lib/events/providers/postmark';
import { parseSendgridWebhook } from '@/lib/events/providers/sendgrid';
import { parseSesWebhook } from '@/lib/events/providers/ses';
import { createSnsKeyResolver } from '@/lib/events/sns';
import type { NormalizedEvent } from '@/lib/events/types';
import { createBatchingWakeupHandler } from '@/lib/jobs/handle-batch';
import { createWakeupHandler, type SendPathDeps } from '@/lib/jobs/handle-wakeup';
import { createDomainRateLimiter, type DomainRateLimiter } from '@/lib/jobs/rate-limit';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createLogger } from '@/lib/log';
import type { EmailTransport } from '@/lib/mail/transport';
import { createTransportBreakers } from '@/lib/transport/breaker';
import type { FailureClass, TransportName } from '@/lib/transport/phases';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import type { RequestFault } from '@/testing/http-peer';
import { insertTestJob, readJob } from '@/testing/jobs';
import { postmarkDeliveryWebhook, startPostmarkPeer } from '@/testing/postmark-peer';
import { createTestSendgridSigner, createTestSnsSigner } from '@/testing/provider-events';
import { sendgridWebhookEvents, startSendgridPeer } from '@/testing/sendgrid-peer';
import { sesEventRecord, startSesPeer } from '@/testing/ses-peer';
import { createPostmarkTransport } from './postmark/transport';
import { createSendgridTransport } from './sendgrid/transport';
import { createSesTransport } from './ses/transport';

/**
 * Each HTTP email provider through the real send path (handle-wakeup, real PostgreSQL), its
 * official SDK pointed at the local peer that speaks its documented API: sent once, a refusal of
 * this recipient, our configuration broken, an answer that never comes after the request left,
 * and the provider's webhook, in its documented format, linked back to the row it sent.
 */

const from = 'Notices <notices@notices.test>';

/** What a test needs of one provider and its peer, whatever the provider. */
type Started = {
  transport: (options?: { wrongCredentials?: boolean; timeoutMs?: number }) => EmailTransport;
  refuse: (email: string) => void;
  setFault: (fault: RequestFault) => void;
  /** What the peer accepted: the correlation and the id the provider answered with. */
  accepted: () => { correlation: string | null; providerMessageId: string }[];
  /** The provider's webhook for the `index`th accepted message, parsed by the product's own parser. */
  webhookFor: (index: number) => Promise<NormalizedEvent[]>;
  /** How many requests the peer has received. */
  requests: () => number;
  stop: () => Promise<void>;
};

type Harness = {
  name: TransportName;
  start: () => Promise<Started>;
  refused: { errorClass: string; code: number };
  misconfigured: { errorClass: string; code: number };
};

function parsed(result: { ok: true; events: NormalizedEvent[] } | { ok: false; refusal: { message: string } }): NormalizedEvent[] {
  if (!result.ok) throw new Error(`webhook refused: ${result.refusal.message}`);
  return result.events;
}

const harnesses: Harness[] = [
  {
    name: 'postmark',
    refused: { errorClass: 'postmark_406', code: 422 },
    misconfigured: { errorClass: 'postmark_10', code: 401 },
    start: async () => {
      const peer = await startPostmarkPeer();
      return {
        transport: ({ wrongCredentials = false, timeoutMs = 5_000 } = {}) =>
          createPostmarkTransport({
            serverToken: wrongCredentials ? 'not-the-server-token' : peer.serverToken,
            apiBaseUrl: peer.baseUrl,
            messageStream: 'outbound',
            from,
            timeoutMs,
          }),
        refuse: (email) => peer.refuse((to) => (to === email ? { errorCode: 406 } : null)),
        setFault: (fault) => peer.setFault(fault),
        accepted: () => peer.messages().map((message) => ({ correlation: message.correlation, providerMessageId: message.messageId })),
        webhookFor: async (index) => {
          const message = peer.messages()[index];
          if (!message) throw new Error('no such message');
          const body = Buffer.from(JSON.stringify(postmarkDeliveryWebhook(message)));
          const headers = new Headers({ authorization: `Basic ${Buffer.from('hook:secret').toString('base64')}` });
          return parsed(parsePostmarkWebhook({ headers, body, user: 'hook', password: 'secret' }));
        },
        requests: peer.requests,
        stop: peer.stop,
      };
    },
  },
  {
    name: 'ses',
    refused: { errorClass: 'ses_MessageRejected', code: 400 },
    misconfigured: { errorClass: 'ses_SignatureDoesNotMatch', code: 403 },
    start: async () => {
      const peer = await startSesPeer();
      const signer = createTestSnsSigner();
      const topic = 'arn:aws:sns:us-east-1:123456789012:ses-events';
      return {
        transport: ({ wrongCredentials = false, timeoutMs = 5_000 } = {}) =>
          createSesTransport({
            region: peer.region,
            credentials: wrongCredentials ? { ...peer.credentials, secretAccessKey: 'not-the-secret-access-key' } : peer.credentials,
            endpoint: peer.baseUrl,
            configurationSet: null,
            from,
            timeoutMs,
          }),
        refuse: (email) => peer.refuse((to) => (to === email ? { status: 'MESSAGE_REJECTED', error: 'Email address is on the suppression list.' } : null)),
        setFault: (fault) => peer.setFault(fault),
        accepted: () => peer.messages().map((message) => ({ correlation: message.correlation, providerMessageId: message.messageId })),
        webhookFor: async (index) => {
          const message = peer.messages()[index];
          if (!message) throw new Error('no such message');
          const now = new Date();
          const envelope = signer.sign({
            Type: 'Notification',
            MessageId: `sns-${message.messageId}`,
            TopicArn: topic,
            Message: JSON.stringify(sesEventRecord(message)),
            Timestamp: now.toISOString(),
          });
          return parsed(
            await parseSesWebhook({
              body: Buffer.from(JSON.stringify(envelope)),
              resolveKey: createSnsKeyResolver({ fetcher: async () => signer.certificatePem, now: () => now.getTime() }),
              allowedTopics: [topic],
              now,
            }),
          );
        },
        requests: peer.requests,
        stop: peer.stop,
      };
    },
  },
  {
    name: 'sendgrid',
    refused: { errorClass: 'sendgrid_400', code: 400 },
    misconfigured: { errorClass: 'sendgrid_401', code: 401 },
    start: async () => {
      const peer = await startSendgridPeer();
      const signer = createTestSendgridSigner();
      return {
        transport: ({ wrongCredentials = false, timeoutMs = 5_000 } = {}) =>
          createSendgridTransport({ apiKey: wrongCredentials ? 'SG.not-the-key' : peer.apiKey, apiBaseUrl: peer.baseUrl, from, timeoutMs }),
        refuse: (email) => peer.refuse((to) => (to === email ? { message: 'Does not contain a valid address.' } : null)),
        setFault: (fault) => peer.setFault(fault),
        accepted: () => peer.messages().map((message) => ({ correlation: message.correlation, providerMessageId: message.xMessageId })),
        webhookFor: async (index) => {
          const message = peer.messages()[index];
          if (!message) throw new Error('no such message');
          const body = JSON.stringify(sendgridWebhookEvents(message));
          const now = new Date();
          return parsed(
            parseSendgridWebhook({
              headers: new Headers(signer.sign(body, Math.floor(now.getTime() / 1000))),
              body: Buffer.from(body),
              publicKey: signer.publicKeyBase64,
              now,
            }),
          );
        },
        requests: peer.requests,
        stop: peer.stop,
      };
    },
  },
];

/** How a notice ends for each class (the same table as lib/jobs/send-phases.test.ts). */
const endsAs: Record<FailureClass, { job: string; ledger: string; attempts: number; attempt: string }> = {
  nothing_left: { job: 'pending', ledger: 'released', attempts: 1, attempt: 'retryable_failure' },
  recipient_refused: { job: 'failed', ledger: 'released', attempts: 1, attempt: 'permanent_failure' },
  config_broken: { job: 'pending', ledger: 'released', attempts: 0, attempt: 'retryable_failure' },
  outcome_unknown: { job: 'claimed', ledger: 'claimed', attempts: 1, attempt: 'unknown' },
};

let t: TestDatabase;
let limiter: DomainRateLimiter;
const logger = createLogger('test', 'silent');

beforeAll(async () => {
  t = await createTestDatabase();
  limiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 });
});

afterAll(async () => {
  await t?.drop();
});

function handlerFor(mail: EmailTransport, breakers?: ReturnType<typeof createTransportBreakers>) {
  return createWakeupHandler(depsFor(mail, breakers));
}

/** The batching worker's handler (lib/jobs/handle-batch.ts): up to `size` notices in one provider call. */
function batchHandlerFor(mail: EmailTransport, size: number) {
  return createBatchingWakeupHandler(depsFor(mail), { size, gatherMs: 500, concurrency: 32 });
}

function depsFor(mail: EmailTransport, breakers?: ReturnType<typeof createTransportBreakers>): SendPathDeps {
  return {
    db: t.db,
    mail,
    rateLimiter: limiter,
    ...(breakers ? { breakers } : {}),
    workerId: `${mail.name}-test`,
    logger,
    settings: {
      mode: 'enforce',
      noticeConfig: activeNoticeConfig().config,
      retryBaseMs: 1_000,
      retryCapMs: 10_000,
      maxAttempts: 8,
      secret: process.env.NOTICE_KEY_SECRET ?? '',
      cancelBaseUrl: 'https://notices.test',
      maxTokenWaitMs: 1_000,
    },
  };
}

let deliveries = 0;
const delivery = (jobId: string) => {
  deliveries += 1;
  return { wakeup: { jobId }, messageId: `http-${deliveries}`, signal: new AbortController().signal };
};

async function expectEnded(jobId: string, noticeKey: string, failure: FailureClass, errorClass: string) {
  const end = endsAs[failure];
  const job = await readJob(t.db, jobId);
  expect({ job: job.state, attempts: job.attempts, lastErrorClass: job.lastErrorClass }).toEqual({
    job: end.job,
    attempts: end.attempts,
    lastErrorClass: errorClass,
  });
  expect((await getLedgerRow(t.db, { noticeKey }))?.state).toBe(end.ledger);
  const attempts = await listAttemptsForJob(t.db, { jobId });
  expect(attempts.map((row) => [row.outcome, row.errorClass])).toEqual([[end.attempt, errorClass]]);
}

describe.each(harnesses)('$name through the send path and its official SDK', ({ name, start, refused, misconfigured }) => {
  let provider: Started;
  beforeAll(async () => {
    provider = await start();
  });
  afterAll(async () => {
    await provider?.stop();
  });

  it('sends once: the row is sent with the provider message id, the peer holds one message for the correlation, a redelivery sends nothing', async () => {
    const mail = provider.transport();
    const job = await insertTestJob(t.db, { recipientEmail: `once-${name}@example.test` });
    const correlation = correlationOf(job.noticeKey);
    const handle = handlerFor(mail);
    await handle(delivery(job.id));
    const row = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
    const accepted = provider.accepted().filter((message) => message.correlation === correlation);
    expect(accepted).toHaveLength(1);
    expect({ state: row?.state, providerMessageId: row?.providerMessageId }).toEqual({ state: 'sent', providerMessageId: accepted[0]?.providerMessageId });
    expect((await readJob(t.db, job.id)).state).toBe('sent');

    await handle(delivery(job.id));
    expect(provider.accepted().filter((message) => message.correlation === correlation)).toHaveLength(1);
    mail.close();
  });

  it('links its webhook, in the documented format, to the row it sent: by the correlation, and by the provider message id alone', async () => {
    const mail = provider.transport();
    const job = await insertTestJob(t.db, { recipientEmail: `hook-${name}@example.test` });
    await handlerFor(mail)(delivery(job.id));
    const index = provider.accepted().findIndex((message) => message.correlation === correlationOf(job.noticeKey));
    const events = await provider.webhookFor(index);
    const row = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) expect([event.correlationId, event.providerMessageId]).toEqual([correlationOf(job.noticeKey), row?.providerMessageId]);

    const summary = await ingestEvents(t.db, { events });
    expect(summary.linked).toBe(events.length);
    const stored = await t.db.select({ noticeKey: providerEvents.noticeKey }).from(providerEvents).where(eq(providerEvents.provider, name));
    expect(stored.filter((event) => event.noticeKey === job.noticeKey)).toHaveLength(events.length);
    // The stored provider id is a link of its own (SES: the only one besides the tag).
    expect(await findLedgerLink(t.db, { correlationId: null, providerMessageId: row?.providerMessageId ?? null })).toMatchObject({ noticeKey: job.noticeKey });
    mail.close();
  });

  it('sends a batch in one call, and its webhook links each event to the row of its own notice (the batch path)', async () => {
    const mail = provider.transport();
    const jobs = await Promise.all([0, 1, 2].map((n) => insertTestJob(t.db, { recipientEmail: `batch-${String(n)}-${name}@example.test` })));
    const requestsBefore = provider.requests();
    const handle = batchHandlerFor(mail, 3);
    await Promise.all(jobs.map((job) => handle(delivery(job.id))));
    expect(provider.requests() - requestsBefore).toBe(1);

    for (const job of jobs) {
      const correlation = correlationOf(job.noticeKey);
      const index = provider.accepted().findIndex((message) => message.correlation === correlation);
      const row = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
      expect({ state: row?.state, providerMessageId: row?.providerMessageId }).toEqual({
        state: 'sent',
        providerMessageId: provider.accepted()[index]?.providerMessageId,
      });
      const events = await provider.webhookFor(index);
      expect(events.length).toBeGreaterThan(0);
      for (const event of events) expect(event.correlationId).toBe(correlation);
      const summary = await ingestEvents(t.db, { events });
      expect(summary.linked).toBe(events.length);
      const stored = await t.db.select({ noticeKey: providerEvents.noticeKey }).from(providerEvents).where(eq(providerEvents.provider, name));
      expect(stored.filter((event) => event.noticeKey === job.noticeKey)).toHaveLength(events.length);
    }
    mail.close();
  });

  it('a refusal of this recipient fails the notice for good, claim released, nothing accepted', async () => {
    const mail = provider.transport();
    const email = `refused-${name}@example.test`;
    provider.refuse(email);
    try {
      const job = await insertTestJob(t.db, { recipientEmail: email });
      await handlerFor(mail)(delivery(job.id));
      await expectEnded(job.id, job.noticeKey, 'recipient_refused', refused.errorClass);
      expect(provider.accepted().filter((message) => message.correlation === correlationOf(job.noticeKey))).toHaveLength(0);
    } finally {
      provider.refuse('');
      mail.close();
    }
  });

  it('wrong credentials are our configuration: released without counting an attempt against the recipient, the transport paused', async () => {
    const mail = provider.transport({ wrongCredentials: true });
    const breakers = createTransportBreakers({
      db: t.db,
      probes: { [name]: mail.probe },
      settings: { threshold: 100, probeBaseMs: 60_000, probeCapMs: 60_000 },
      workerId: `${name}-test`,
      logger,
    });
    try {
      const job = await insertTestJob(t.db, { recipientEmail: `config-${name}@example.test` });
      await handlerFor(mail, breakers)(delivery(job.id));
      await expectEnded(job.id, job.noticeKey, 'config_broken', misconfigured.errorClass);
      expect(breakers.isOpen(name)).toBe(true);
      await vi.waitFor(async () =>
        expect(await listTransportsDown(t.db)).toContainEqual(
          expect.objectContaining({ transport: name, reason: 'config_broken', errorClass: misconfigured.errorClass, code: misconfigured.code }),
        ),
      );
      // Its probe reads with the same wrong credentials: refused, and it sends nothing.
      expect(await mail.probe()).toMatchObject({ kind: 'rejected', failure: 'config_broken' });
      expect(await provider.transport().probe()).toEqual({ kind: 'accepted', providerMessageId: null });
    } finally {
      breakers.stop();
      mail.close();
    }
  });

  it('no answer after the request left is outcome unknown: the claim stays (quarantine), and the webhook for the accepted message confirms it', async () => {
    const mail = provider.transport({ timeoutMs: 300 });
    provider.setFault({ kind: 'delay', ms: 3_000 });
    try {
      const job = await insertTestJob(t.db, { recipientEmail: `timeout-${name}@example.test` });
      await handlerFor(mail)(delivery(job.id));
      await expectEnded(job.id, job.noticeKey, 'outcome_unknown', 'timeout');
      const index = provider.accepted().findIndex((message) => message.correlation === correlationOf(job.noticeKey));
      expect(index).toBeGreaterThanOrEqual(0);

      const summary = await ingestEvents(t.db, { events: await provider.webhookFor(index) });
      expect(summary.confirmed).toEqual([job.noticeKey]);
      expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('sent');
    } finally {
      provider.setFault({ kind: 'none' });
      mail.close();
    }
  });

  it('a connection refused before anything left is nothing left: released and retried, never quarantined', async () => {
    const { freePort } = await import('@/db/embedded');
    const port = await freePort();
    const closed = { ...harnessTarget(name, `http://127.0.0.1:${String(port)}`) };
    const job = await insertTestJob(t.db, { recipientEmail: `refused-connect-${name}@example.test` });
    await handlerFor(closed)(delivery(job.id));
    await expectEnded(job.id, job.noticeKey, 'nothing_left', 'connect_failed');
    closed.close();
  });
});

/** A transport of `name` pointed at `baseUrl` where nothing listens. */
function harnessTarget(name: TransportName, baseUrl: string): EmailTransport {
  if (name === 'postmark') return createPostmarkTransport({ serverToken: 'token', apiBaseUrl: baseUrl, messageStream: 'outbound', from, timeoutMs: 2_000 });
  if (name === 'ses')
    return createSesTransport({
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      endpoint: baseUrl,
      configurationSet: null,
      from,
      timeoutMs: 2_000,
    });
  return createSendgridTransport({ apiKey: 'SG.key', apiBaseUrl: baseUrl, from, timeoutMs: 2_000 });
}
