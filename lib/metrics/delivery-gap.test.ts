import { createServer, type Server } from 'node:http';
import nodemailer from 'nodemailer';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { insertClaimedNotice } from '@/testing/provider-events';
import { correlationOf, messageIdFor, noticeKey } from '@/lib/ledger/notice-key';
import { commitSent } from '@/db/queries/ledger/commit';
import { loadOverviewCharts } from '@/lib/console/overview-charts';
import { refreshDeliveryGauges } from './delivery-gap';
import { writeOverviewSample, type OverviewSampleSettings } from './overview-writer';
import { registry } from './registry';

/**
 * Accepted vs delivered from our own hand-over, end to end through the real SMTP sink and the
 * generic webhook route: the sink reports delivery for only some messages (it bounces the rest),
 * and the overview chart's data, its table and the Prometheus gauge show the same gap. A relay
 * that sends no events at all shows "no delivery evidence" (null, no gap series), never 0.
 */

const secret = 'delivery-gap-webhook-secret-0123456789abcdef';
const savedEnv = { DATABASE_URL: process.env.DATABASE_URL, WEBHOOK_SECRET: process.env.WEBHOOK_SECRET };
let server: Server;
let port = 0;
let serial = 0;

const settings = (noticeTypes: string[] = ['renewal_notice_t72']): OverviewSampleSettings => ({
  everyMs: 60_000,
  retentionMs: 8 * 86_400_000,
  quarantineAfterMs: 15 * 60_000,
  emailProvider: 'smtp',
  noticeTypes,
});

