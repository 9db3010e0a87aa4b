import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { claimNotice } from '@/db/queries/ledger/claim';
import { releaseClaim } from '@/db/queries/ledger/commit';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { createPostmarkTransport } from '@/lib/channels/postmark/transport';
import { createSendgridTransport } from '@/lib/channels/sendgrid/transport';
import { createSesTransport } from '@/lib/channels/ses/transport';
import { ingestEvents } from '@/lib/events/ingest';
import { parseSendgridWebhook } from '@/lib/events/providers/sendgrid';
import { CORRELATION_HEADER } from '@/lib/events/types';
import { loadNoticeStatus } from '@/lib/notices/status';
import { createTestSendgridSigner } from '@/testing/provider-events';
import { sendgridWebhookEvents, startSendgridPeer, type SendgridMessage, type SendgridPeer } from '@/testing/sendgrid-peer';
import { createEmailTransport } from '@/lib/channels/registry';
import { createSmsChannel } from '@/lib/channels/sms';
import { loadConfig } from '@/lib/config';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createLogger } from '@/lib/log';
import type { EmailTransport, OutgoingNotice } from '@/lib/mail/transport';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { claimParamsFor, insertTestJob, readJob } from '@/testing/jobs';
import { startPostmarkPeer, type PostmarkPeer } from '@/testing/postmark-peer';
import { startSesPeer } from '@/testing/ses-peer';
import { createBatchingWakeupHandler, createGatherer, sendBatch } from './handle-batch';
import { createSendPath, DeliveryAbortedError, prepareWakeup, type SendPathDeps } from './handle-wakeup';
import { createDomainRateLimiter, type DomainRateLimiter } from './rate-limit';

/**
 * Batched sends through the real send path (real PostgreSQL, the official `postmark` client on
 * the local Postmark peer): the claims of a batch in one statement, committed before its one
 * call; the accepted results committed in one statement; a key never twice in a call; per-item
 * ErrorCodes classified by the phase rows; a call refused before it left releases every claim,
 * one unanswered after it left quarantines every item.
 */
let t: TestDatabase;
let peer: PostmarkPeer;
let limiter: DomainRateLimiter;
const logger = createLogger('test', 'silent');
const from = 'Notices <notices@notices.test>';

beforeAll(async () => {
  t = await createTestDatabase();
  peer = await startPostmarkPeer();
  limiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 10_000 });
});

afterAll(async () => {
  await peer?.stop();
  await t?.drop();
});

afterEach(() => {
  peer.setFault({ kind: 'none' });
  peer.refuse(null);
  vi.restoreAllMocks();
});

const postmark = ({ serverToken, apiBaseUrl, timeoutMs = 5_000 }: { serverToken?: string; apiBaseUrl?: string; timeoutMs?: number } = {}) =>
  createPostmarkTransport({ serverToken: serverToken ?? peer.serverToken, apiBaseUrl: apiBaseUrl ?? peer.baseUrl, messageStream: 'outbound', from, timeoutMs });

function batchingHandler(mail: EmailTransport, { size, gatherMs = 200 }: { size: number; gatherMs?: number }) {
  return createBatchingWakeupHandler(depsFor(mail), { size, gatherMs, concurrency: 32 });
}

