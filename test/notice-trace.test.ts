import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { POST as eventsRoute } from '@/app/api/v1/events/route';
import { POST as scheduleRoute } from '@/app/api/v1/reminders/route';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { genericWebhook } from '@/lib/api/webhooks';
import { createApiToken } from '@/lib/auth/api-tokens';
import { signGenericRequest } from '@/lib/events/generic-signature';
import { reconcileQuarantine } from '@/lib/events/ingest';
import { defaultSnsKeyResolver } from '@/lib/events/sns';
import type { WebhookSettings } from '@/lib/events/webhook';
import { providerRoute } from '@/lib/http/provider-route';
import { createWakeupHandler } from '@/lib/jobs/handle-wakeup';
import { createDomainRateLimiter } from '@/lib/jobs/rate-limit';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createLogger } from '@/lib/log';
import { createMailTransport } from '@/lib/mail/transport';
import { closeWakeupPublisher } from '@/lib/queue';
import { createPgBossQueue, type PgBossQueue } from '@/lib/queue/pgboss';
import { installTracerProvider, type InstalledTracing } from '@/lib/telemetry/sdk';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { readJob } from '@/testing/jobs';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';

/**
 * One notice end to end, in process, with an in-memory span exporter: the producer API
 * schedules it, the real pg-boss adapter delivers the wake-up to the real send path, which
 * sends to the SMTP sink and commits; then the provider's webhook reports it delivered and the
 * reconciler runs. The spans must form the documented tree, the wake-up must link to the
 * producer's scheduling span, and no span may carry the recipient, the code, the body or a
 * payload value.
 */

const WEBHOOK_SECRET = 'trace-webhook-secret-0123456789abcdef';
const email = 'Trace.Person@Example.com';
// Every variable the renewal and recovery templates declare, with values no span may carry.
const payload = { customer_name: 'Orchid Customer', plan_name: 'Orchid Team Plan', amount: '4711.00', currency: 'EUR', reference: 'orchid-ref-4711' };

let t: TestDatabase;
let sink: SmtpSink;
let queue: PgBossQueue;
let tracing: InstalledTracing;
const exporter = new InMemorySpanExporter();
let token = '';

beforeAll(async () => {
  tracing = installTracerProvider({ serviceName: 'notice-ledger-test', spanProcessors: [new SimpleSpanProcessor(exporter)] });
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  sink = await startSmtpSink();
  token = (await createApiToken(t.db, { name: 'billing', createdBy: null, actor: 'admin@example.com' })).token;
  queue = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 30_000 });
  await queue.start();
});

afterAll(async () => {
  await queue?.stop();
  await closeWakeupPublisher();
  await sink?.stop();
  await tracing?.shutdown();
  await t?.drop();
});

const byName = (spans: ReadableSpan[], name: string): ReadableSpan[] => spans.filter((span) => span.name === name);
function one(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = byName(spans, name);
  expect(found.map((span) => span.name)).toEqual([name]);
  const [span] = found;
  if (!span) throw new Error(`no span ${name}`);
  return span;
}
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan) => span.spanContext().spanId;

/** Every string a span exposes: name, status, attributes, events and their attributes, links' attributes. */
function textsOf(span: ReadableSpan): string[] {
  const values = (attributes: Record<string, unknown> | undefined) => Object.entries(attributes ?? {}).flatMap(([key, value]) => [key, String(value)]);
  return [
    span.name,
    span.status.message ?? '',
    ...values(span.attributes),
    ...span.events.flatMap((event) => [event.name, ...values(event.attributes)]),
    ...span.links.flatMap((link) => values(link.attributes)),
  ];
}

