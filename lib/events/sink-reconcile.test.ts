import { createServer, type Server } from 'node:http';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { countAcceptedVsDelivered } from '@/db/queries/events';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { correlationOf, messageIdFor, noticeKey } from '@/lib/ledger/notice-key';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { startMetricsServer } from '@/worker/metrics-server';
import { createLogger } from '@/lib/log';
import { insertClaimedNotice } from '@/testing/provider-events';
import { queueNotUnderTest } from '@/testing/metrics-endpoints';

/**
 * The crash window end to end: a worker claimed, handed the mail to the relay and died before
 * committing. The relay (our real SMTP sink) posts its signed event to the console's route
 * handler, and the claim becomes `sent` without anyone touching it.
 */

const secret = 'sink-to-console-secret-0123456789abcdef';
let t: TestDatabase;
let server: Server;
let sink: SmtpSink;
let posts = 0;
const metricsToken = 'sink-metrics-token-0123456789';
const savedEnv = { DATABASE_URL: process.env.DATABASE_URL, WEBHOOK_SECRET: process.env.WEBHOOK_SECRET, METRICS_TOKEN: process.env.METRICS_TOKEN };

const keyFor = (subscription: string) =>
  noticeKey(process.env.NOTICE_KEY_SECRET ?? '', {
    type: 'renewal_notice_t72',
    identity: { subscription_id: subscription, period_start: '2026-12-01' },
    revision: 0,
  });

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  process.env.WEBHOOK_SECRET = secret;
  process.env.METRICS_TOKEN = metricsToken;
  const { POST } = await import('@/app/api/webhooks/generic/route');
  server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      posts += 1;
      const headers = new Headers();
      for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') headers.set(name, value);
      void POST(new Request(`http://127.0.0.1${incoming.url ?? '/'}`, { method: 'POST', headers, body: Buffer.concat(chunks) })).then(async (response) => {
        outgoing.writeHead(response.status, { 'content-type': 'application/json' }).end(await response.text());
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  sink = await startSmtpSink({ eventsUrl: `http://127.0.0.1:${port}/api/webhooks/generic`, eventsSecret: secret, eventDelayMs: 20 });
});

afterAll(async () => {
  await sink.stop();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function state(key: string): Promise<{ ledger: string | undefined; job: string | undefined }> {
  const ledger = await t.pool.query<{ state: string }>('select state from notice_ledger where notice_key = $1', [key]);
  const job = await t.pool.query<{ state: string }>('select state from reminder_jobs where notice_key = $1', [key]);
  return { ledger: ledger.rows[0]?.state, job: job.rows[0]?.state };
}

function sendAs(key: string, to: string) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: sink.port, secure: false, ignoreTLS: true, socketTimeout: 3_000 });
  return transport
    .sendMail({
      from: 'notices@notices.localhost',
      to,
      subject: 'Your subscription renews in 3 days',
      text: 'hello',
      messageId: messageIdFor(key, 'notices.localhost'),
      headers: { 'X-Notice-Correlation': correlationOf(key) },
    })
    .finally(() => transport.close());
}

/**
 * promtool's naming rules that apply here: a counter ends in _total, nothing else does. Only
 * our own metrics: prom-client's default process metrics name three gauges `…_total`.
 */
function expectPrometheusNaming(text: string): void {
  const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)]
    .map(([, name, type]) => ({ name: name ?? '', type }))
    .filter(({ name }) => !name.startsWith('notice_ledger_process_'));
  expect(types.length).toBeGreaterThan(0);
  for (const { name, type } of types) {
    expect(name, name).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/);
    if (type === 'counter') expect(name, name).toMatch(/_total$/);
    else expect(name, `${type} ${name}`).not.toMatch(/_total$/);
  }
}