beforeAll(async () => {
  process.env.WEBHOOK_SECRET = secret;
  server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') headers.set(name, value);
      void import('@/app/api/webhooks/generic/route').then(async ({ POST }) => {
        const response = await POST(new Request(`http://127.0.0.1${incoming.url ?? '/'}`, { method: 'POST', headers, body: Buffer.concat(chunks) }));
        outgoing.writeHead(response.status, { 'content-type': 'application/json' }).end(await response.text());
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** A claimed notice committed `sent` by the ledger's own statement, then handed to the sink. */
async function handOver(t: TestDatabase, sink: SmtpSink, email: string): Promise<string> {
  serial += 1;
  const key = noticeKey(process.env.NOTICE_KEY_SECRET ?? '', {
    type: 'renewal_notice_t72',
    identity: { subscription_id: `sub_gap_${serial}`, period_start: '2026-12-01' },
    revision: 0,
  });
  const jobId = await insertClaimedNotice(t.db, { noticeKey: key, email, claimedAt: new Date() });
  const claim = await t.pool.query<{ claim_token: string }>('select claim_token from notice_ledger where notice_key = $1', [key]);
  const owned = await commitSent(t.db, {
    noticeKey: key,
    claimToken: claim.rows[0]?.claim_token ?? null,
    providerMessageId: null,
    jobId,
    workerId: 'w-gap',
    startedAt: new Date(Date.now() - 1_000),
    queueMessageId: null,
    batchId: null,
    correlationId: null,
    claimToCommitMs: 12,
    mode: 'enforce',
  });
  expect(owned).toBe(true);
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: sink.port, secure: false, ignoreTLS: true, socketTimeout: 3_000 });
  try {
    await transport.sendMail({
      from: 'notices@notices.localhost',
      to: email,
      subject: 'Your subscription renews in 3 days',
      text: 'hello',
      messageId: messageIdFor(key, 'notices.localhost'),
      headers: { 'X-Notice-Correlation': correlationOf(key) },
    });
  } finally {
    transport.close();
  }
  return key;
}

async function gaugeLines(): Promise<string> {
  const names = ['notice_ledger_handed_over', 'notice_ledger_delivered', 'notice_ledger_delivery_gap', 'notice_ledger_delivery_evidence'];
  return (await Promise.all(names.map((name) => registry.getSingleMetricAsString(name)))).join('\n');
}

describe('a relay that reports delivery for some messages', () => {
  let t: TestDatabase;
  let sink: SmtpSink;

  beforeAll(async () => {
    t = await createTestDatabase();
    process.env.DATABASE_URL = t.url;
    // Mail to bounce.* bounces: no delivered event for it, as a provider reports a bounce.
    sink = await startSmtpSink({
      eventsUrl: `http://127.0.0.1:${port}/api/webhooks/generic`,
      eventsSecret: secret,
      eventDelayMs: 10,
      bounce: (recipient) => recipient.startsWith('bounce'),
    });
  });
  afterAll(async () => {
    await sink.stop();
    const { getDb } = await import('@/lib/process-db');
    await getDb().$client.end();
    await t.drop();
  });

  it('chart data, table and metric show the same gap: 5 handed over, 3 delivered, gap 2', async () => {
    for (const email of ['a@example.com', 'b@example.com', 'c@example.com', 'bounce1@example.com', 'bounce2@example.com']) await handOver(t, sink, email);
    await sink.flushEvents();
    await vi.waitFor(
      async () => {
        const events = await t.pool.query<{ n: number }>(
          "select count(*)::int as n from provider_events where notice_key is not null and event_type in ('delivered', 'bounce')",
        );
        expect(events.rows[0]?.n).toBe(5);
      },
      { timeout: 10_000, interval: 50 },
    );

    const now = new Date();
    const outcome = await writeOverviewSample(t.db, { now, settings: settings() });
    expect(outcome.written).toBe(true);

    const charts = await loadOverviewCharts(t.db, { now: new Date(now.getTime() + 1), range: '1h' });
    const table = charts.delivery.rows;
    expect(table).toEqual([{ channel: 'email', provider: 'smtp', handedOver: 5, delivered: 3, gap: 2 }]);
    const point = charts.points.findLast((entry) => Object.keys(entry.delivery).length > 0);
    expect(point?.delivery['email/smtp']).toEqual({ handedOver: 5, delivered: 3 });
    expect(charts.deliveryKeys).toEqual(['email/smtp']);

    await refreshDeliveryGauges(t.db, { now });
    const text = await gaugeLines();
    expect(text).toContain('notice_ledger_handed_over{channel="email",provider="smtp"} 5');
    expect(text).toContain('notice_ledger_delivered{channel="email",provider="smtp"} 3');
    expect(text).toContain('notice_ledger_delivery_gap{channel="email",provider="smtp"} 2');
    expect(text).toContain('notice_ledger_delivery_evidence{channel="email",provider="smtp"} 1');
  });

  it('a second writer within half the period writes nothing: the points are not doubled', async () => {
    const before = await t.pool.query<{ n: number }>('select count(*)::int as n from overview_samples');
    const outcome = await writeOverviewSample(t.db, { now: new Date(), settings: settings() });
    expect(outcome).toEqual({ written: false, reason: 'recent' });
    const after = await t.pool.query<{ n: number }>('select count(*)::int as n from overview_samples');
    expect(after.rows[0]?.n).toBe(before.rows[0]?.n);
  });

  it('SMS handed over with no Twilio delivery events is "no delivery evidence" beside the email gap, never 0', async () => {
    const key = await handOver(t, sink, 'd@example.com');
    await t.db.execute(sql`update reminder_jobs set channel = 'sms', recipient_phone = '+14155550100' where notice_key = ${key}`);
    // Its sink events (email) are removed: this SMS has no provider word at all.
    await sink.flushEvents();
    await t.db.execute(sql`delete from provider_events where notice_key = ${key}`);
    const now = new Date(Date.now() + 61_000);
    expect((await writeOverviewSample(t.db, { now, settings: settings() })).written).toBe(true);
    const charts = await loadOverviewCharts(t.db, { now: new Date(now.getTime() + 1), range: '1h' });
    expect(charts.delivery.rows).toEqual([
      { channel: 'email', provider: 'smtp', handedOver: 5, delivered: 3, gap: 2 },
      { channel: 'sms', provider: 'twilio', handedOver: 1, delivered: null, gap: null },
    ]);
    expect(charts.points.findLast((entry) => entry.delivery['sms/twilio'])?.delivery['sms/twilio']).toEqual({ handedOver: 1, delivered: null });
    await refreshDeliveryGauges(t.db, { now });
    const text = await gaugeLines();
    expect(text).toContain('notice_ledger_delivery_evidence{channel="sms",provider="twilio"} 0');
    expect(text).toContain('notice_ledger_handed_over{channel="sms",provider="twilio"} 1');
    expect(text).not.toMatch(/notice_ledger_delivery_gap\{channel="sms"/);
    expect(text).not.toMatch(/notice_ledger_delivered\{channel="sms"/);
  });
});

describe('a relay with no webhooks', () => {
  let t: TestDatabase;
  let sink: SmtpSink;

  beforeAll(async () => {
    t = await createTestDatabase();
    sink = await startSmtpSink({});
  });
  afterAll(async () => {
    await sink.stop();
    await t.drop();
  });

  it('shows "no delivery evidence" in the chart data, the table and the metric, never a gap or 0 delivered', async () => {
    for (const email of ['e@example.com', 'f@example.com']) await handOver(t, sink, email);
    expect(sink.messages()).toHaveLength(2);
    // Another provider's delivery events (an earlier SES setup) are no evidence for this relay.
    await t.pool.query(
      "insert into provider_events (provider, event_id, event_type, raw_type, notice_key, occurred_at) values ('ses', 'ses-old-1', 'delivered', 'Delivery', 'k_other', now() - interval '1 day')",
    );
    const now = new Date();
    expect((await writeOverviewSample(t.db, { now, settings: settings() })).written).toBe(true);
    const charts = await loadOverviewCharts(t.db, { now: new Date(now.getTime() + 1), range: '1h' });
    expect(charts.delivery.rows).toEqual([{ channel: 'email', provider: 'smtp', handedOver: 2, delivered: null, gap: null }]);
    expect(charts.points.findLast((entry) => entry.delivery['email/smtp'])?.delivery['email/smtp']).toEqual({ handedOver: 2, delivered: null });
    await refreshDeliveryGauges(t.db, { now });
    const text = await gaugeLines();
    expect(text).toContain('notice_ledger_delivery_evidence{channel="email",provider="smtp"} 0');
    expect(text).not.toMatch(/notice_ledger_delivery_gap\{/);
  });
});