describe('traces of one notice', () => {
  it('producer request → schedule; wake-up (linked) → policy, token, claim, send, commit, settle; webhook → ingest; reconcile', async () => {
    const now = Date.now();
    const request = new Request('http://localhost/api/v1/reminders', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        type: 'payment_recovery',
        identity: { account_id: 'acct_trace', reconciliation_id: 'rec_trace', exception_id: 'exc_trace' },
        recipient: { email, timeZone: 'UTC' },
        dueAt: new Date(now - 60_000).toISOString(),
        deadlineAt: new Date(now + 86_400_000).toISOString(),
        payload,
        source: 'trace-test',
      }),
    });
    const response = await scheduleRoute(request, {});
    expect(response.status).toBe(201);
    const jobId = String(((await response.json()) as { id: string }).id);
    const job = await readJob(t.db, jobId);
    const correlation = correlationOf(job.noticeKey);

    const mail = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'Notices <n@notices.test>', messageIdDomain: 'notices.test' });
    const handler = createWakeupHandler({
      db: t.db,
      mail,
      rateLimiter: await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 }),
      workerId: 'trace-worker',
      logger: createLogger('test', 'silent'),
      settings: {
        mode: 'enforce',
        noticeConfig: activeNoticeConfig().config,
        retryBaseMs: 1_000,
        retryCapMs: 10_000,
        maxAttempts: 3,
        secret: process.env.NOTICE_KEY_SECRET ?? '',
        cancelBaseUrl: 'https://notices.test',
        maxTokenWaitMs: 1_000,
      },
    });
    await queue.consume(handler, { concurrency: 1 });
    await vi.waitFor(() => expect(exporter.getFinishedSpans().some((span) => span.name === 'notice.wakeup')).toBe(true), { timeout: 20_000, interval: 50 });
    mail.close();
    expect((await readJob(t.db, jobId)).state).toBe('sent');
    const ledger = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
    const [message] = sink.messages().filter((m) => m.correlation === correlation);
    if (!ledger || !message) throw new Error('the notice was not sent');

    const events = JSON.stringify({
      events: [
        {
          id: `${correlation}.delivered`,
          type: 'delivered',
          correlation,
          messageId: message.messageId,
          providerMessageId: message.queueId,
          recipient: email.toLowerCase(),
          occurredAt: new Date().toISOString(),
        },
      ],
    });
    const settings: WebhookSettings = { webhookSecret: WEBHOOK_SECRET, snsTopicArns: [], snsKeyResolver: defaultSnsKeyResolver({}) };
    const webhook = providerRoute(genericWebhook, { settings: () => settings, db: () => t.db });
    const hook = await webhook(
      new Request('http://localhost/api/webhooks/generic', {
        method: 'POST',
        body: events,
        headers: signGenericRequest({ secret: WEBHOOK_SECRET, body: events }),
      }),
    );
    expect(hook.status).toBe(200);
    await reconcileQuarantine(t.db);

    const spans = exporter.getFinishedSpans();

    // The producer's trace: its request, and the scheduling inside it.
    const producer = one(spans, 'producer.request');
    expect(producer.kind).toBe(SpanKind.SERVER);
    expect(parentOf(producer)).toBeUndefined();
    expect(producer.attributes).toMatchObject({ 'http.route': '/api/v1/reminders', 'http.response.status_code': 201 });
    const schedule = one(spans, 'notice.schedule');
    expect(parentOf(schedule)).toBe(idOf(producer));
    expect(schedule.spanContext().traceId).toBe(producer.spanContext().traceId);
    expect(schedule.attributes).toMatchObject({
      'notice.job_id': jobId,
      'notice.correlation': correlation,
      'notice.type': 'payment_recovery',
      'notice.schedule.result': 'created',
    });
    // Stored on the job: the scheduling span, as W3C traceparent.
    expect(job.traceparent).toBe(`00-${schedule.spanContext().traceId}-${idOf(schedule)}-01`);

    // The wake-up: its own trace, linked to the scheduling span, ending at the settlement.
    const wakeup = one(spans, 'notice.wakeup');
    expect(wakeup.kind).toBe(SpanKind.CONSUMER);
    expect(parentOf(wakeup)).toBeUndefined();
    expect(wakeup.spanContext().traceId).not.toBe(producer.spanContext().traceId);
    expect(wakeup.links.map((link) => [link.context.traceId, link.context.spanId])).toEqual([[schedule.spanContext().traceId, idOf(schedule)]]);
    expect(wakeup.attributes).toMatchObject({
      'notice.job_id': jobId,
      'notice.correlation': correlation,
      'notice.type': 'payment_recovery',
      'notice.outcome': 'sent',
      'notice.settlement': 'ack',
    });
    // In the order they ended (the exporter's order): span start times have millisecond
    // precision only (the SDK starts a span at Date.now()), end times do not.
    const steps = spans.filter((span) => parentOf(span) === idOf(wakeup));
    expect(steps.map((span) => span.name)).toEqual(['notice.policy', 'notice.token_wait', 'notice.claim', 'notice.send', 'notice.commit', 'queue.settle']);
    expect(one(spans, 'notice.policy').attributes).toMatchObject({ 'notice.policy.decision': 'proceed' });
    expect(one(spans, 'notice.token_wait').attributes).toMatchObject({ 'notice.token.taken': true });
    expect(one(spans, 'notice.claim').attributes).toMatchObject({ 'notice.claim.won': true, 'notice.claim.reclaimed': false });
    expect(one(spans, 'notice.send').attributes).toMatchObject({ 'notice.send.outcome': 'accepted' });
    expect(one(spans, 'queue.settle').attributes).toMatchObject({ 'notice.settlement': 'ack' });
    // The provider's evidence: the webhook request and the events it stored, by correlation.
    const receive = one(spans, 'webhook.receive');
    expect(receive.attributes).toMatchObject({ 'webhook.provider': 'generic', 'webhook.received': 1 });
    const ingest = one(spans, 'evidence.ingest');
    expect(parentOf(ingest)).toBe(idOf(receive));
    expect(ingest.attributes).toMatchObject({ 'evidence.received': 1, 'evidence.stored': 1, 'evidence.linked': 1 });
    expect(ingest.events.map((event) => event.attributes)).toEqual([{ 'evidence.type': 'delivered', 'notice.correlation': correlation }]);
    const reconcile = one(spans, 'evidence.reconcile');
    expect(parentOf(reconcile)).toBeUndefined();
    expect(reconcile.attributes).toMatchObject({ 'evidence.confirmed': 0 });

    // Nothing personal or secret in any span: walk every string of every span.
    const forbidden = [
      email,
      email.toLowerCase(),
      'Trace.Person',
      'trace.person',
      ledger.oneTimeCode,
      job.noticeKey,
      payload.customer_name,
      payload.plan_name,
      payload.amount,
      payload.reference,
      token,
      process.env.NOTICE_KEY_SECRET ?? 'unset',
    ];
    const bodyLines = message.raw
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.length >= 12 && !line.includes(correlation) && !/^[\w-]+:/.test(line));
    expect(bodyLines.length).toBeGreaterThan(0);
    for (const span of spans) {
      for (const text of textsOf(span)) {
        for (const value of [...forbidden, ...bodyLines]) expect(text, `span ${span.name}`).not.toContain(value);
      }
    }
  });
  it('an event: producer request → event.receive → one notice.schedule per planned notice, each job holding its own span as traceparent', async () => {
    exporter.reset();
    const year = new Date().getUTCFullYear() + 1;
    const request = new Request('http://localhost/api/v1/events', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        type: 'subscription.renewal',
        identity: { subscription_id: 'sub_trace', period_start: `${year}-03-01` },
        anchorAt: `${year}-03-01T17:00:00Z`,
        recipient: { email, region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US' },
        contract: { termMonths: 12 },
        payload,
      }),
    });
    const response = await eventsRoute(request, {});
    expect(response.status).toBe(201);
    const answer = (await response.json()) as { planned: { jobId: string }[] };
    expect(answer.planned.length).toBeGreaterThan(0);

    const spans = exporter.getFinishedSpans();
    const producer = one(spans, 'producer.request');
    expect(producer.attributes).toMatchObject({ 'http.route': '/api/v1/events', 'http.response.status_code': 201 });
    const receive = one(spans, 'event.receive');
    expect(parentOf(receive)).toBe(idOf(producer));
    expect(receive.attributes).toMatchObject({
      'event.type': 'subscription.renewal',
      'event.receive.result': 'created',
      'event.planned': answer.planned.length,
    });
    const schedules = byName(spans, 'notice.schedule');
    expect(schedules.map((span) => span.attributes['notice.job_id']).sort()).toEqual(answer.planned.map((notice) => notice.jobId).sort());
    for (const span of schedules) {
      expect(parentOf(span)).toBe(idOf(receive));
      const job = await readJob(t.db, String(span.attributes['notice.job_id']));
      expect(job.traceparent).toBe(`00-${span.spanContext().traceId}-${idOf(span)}-01`);
      expect(span.attributes['notice.correlation']).toBe(correlationOf(job.noticeKey));
    }
    for (const span of spans) {
      for (const text of textsOf(span))
        for (const value of [email, email.toLowerCase(), payload.customer_name, payload.plan_name, payload.amount, payload.reference])
          expect(text).not.toContain(value);
    }
  });
});