describe('a claim whose worker died after the hand-over', () => {
  it('is confirmed sent by the sink event; claims with no event stay claimed', async () => {
    const handedOver = keyFor('sub_handed_over');
    const neverSent = keyFor('sub_never_sent');
    const cutOff = keyFor('sub_cut_off');
    // Claimed a moment ago, well before QUARANTINE_AFTER: evidence may confirm it already.
    await insertClaimedNotice(t.db, { noticeKey: handedOver, email: 'alice@example.com', claimedAt: new Date() });
    await insertClaimedNotice(t.db, { noticeKey: neverSent, email: 'bob@example.com' });
    await insertClaimedNotice(t.db, { noticeKey: cutOff, email: 'carol@example.com' });

    await sendAs(handedOver, 'alice@example.com');
    // The relay read the whole message and the connection died before its reply: it may be
    // out, but no provider evidence ever arrives for it.
    sink.setFault({ kind: 'drop-after-data', times: 1 });
    await expect(sendAs(cutOff, 'carol@example.com')).rejects.toThrow();

    await vi.waitFor(async () => expect(await state(handedOver)).toEqual({ ledger: 'sent', job: 'sent' }), { timeout: 10_000, interval: 50 });
    await sink.flushEvents();
    expect(sink.postedEvents().every((p) => p.status === 200)).toBe(true);
    expect(posts).toBe(1);
    expect(sink.countByCorrelation(correlationOf(cutOff))).toBe(1);
    expect(await state(neverSent)).toEqual({ ledger: 'claimed', job: 'claimed' });
    expect(await state(cutOff)).toEqual({ ledger: 'claimed', job: 'claimed' });

    const evidence = await t.pool.query<{ event_type: string; provider_message_id: string }>(
      'select event_type, provider_message_id from provider_events where notice_key = $1 order by event_type',
      [handedOver],
    );
    const queueId = sink.messages().find((m) => m.correlation === correlationOf(handedOver))?.queueId;
    expect(evidence.rows).toEqual([
      { event_type: 'accepted', provider_message_id: queueId },
      { event_type: 'delivered', provider_message_id: queueId },
    ]);
    const ledger = await t.pool.query<{ provider_message_id: string; resolution: string }>(
      'select provider_message_id, resolution from notice_ledger where notice_key = $1',
      [handedOver],
    );
    expect(ledger.rows[0]).toEqual({ provider_message_id: queueId, resolution: 'provider_evidence' });
  });

  it('counts what the providers reported per provider and notice type, and both processes export it: the worker /metrics and the console /api/metrics', async () => {
    const pending = keyFor('sub_accepted_only');
    await insertClaimedNotice(t.db, { noticeKey: pending, email: 'dave@example.com' });
    const { POST } = await import('@/app/api/webhooks/generic/route');
    const { signGenericRequest } = await import('./generic-signature');
    const postEvent = async (event: { id: string; type: 'accepted' | 'delivered' | 'complaint' }) => {
      const body = JSON.stringify({
        events: [{ ...event, correlation: correlationOf(pending), recipient: 'dave@example.com', occurredAt: new Date().toISOString() }],
      });
      const response = await POST(
        new Request('http://127.0.0.1/api/webhooks/generic', { method: 'POST', body, headers: signGenericRequest({ secret, body }) }),
      );
      expect(response.status).toBe(200);
    };
    await postEvent({ id: 'acc-only', type: 'accepted' });

    const rows = await countAcceptedVsDelivered(t.db, { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 1_000) });
    expect(rows).toEqual([{ provider: 'generic', noticeType: 'renewal_notice_t72', accepted: 2, delivered: 1, bounced: 0, complained: 0, gap: 1 }]);
    expect(await countAcceptedVsDelivered(t.db, { from: new Date(Date.now() + 60_000), to: new Date(Date.now() + 120_000) })).toEqual([]);

    // notice_ledger_delivery_gap is the hand-over definition from stored samples (lib/metrics/delivery-gap.test.ts); none are written here.
    const messages = (status: string, value: number) =>
      `notice_ledger_provider_messages{channel="email",provider="generic",notice_type="renewal_notice_t72",status="${status}"} ${value}`;
    const worker = await startMetricsServer({
      queue: queueNotUnderTest,
      host: '127.0.0.1',
      port: 0,
      db: t.db,
      quarantineAfterMs: 15 * 60_000,
      logger: createLogger('metrics-test', 'silent'),
    });
    try {
      const scraped = await fetch(`http://127.0.0.1:${worker.port}/metrics`);
      expect(scraped.status).toBe(200);
      const workerText = await scraped.text();
      expect(workerText).toContain(messages('accepted', 2));
      expect(workerText).toContain(messages('delivered', 1));
      expect(workerText).toMatch(/^# TYPE notice_ledger_delivery_gap gauge$/m);

      // The figures move between scrapes, so each answer shows its own read, not the other's.
      await postEvent({ id: 'acc-only-delivered', type: 'delivered' });
      const { GET } = await import('@/app/api/metrics/route');
      const consoleResponse = await GET(new Request('http://127.0.0.1/api/metrics', { headers: { authorization: `Bearer ${metricsToken}` } }));
      expect(consoleResponse.status).toBe(200);
      const consoleText = await consoleResponse.text();
      expect(consoleText).toContain(messages('delivered', 2));

      await postEvent({ id: 'acc-only-complaint', type: 'complaint' });
      const again = await (await fetch(`http://127.0.0.1:${worker.port}/metrics`)).text();
      expect(again).toContain(messages('complained', 1));
      for (const text of [workerText, consoleText, again]) expectPrometheusNaming(text);
    } finally {
      await worker.close();
    }
  });
});