function depsFor(mail: EmailTransport): SendPathDeps {
  return {
    db: t.db,
    mail,
    rateLimiter: limiter,
    workerId: 'batch-test',
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
const delivery = (jobId: string, signal = new AbortController().signal) => {
  deliveries += 1;
  return { wakeup: { jobId }, messageId: `batch-${deliveries}`, signal };
};

/** The names of the hot statements the send path ran on the pool (claims and commits are named prepared statements). */
function countStatements() {
  const names: string[] = [];
  const query = t.pool.query.bind(t.pool);
  vi.spyOn(t.pool, 'query').mockImplementation(((config: unknown, ...rest: unknown[]) => {
    if (typeof config === 'object' && config !== null && 'name' in config && typeof config.name === 'string') names.push(config.name);
    return (query as (...args: unknown[]) => unknown)(config, ...rest);
  }) as typeof t.pool.query);
  return {
    claims: () => names.filter((name) => name.startsWith('ledger_claim')),
    commits: () => names.filter((name) => name.startsWith('ledger_commit_sent')),
  };
}

const jobs = (count: number, prefix: string) =>
  Promise.all(Array.from({ length: count }, (_, index) => insertTestJob(t.db, { recipientEmail: `${prefix}-${String(index)}@example.test` })));

describe('batched sends through Postmark POST /email/batch', () => {
  it('composes before the claim, yet a re-claimed row goes out with the code of its first claim, beside a new one with its own', async () => {
    const mail = postmark();
    const handle = batchingHandler(mail, { size: 2, gatherMs: 5_000 });
    const [again, fresh] = await jobs(2, 'reclaim');
    if (!again || !fresh) throw new Error('jobs not inserted');
    // A first claim that recorded FIRSTCODE2, then released (nothing went out).
    const first = { noticeKey: again.noticeKey, claimToken: randomUUID() };
    const claimed = await claimNotice(t.db, claimParamsFor(again, { ...first, claimedBy: 'earlier-worker', oneTimeCode: 'FIRSTCODE2' }));
    expect(claimed?.oneTimeCode).toBe('FIRSTCODE2');
    expect(await releaseClaim(t.db, first)).toBe(true);

    expect(await Promise.all([handle(delivery(again.id)), handle(delivery(fresh.id))])).toEqual([{ ack: true }, { ack: true }]);
    const sentTo = (noticeKey: string) => peer.messages().find((message) => message.correlation === correlationOf(noticeKey));
    const codeOnRow = async (noticeKey: string) => (await getLedgerRow(t.db, { noticeKey }))?.oneTimeCode ?? '';
    expect(await codeOnRow(again.noticeKey)).toBe('FIRSTCODE2');
    expect(sentTo(again.noticeKey)?.textBody).toContain('FIRSTCODE2');
    expect(sentTo(again.noticeKey)?.htmlBody).toContain('FIRSTCODE2');
    // The new row records the code its message was composed with.
    const freshCode = await codeOnRow(fresh.noticeKey);
    expect(freshCode).toMatch(/^[A-Z2-9]{10}$/);
    expect(sentTo(fresh.noticeKey)?.textBody).toContain(freshCode);
  });

  it('claims a batch in one statement committed before its one call, commits the accepted results in one statement, each row with its MessageID', async () => {
    const mail = postmark();
    const handle = batchingHandler(mail, { size: 5, gatherMs: 5_000 });
    const batch = await jobs(5, 'together');
    const statements = countStatements();
    const requestsBefore = peer.requests();

    // size 5 and a long gather: the call goes when the fifth is ready, not at the timer.
    const results = await Promise.all(batch.map((job) => handle(delivery(job.id))));
    expect(results).toEqual(batch.map(() => ({ ack: true })));
    expect(peer.requests() - requestsBefore).toBe(1);
    expect(statements.claims()).toEqual(['ledger_claim_many']);
    expect(statements.commits()).toEqual([expect.stringMatching(/^ledger_commit_sent_many/)]);

    const sent = peer.messages().filter((message) => batch.some((job) => correlationOf(job.noticeKey) === message.correlation));
    expect(sent).toHaveLength(5);
    expect(new Set(sent.map((message) => message.requestIndex)).size).toBe(1);
    for (const job of batch) {
      const message = sent.find((one) => one.correlation === correlationOf(job.noticeKey));
      const row = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
      expect({ state: row?.state, providerMessageId: row?.providerMessageId }).toEqual({ state: 'sent', providerMessageId: message?.messageId });
      // Committed before the call: the database stamped every claim before the peer received the request.
      expect(row?.claimedAt.getTime()).toBeLessThanOrEqual(message?.receivedAt.getTime() ?? 0);
      expect((await readJob(t.db, job.id)).state).toBe('sent');
      expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((attempt) => attempt.outcome)).toEqual(['sent']);
    }
    mail.close();
  });

  it('holds every claim committed while the call is out: read from another connection during the call, each row is claimed', async () => {
    peer.setFault({ kind: 'delay', ms: 1_500 });
    const handle = batchingHandler(postmark(), { size: 3 });
    const batch = await jobs(3, 'held');
    const running = Promise.all(batch.map((job) => handle(delivery(job.id))));
    await peer.waitFor(() => batch.every((job) => peer.countByCorrelation(correlationOf(job.noticeKey)) === 1), 10_000);
    for (const job of batch) expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
    await running;
    for (const job of batch) expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('sent');
  });

  it('never puts one notice key in a call twice: two wake-ups of one notice gathered together send one message, the other is refused by the claim', async () => {
    const handle = batchingHandler(postmark(), { size: 3, gatherMs: 50 });
    const [twice, other] = await jobs(2, 'twice');
    if (!twice || !other) throw new Error('no jobs');
    const requestsBefore = peer.requests();
    await Promise.all([handle(delivery(twice.id)), handle(delivery(twice.id)), handle(delivery(other.id))]);

    expect(peer.countByCorrelation(correlationOf(twice.noticeKey))).toBe(1);
    expect(peer.countByCorrelation(correlationOf(other.noticeKey))).toBe(1);
    // Every call the peer got carried distinct keys.
    const calls = new Map<number, string[]>();
    for (const message of peer.messages().filter((one) => one.requestIndex >= requestsBefore))
      calls.set(message.requestIndex, [...(calls.get(message.requestIndex) ?? []), message.correlation ?? '']);
    for (const correlations of calls.values()) expect(new Set(correlations).size).toBe(correlations.length);
    const outcomes = (await listAttemptsForJob(t.db, { jobId: twice.id })).map((attempt) => attempt.outcome).sort();
    expect(outcomes).toHaveLength(2);
    expect(outcomes.filter((outcome) => outcome === 'sent')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome !== 'sent')).toEqual([expect.stringMatching(/^(suppressed_duplicate|discarded)$/)]);
    expect((await getLedgerRow(t.db, { noticeKey: twice.noticeKey }))?.state).toBe('sent');
  });

  it('classifies each item by its own ErrorCode in an HTTP 200: 406 and 300 fail those notices for good, their siblings are sent', async () => {
    peer.refuse((to) => (to === 'items-inactive@example.test' ? { errorCode: 406 } : to === 'items-invalid@example.test' ? { errorCode: 300 } : null));
    const handle = batchingHandler(postmark(), { size: 4 });
    const batch = await Promise.all(
      ['items-a', 'items-inactive', 'items-b', 'items-invalid'].map((name) => insertTestJob(t.db, { recipientEmail: `${name}@example.test` })),
    );
    const statements = countStatements();
    await Promise.all(batch.map((job) => handle(delivery(job.id))));
    const ended = await Promise.all(
      batch.map(async (job) => ({
        job: (await readJob(t.db, job.id)).state,
        ledger: (await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state,
        attempts: (await listAttemptsForJob(t.db, { jobId: job.id })).map((attempt) => [attempt.outcome, attempt.errorClass]),
      })),
    );
    expect(ended).toEqual([
      { job: 'sent', ledger: 'sent', attempts: [['sent', null]] },
      { job: 'failed', ledger: 'released', attempts: [['permanent_failure', 'postmark_406']] },
      { job: 'sent', ledger: 'sent', attempts: [['sent', null]] },
      { job: 'failed', ledger: 'released', attempts: [['permanent_failure', 'postmark_300']] },
    ]);
    // The two accepted results share one commit statement.
    expect(statements.commits()).toHaveLength(1);
  });

  it('a 429 with Retry-After refuses the call before it left: every claim released, no quarantine, nothing sent, the retry not before Retry-After', async () => {
    peer.setFault({ kind: 'throttle', retryAfterSeconds: 120 });
    const handle = batchingHandler(postmark(), { size: 3 });
    const batch = await jobs(3, 'throttled');
    const before = Date.now();
    const results = await Promise.all(batch.map((job) => handle(delivery(job.id))));
    for (const [index, job] of batch.entries()) {
      const row = await readJob(t.db, job.id);
      expect({ job: row.state, ledger: (await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state }).toEqual({ job: 'pending', ledger: 'released' });
      expect(row.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(before + 120_000);
      expect(results[index]).toEqual({ ack: true, wakeAt: row.nextAttemptAt });
      expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((attempt) => [attempt.outcome, attempt.errorClass])).toEqual([
        ['retryable_failure', 'postmark_429'],
      ]);
      expect(peer.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
    }
  });

  it('wrong credentials (401) and a refused connect release every claim: our configuration counts no attempt, nothing left retries', async () => {
    const misconfigured = await jobs(2, 'unauthorised');
    await Promise.all(misconfigured.map((job) => batchingHandler(postmark({ serverToken: 'wrong' }), { size: 2 })(delivery(job.id))));
    for (const job of misconfigured) {
      expect(await readJob(t.db, job.id)).toMatchObject({ state: 'pending', attempts: 0, lastErrorClass: 'postmark_10' });
      expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('released');
    }
    const { freePort } = await import('@/db/embedded');
    const closed = postmark({ apiBaseUrl: `http://127.0.0.1:${String(await freePort())}` });
    const unreachable = await jobs(2, 'unreachable');
    const handle = batchingHandler(closed, { size: 2 });
    await Promise.all(unreachable.map((job) => handle(delivery(job.id))));
    for (const job of unreachable) {
      expect(await readJob(t.db, job.id)).toMatchObject({ state: 'pending', attempts: 1, lastErrorClass: 'connect_failed' });
      expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('released');
    }
  });

  it('a delivery aborted while it waited for its batch stops before its claim: nothing claimed or sent for it, its siblings sent', async () => {
    const path = createSendPath(depsFor(postmark()));
    const [stopped, sibling] = await jobs(2, 'aborted');
    if (!stopped || !sibling) throw new Error('no jobs');
    const controller = new AbortController();
    const ready = await Promise.all([prepareWakeup(path, delivery(stopped.id, controller.signal)), prepareWakeup(path, delivery(sibling.id))]);
    const items = ready.map((step) => ('next' in step ? step.next : null)).filter((item) => item !== null);
    expect(items).toHaveLength(2);
    // Aborted after it was ready (gathered), before the batch ran.
    controller.abort();
    const results = await sendBatch(path, items);
    expect(results[0]).toBeInstanceOf(DeliveryAbortedError);
    expect(results[1]).toEqual({ ack: true });
    expect(await getLedgerRow(t.db, { noticeKey: stopped.noticeKey })).toBeNull();
    expect(await readJob(t.db, stopped.id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(peer.countByCorrelation(correlationOf(stopped.noticeKey))).toBe(0);
    expect(peer.countByCorrelation(correlationOf(sibling.noticeKey))).toBe(1);
  });

  it.each([
    { fault: { kind: 'error-after-accept' } as const, errorClass: 'postmark_500' },
    { fault: { kind: 'drop-after-accept' } as const, errorClass: 'connection_lost' },
  ])(
    '$fault.kind: every item of the call is outcome unknown, its claim kept for quarantine, the peer holding each message once',
    async ({ fault, errorClass }) => {
      peer.setFault(fault);
      const handle = batchingHandler(postmark(), { size: 3 });
      const batch = await jobs(3, fault.kind);
      await Promise.all(batch.map((job) => handle(delivery(job.id))));
      for (const job of batch) {
        expect(await readJob(t.db, job.id)).toMatchObject({ state: 'claimed', lastErrorClass: errorClass });
        expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
        expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((attempt) => [attempt.outcome, attempt.errorClass])).toEqual([['unknown', errorClass]]);
        expect(peer.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
      }
      // The redelivery finds the claim held: nothing more is sent.
      peer.setFault({ kind: 'none' });
      await Promise.all(batch.map((job) => handle(delivery(job.id))));
      for (const job of batch) expect(peer.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
    },
  );
});

describe('batched sends through SES v2 SendBulkEmail', () => {
  it('sends a batch in one call, each entry its own message with its tag; a MESSAGE_REJECTED entry fails for good, a 5xx leaves every entry unknown', async () => {
    const ses = await startSesPeer();
    const transport = () =>
      createSesTransport({ region: ses.region, credentials: ses.credentials, endpoint: ses.baseUrl, configurationSet: null, from, timeoutMs: 5_000 });
    try {
      ses.refuse((to) => (to === 'ses-refused@example.test' ? { status: 'MESSAGE_REJECTED' } : null));
      const mail = transport();
      expect(mail.batchLimit).toBe(50);
      const handle = batchingHandler(mail, { size: 3 });
      const batch = await Promise.all(['ses-a', 'ses-refused', 'ses-b'].map((name) => insertTestJob(t.db, { recipientEmail: `${name}@example.test` })));
      const statements = countStatements();
      await Promise.all(batch.map((job) => handle(delivery(job.id))));
      expect(ses.requests()).toBe(1);
      expect(new Set(ses.messages().map((message) => message.operation))).toEqual(new Set(['SendBulkEmail']));
      expect(statements.claims()).toEqual(['ledger_claim_many']);
      expect(statements.commits()).toHaveLength(1);
      const ended = await Promise.all(
        batch.map(async (job) => {
          const row = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
          const message = ses.messages().find((one) => one.correlation === correlationOf(job.noticeKey));
          return { job: (await readJob(t.db, job.id)).state, ledger: row?.state, linked: message ? row?.providerMessageId === message.messageId : null };
        }),
      );
      expect(ended).toEqual([
        { job: 'sent', ledger: 'sent', linked: true },
        { job: 'failed', ledger: 'released', linked: null },
        { job: 'sent', ledger: 'sent', linked: true },
      ]);
      expect((await readJob(t.db, batch[1]?.id ?? '')).lastErrorClass).toBe('ses_MESSAGE_REJECTED');

      ses.refuse(null);
      ses.setFault({ kind: 'error-after-accept' });
      const unknown = await jobs(2, 'ses-unknown');
      const again = batchingHandler(transport(), { size: 2 });
      await Promise.all(unknown.map((job) => again(delivery(job.id))));
      for (const job of unknown) {
        expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('claimed');
        expect(ses.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
      }
    } finally {
      await ses.stop();
    }
  });
});

describe('batched sends through SendGrid v3 Mail Send (a personalization per notice)', () => {
  let sg: SendgridPeer;
  const signer = createTestSendgridSigner();
  beforeAll(async () => {
    sg = await startSendgridPeer();
  });
  afterAll(async () => {
    await sg?.stop();
  });
  afterEach(() => {
    sg.refuse(null);
  });
  const sendgrid = () => createSendgridTransport({ apiKey: sg.apiKey, apiBaseUrl: sg.baseUrl, from, timeoutMs: 5_000 });
  const messageOf = (noticeKey: string) => sg.messages().find((message) => message.correlation === correlationOf(noticeKey));
  const webhook = (message: SendgridMessage | undefined, events: ('processed' | 'delivered' | 'dropped')[]) => {
    if (!message) throw new Error('no such message');
    const body = JSON.stringify(sendgridWebhookEvents(message, events));
    const now = new Date();
    const result = parseSendgridWebhook({
      headers: new Headers(signer.sign(body, Math.floor(now.getTime() / 1000))),
      body: Buffer.from(body),
      publicKey: signer.publicKeyBase64,
      now,
    });
    if (!result.ok) throw new Error(result.refusal.message);
    return ingestEvents(t.db, { events: result.events });
  };
  const outcomeOf = async (noticeKey: string) => (await loadNoticeStatus(t.db, { noticeKey }))?.outcome;

  it('sends one request, each recipient its own subject, text and HTML; each row accepted until its own events: processed → sent, dropped → dropped', async () => {
    const handle = batchingHandler(sendgrid(), { size: 3 });
    const batch = await jobs(3, 'sg-together');
    const requestsBefore = sg.requests();
    await Promise.all(batch.map((job) => handle(delivery(job.id))));
    expect(sg.requests() - requestsBefore).toBe(1);

    const messages = batch.map((job) => messageOf(job.noticeKey));
    expect(new Set(messages.map((message) => message?.xMessageId)).size).toBe(1);
    for (const [index, job] of batch.entries()) {
      const message = messages[index];
      expect(message?.to).toBe(job.recipientEmail);
      expect(message?.subject).not.toBe('');
      // The substitutions made: each recipient's own rendered bodies, no tag left.
      expect(message?.html).toContain('<html');
      expect(`${message?.html ?? ''}${message?.text ?? ''}${message?.subject ?? ''}`).not.toMatch(/-nl-(html|text)-/);
      expect(message?.headers[CORRELATION_HEADER.toLowerCase()]).toBe(correlationOf(job.noticeKey));
      const row = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
      expect({ state: row?.state, providerMessageId: row?.providerMessageId, providerStatus: row?.providerStatus }).toEqual({
        state: 'sent',
        providerMessageId: message?.xMessageId,
        providerStatus: 'accepted',
      });
      expect(await outcomeOf(job.noticeKey)).toBe('accepted');
    }
    // Bodies differ by recipient (their own links and names), proof the content is per personalization.
    expect(new Set(messages.map((message) => message?.html)).size).toBe(3);
    expect(new Set(messages.map((message) => message?.text)).size).toBe(3);

    const [processed, dropped, waiting] = batch.map((job) => job.noticeKey) as [string, string, string];
    expect((await webhook(messages[0], ['processed', 'delivered'])).linked).toBe(2);
    expect((await getLedgerRow(t.db, { noticeKey: processed }))?.providerStatus).toBe('processed');
    expect(await outcomeOf(processed)).toBe('sent');

    expect((await webhook(messages[1], ['dropped'])).dropped).toEqual([dropped]);
    expect((await getLedgerRow(t.db, { noticeKey: dropped }))?.providerStatus).toBe('dropped');
    expect(await outcomeOf(dropped)).toBe('dropped');
    // Settled once: a later event for it moves nothing back, and the row stays sent (never resent).
    await webhook(messages[1], ['delivered']);
    expect(await getLedgerRow(t.db, { noticeKey: dropped })).toMatchObject({ state: 'sent', providerStatus: 'dropped' });
    expect(await outcomeOf(waiting)).toBe('accepted');
  });

  it('a 400 refuses the whole request and sends nothing: each is then sent alone, the bad address failing for good and its siblings sent', async () => {
    sg.refuse((to) => (to === 'sg-bad-1@example.test' ? { message: 'Does not contain a valid address.' } : null));
    const handle = batchingHandler(sendgrid(), { size: 3 });
    const batch = await jobs(3, 'sg-bad');
    const requestsBefore = sg.requests();
    await Promise.all(batch.map((job) => handle(delivery(job.id))));
    // One refused request, then one each.
    expect(sg.requests() - requestsBefore).toBe(4);
    const ended = await Promise.all(
      batch.map(async (job) => ({
        job: (await readJob(t.db, job.id)).state,
        ledger: (await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state,
        held: sg.countByCorrelation(correlationOf(job.noticeKey)),
      })),
    );
    expect(ended).toEqual([
      { job: 'sent', ledger: 'sent', held: 1 },
      { job: 'failed', ledger: 'released', held: 0 },
      { job: 'sent', ledger: 'sent', held: 1 },
    ]);
    expect((await readJob(t.db, batch[1]?.id ?? '')).lastErrorClass).toBe('sendgrid_400');
  });

  it('never names one address twice in a request: two notices to one recipient go in two requests, both sent', async () => {
    const handle = batchingHandler(sendgrid(), { size: 3, gatherMs: 100 });
    const batch = await Promise.all(
      ['Same@Example.test', 'same@example.test', 'other-sg@example.test'].map((email) => insertTestJob(t.db, { recipientEmail: email })),
    );
    const requestsBefore = sg.requests();
    await Promise.all(batch.map((job) => handle(delivery(job.id))));
    expect(sg.requests() - requestsBefore).toBe(2);
    for (const job of batch)
      expect({ ledger: (await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state, held: sg.countByCorrelation(correlationOf(job.noticeKey)) }).toEqual({
        ledger: 'sent',
        held: 1,
      });
  });

  it('sends alone a notice whose bodies exceed the 50 000-byte substitution limit; the rest still share one request', async () => {
    const mail = sendgrid();
    const notice = (name: string, html: string): OutgoingNotice => ({
      noticeKey: `${name.padEnd(8, '0')}${'0'.repeat(56)}`.replace(/[^0-9a-f]/g, 'a'),
      to: `${name}@example.test`,
      subject: `Subject for ${name}`,
      html,
      text: `text for ${name}`,
      listUnsubscribe: null,
    });
    const requestsBefore = sg.requests();
    const outcomes = await mail.sendBatch?.([notice('aa01', '<p>one</p>'), notice('bb02', `<p>${'x'.repeat(60_000)}</p>`), notice('cc03', '<p>three</p>')]);
    expect(outcomes?.map((outcome) => outcome.kind)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(sg.requests() - requestsBefore).toBe(2);
    const big = sg.messages().find((message) => message.to === 'bb02@example.test');
    expect(big?.html.length).toBeGreaterThan(60_000);
    expect(sg.messages().find((message) => message.to === 'cc03@example.test')?.html).toBe('<p>three</p>');
  });
});

describe('where batching applies', () => {
  it('only a transport with a batch call declares one (Postmark, SES, SendGrid); SMTP and Twilio have none and keep the single path', () => {
    const base = { NOTICE_KEY_SECRET: 'x'.repeat(32), SMTP_URL: 'smtp://127.0.0.1:2525', MAIL_FROM: 'n@notices.test' };
    const smtp = createEmailTransport(loadConfig({ ...base }), { maxConnections: 1 });
    expect(smtp.sendBatch).toBeUndefined();
    smtp.close();
    const pm = createEmailTransport(loadConfig({ ...base, EMAIL_PROVIDER: 'postmark', POSTMARK_SERVER_TOKEN: 'token' }), { maxConnections: 1 });
    expect({ batch: typeof pm.sendBatch, limit: pm.batchLimit }).toEqual({ batch: 'function', limit: 500 });
    const ses = createEmailTransport(loadConfig({ ...base, EMAIL_PROVIDER: 'ses', SES_REGION: 'eu-west-1' }), { maxConnections: 1 });
    expect({ batch: typeof ses.sendBatch, limit: ses.batchLimit }).toEqual({ batch: 'function', limit: 50 });
    // SendGrid: a personalization per notice, its own body by substitution tags.
    const sendgrid = createEmailTransport(loadConfig({ ...base, EMAIL_PROVIDER: 'sendgrid', SENDGRID_API_KEY: 'SG.key' }), { maxConnections: 1 });
    expect({ batch: typeof sendgrid.sendBatch, limit: sendgrid.batchLimit }).toEqual({ batch: 'function', limit: 1000 });
    // Twilio: the SMS channel declares no batch send.
    expect(createSmsChannel({ sms: undefined, settings: depsFor(smtp).settings }).sendBatch).toBeUndefined();
  });

  it('refuses batch settings it cannot honour, with the setting named', () => {
    const base = { NOTICE_KEY_SECRET: 'x'.repeat(32), SMTP_URL: 'smtp://127.0.0.1:2525', MAIL_FROM: 'n@notices.test' };
    expect(loadConfig(base)).toMatchObject({ EMAIL_BATCH_SIZE: 50, EMAIL_BATCH_GATHER: 5 });
    expect(() => loadConfig({ ...base, EMAIL_BATCH_SIZE: '501' })).toThrow(/EMAIL_BATCH_SIZE.*at most 500/);
    expect(() => loadConfig({ ...base, EMAIL_BATCH_SIZE: '0' })).toThrow(/EMAIL_BATCH_SIZE.*at least 1/);
    expect(() => loadConfig({ ...base, EMAIL_BATCH_SIZE: 'many' })).toThrow(/EMAIL_BATCH_SIZE/);
    expect(() => loadConfig({ ...base, EMAIL_BATCH_GATHER: '2s' })).toThrow(/EMAIL_BATCH_GATHER.*at most 1s/);
    expect(() => loadConfig({ ...base, EMAIL_BATCH_GATHER: 'soon' })).toThrow(/EMAIL_BATCH_GATHER/);
  });
});

describe('the gatherer', () => {
  it('runs a batch when full or when the wait ends, never with one key twice', async () => {
    const batches: string[][] = [];
    const gather = createGatherer<string, string>({
      size: 3,
      waitMs: 20,
      keysOf: (item) => [item.split(':')[0] ?? item],
      run: async (items) => {
        batches.push([...items]);
        return items.map((item) => `done ${item}`);
      },
    });
    const answers = await Promise.all(['a:1', 'a:2', 'b:1', 'c:1', 'a:3', 'd:1'].map(gather));
    expect(answers).toEqual(['done a:1', 'done a:2', 'done b:1', 'done c:1', 'done a:3', 'done d:1']);
    for (const batch of batches) {
      expect(batch.length).toBeLessThanOrEqual(3);
      const keys = batch.map((item) => item.split(':')[0]);
      expect(new Set(keys).size).toBe(keys.length);
    }
    expect(batches[0]).toEqual(['a:1', 'b:1', 'c:1']);
  });

  it('holds an item that shares any one of its keys with the open batch (one address, another notice)', async () => {
    const batches: string[][] = [];
    // key:address — two notices to one address never share a batch, whatever their keys.
    const gather = createGatherer<string, string>({
      size: 4,
      waitMs: 10,
      keysOf: (item) => item.split(':'),
      run: async (items) => {
        batches.push([...items]);
        return items.map((item) => item);
      },
    });
    await Promise.all(['k1:ann', 'k2:ann', 'k3:bob', 'k4:cid', 'k5:dee'].map(gather));
    expect(batches[0]).toEqual(['k1:ann', 'k3:bob', 'k4:cid', 'k5:dee']);
    expect(batches[1]).toEqual(['k2:ann']);
  });

  it('gives every caller of a batch its error when the batch throws', async () => {
    const gather = createGatherer<string, string>({ size: 2, waitMs: 5, keysOf: (item) => [item], run: async () => Promise.reject(new Error('boom')) });
    await expect(Promise.all([gather('x'), gather('y')])).rejects.toThrow('boom');
  });
});
