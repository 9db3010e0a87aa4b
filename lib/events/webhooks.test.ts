import { createPublicKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { findRecipientSuppression } from '@/db/queries/suppressions';
import { signGenericRequest } from './generic-signature';
import { confirmClaimSentByEvidence, reconcileQuarantine } from './ingest';
import { registry } from '@/lib/metrics/registry';
import {
  createTestSendgridSigner,
  createTestSnsSigner,
  insertClaimedNotice,
  keyWithCorrelation,
  readFixture,
  type TestSnsSigner,
} from '@/testing/provider-events';
import { providerRoutes } from '@/lib/api/webhooks';
import type { ProviderContract } from '@/lib/http/contract';
import { providerRoute } from '@/lib/http/provider-route';
import type { WebhookSettings } from './webhook';
import type { WebhookProvider } from '@/lib/api/fields';

const secret = 'generic-webhook-secret-0123456789abcdef';
const topic = 'arn:aws:sns:us-east-1:123456789012:ses-events';
const sendgrid = createTestSendgridSigner();
let sns: TestSnsSigner;
let t: TestDatabase;
let settings: WebhookSettings;

beforeAll(async () => {
  t = await createTestDatabase();
  sns = createTestSnsSigner();
  settings = {
    webhookSecret: secret,
    postmarkUser: 'hook',
    postmarkPassword: 'pass-word',
    sendgridPublicKey: sendgrid.publicKeyBase64,
    snsTopicArns: [topic],
    snsKeyResolver: async () => createPublicKey(sns.certificatePem),
  };
});
afterAll(async () => {
  await t.drop();
});

async function count(table: string, where = 'true', params: unknown[] = []): Promise<number> {
  const result = await t.pool.query<{ n: number }>(`select count(*)::int as n from ${table} where ${where}`, params);
  return result.rows[0]?.n ?? 0;
}

async function ledger(noticeKey: string) {
  const result = await t.pool.query<{ state: string; resolution: string | null; sent_at: Date | null; provider_message_id: string | null }>(
    'select state, resolution, sent_at, provider_message_id from notice_ledger where notice_key = $1',
    [noticeKey],
  );
  const job = await t.pool.query<{ state: string }>('select state from reminder_jobs where notice_key = $1', [noticeKey]);
  return { ...result.rows[0], job: job.rows[0]?.state };
}

function webhookContractFor(provider: WebhookProvider): ProviderContract {
  const contract: ProviderContract | undefined = providerRoutes.find((candidate) => candidate.provider === provider);
  if (!contract) throw new Error(`no webhook route for ${provider}`);
  return contract;
}

function post(provider: WebhookProvider, body: string, headers: Record<string, string>) {
  const request = new Request(`http://console.test/api/webhooks/${provider}`, { method: 'POST', body, headers });
  return providerRoute(webhookContractFor(provider), { settings: () => settings, db: () => t.db })(request);
}

const genericHeaders = (body: string, now = new Date()) => signGenericRequest({ secret, body, now });
const postmarkHeaders = (user = 'hook', password = 'pass-word') => ({
  'content-type': 'application/json',
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
const sendgridHeaders = (body: string, at = Math.floor(Date.now() / 1000)) => sendgrid.sign(body, at);
function snsBody(
  fixture: string,
  { at = new Date(), messageId = `sns-${fixture}`, message = readFixture(fixture) }: { at?: Date; messageId?: string; message?: string } = {},
) {
  return JSON.stringify(sns.sign({ Type: 'Notification', MessageId: messageId, TopicArn: topic, Message: message, Timestamp: at.toISOString() }));
}
const snsHeaders = { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' };

type Case = {
  provider: WebhookProvider;
  correlation: string;
  accepted: () => { body: string; headers: Record<string, string> };
  forged: () => { body: string; headers: Record<string, string> };
  stale: (() => { body: string; headers: Record<string, string> }) | null;
  malformed: () => { body: string; headers: Record<string, string> };
  bounce: () => { body: string; headers: Record<string, string> };
  bouncedEmail: string;
};

const cases: Case[] = [
  {
    provider: 'generic',
    correlation: '9e9000000000000000000000000000d4',
    accepted: () => {
      const body = readFixture('generic-events.json');
      return { body, headers: genericHeaders(body) };
    },
    forged: () => {
      const body = readFixture('generic-events.json');
      return { body, headers: signGenericRequest({ secret: 'another-secret-0123456789abcdef0123456', body }) };
    },
    stale: () => {
      const body = readFixture('generic-events.json');
      return { body, headers: genericHeaders(body, new Date(Date.now() - 10 * 60_000)) };
    },
    malformed: () => {
      const body = JSON.stringify({ events: [{ id: 'e1', type: 'accepted' }] });
      return { body, headers: genericHeaders(body) };
    },
    bounce: () => {
      const body = readFixture('generic-events.json');
      return { body, headers: genericHeaders(body) };
    },
    bouncedEmail: 'bounce@example.com',
  },
  {
    provider: 'postmark',
    correlation: '7a7000000000000000000000000000d2',
    accepted: () => ({ body: readFixture('postmark-delivery.json'), headers: postmarkHeaders() }),
    forged: () => ({ body: readFixture('postmark-delivery.json'), headers: postmarkHeaders('hook', 'wrong') }),
    stale: null,
    malformed: () => ({ body: '{"RecordType":"Delivery"', headers: postmarkHeaders() }),
    bounce: () => ({ body: readFixture('postmark-bounce.json'), headers: postmarkHeaders() }),
    bouncedEmail: 'john@example.com',
  },
  {
    provider: 'sendgrid',
    correlation: '5a5000000000000000000000000000d3',
    accepted: () => {
      const body = readFixture('sendgrid-events.json');
      return { body, headers: sendgridHeaders(body) };
    },
    forged: () => {
      const body = readFixture('sendgrid-events.json');
      return { body, headers: createTestSendgridSigner().sign(body, Math.floor(Date.now() / 1000)) };
    },
    stale: () => {
      const body = readFixture('sendgrid-events.json');
      return { body, headers: sendgridHeaders(body, Math.floor(Date.now() / 1000) - 3_600) };
    },
    // A malformed event inside an array is skipped, not refused (see the partial batch below):
    // what is refused is a body that is not an event array at all.
    malformed: () => {
      const body = JSON.stringify({ event: 'delivered', email: 'x@y.z' });
      return { body, headers: sendgridHeaders(body) };
    },
    bounce: () => {
      const body = readFixture('sendgrid-events.json');
      return { body, headers: sendgridHeaders(body) };
    },
    bouncedEmail: 'bounced@test.com',
  },
  {
    provider: 'ses',
    correlation: '5e5000000000000000000000000000d1',
    accepted: () => ({ body: snsBody('ses-delivery.json'), headers: snsHeaders }),
    forged: () => {
      const signed = JSON.parse(snsBody('ses-delivery.json')) as Record<string, string>;
      return {
        body: JSON.stringify({ ...signed, Message: (signed.Message ?? '').replace('recipient@example.com', 'other@example.com') }),
        headers: snsHeaders,
      };
    },
    stale: () => ({ body: snsBody('ses-delivery.json', { at: new Date(Date.now() - 3 * 3_600_000) }), headers: snsHeaders }),
    malformed: () => ({ body: snsBody('ses-delivery.json', { message: '{"eventType":"Delivery"}' }), headers: snsHeaders }),
    bounce: () => ({ body: snsBody('ses-bounce.json'), headers: snsHeaders }),
    bouncedEmail: 'recipient@example.com',
  },
];

describe.each(cases)('$provider webhook', (c) => {
  const noticeKey = keyWithCorrelation(c.correlation);
  const events = (where = 'true') => count('provider_events', `provider = '${c.provider}' and ${where}`);

  beforeAll(async () => {
    await insertClaimedNotice(t.db, { noticeKey, email: c.bouncedEmail });
  });

  it('rejects a forged signature / credentials with 401, stores nothing and counts it for the alert', async () => {
    const { body, headers } = c.forged();
    const before = await rejectedCounter(c.provider, 'unauthenticated');
    const response = await post(c.provider, body, headers);
    expect(response.status).toBe(401);
    expect(await rejectedCounter(c.provider, 'unauthenticated')).toBe(before + 1);
    expect(await events()).toBe(0);
    expect((await ledger(noticeKey)).state).toBe('claimed');
  });

  // Postmark signs nothing and sends no timestamp: its replays are absorbed by the event id.
  const stale = c.stale;
  if (stale) {
    it('rejects a stale timestamp with 401 and stores nothing', async () => {
      const { body, headers } = stale();
      const response = await post(c.provider, body, headers);
      expect(response.status).toBe(401);
      expect(await events()).toBe(0);
    });
  }

  it('rejects a malformed body with 400 and stores nothing', async () => {
    const { body, headers } = c.malformed();
    const response = await post(c.provider, body, headers);
    expect(response.status).toBe(400);
    expect(await response.json()).toHaveProperty('error');
    expect(await events()).toBe(0);
  });

  it('accepts the documented example, links it and confirms the claimed row as sent', async () => {
    const { body, headers } = c.accepted();
    const response = await post(c.provider, body, headers);
    expect(response.status).toBe(200);
    expect(await events(`notice_key = '${noticeKey}' and event_type in ('accepted', 'delivered')`)).toBeGreaterThanOrEqual(1);
    const row = await ledger(noticeKey);
    expect(row).toMatchObject({ state: 'sent', resolution: 'provider_evidence', job: 'sent' });
    expect(row.sent_at).toBeInstanceOf(Date);
    const audit = await t.pool.query<{ actor: string; reason: string; after: { evidenceEventId: string } }>(
      "select actor, reason, after from audit_log where target_id = $1 and action = 'ledger.confirm_sent'",
      [noticeKey],
    );
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]).toMatchObject({ actor: 'system:reconciler', reason: 'resolved by provider evidence' });
    expect(audit.rows[0]?.after.evidenceEventId).toMatch(new RegExp(`^${c.provider}:`));
  });

  it('stores the same event posted twice once', async () => {
    const before = await events();
    const { body, headers } = c.accepted();
    const response = await post(c.provider, body, headers);
    expect(response.status).toBe(200);
    const summary = (await response.json()) as { stored: number; duplicates: number; confirmed: number };
    expect(summary.stored).toBe(0);
    expect(summary.duplicates).toBeGreaterThan(0);
    expect(summary.confirmed).toBe(0);
    expect(await events()).toBe(before);
    expect(await count('audit_log', 'target_id = $1', [noticeKey])).toBe(1);
  });

  it('adds a hard-bounced recipient to the suppression list with the reason', async () => {
    const { body, headers } = c.bounce();
    const response = await post(c.provider, body, headers);
    expect(response.status).toBe(200);
    const suppression = await findRecipientSuppression(t.db, { email: c.bouncedEmail.toUpperCase() });
    expect(suppression).toMatchObject({ email: c.bouncedEmail, reason: 'hard_bounce' });
    expect(suppression?.sourceEventId).toMatch(new RegExp(`^${c.provider}:`));
    expect(await count('provider_events', 'event_id = $1', [suppression?.sourceEventId?.slice(c.provider.length + 1)])).toBe(1);
  });
});

async function rejectedCounter(provider: string, reason: string): Promise<number> {
  const metric = await registry.getSingleMetric('notice_ledger_webhook_requests_rejected_total')?.get();
  return metric?.values.find((value) => value.labels.provider === provider && value.labels.reason === reason)?.value ?? 0;
}

async function skippedCounter(reason: string): Promise<number> {
  const metric = await registry.getSingleMetric('notice_ledger_webhook_events_skipped_total')?.get();
  return metric?.values.find((value) => value.labels.provider === 'sendgrid' && value.labels.reason === reason)?.value ?? 0;
}

describe('sendgrid: a batch with malformed events among valid ones', () => {
  it('stores the valid events, answers 200 naming each skipped one by index, id and reason, never by content', async () => {
    const noticeKey = keyWithCorrelation('5a5000000000000000000000000000f7');
    await insertClaimedNotice(t.db, { noticeKey, email: 'partial@example.com' });
    const valid = (id: string, event: string) => ({
      email: 'partial@example.com',
      timestamp: 1513299569,
      event,
      sg_event_id: id,
      sg_message_id: 'partial.filter0001.1',
      notice_correlation: noticeKey.slice(0, 32),
    });
    const batch = [
      valid('partial-processed', 'processed'),
      { email: 'no-id-person@example.com', timestamp: 1513299569, event: 'delivered', reason: 'do-not-echo-this-text' },
      valid('partial-delivered', 'delivered'),
      42,
      { ...valid('partial-bad-time', 'delivered'), email: 'bad-time-person@example.com', timestamp: 'yesterday' },
      { ...valid('x'.repeat(201), 'delivered'), email: 'long-id-person@example.com' },
    ];
    const before = {
      missing: await skippedCounter('missing_event_id'),
      object: await skippedCounter('not_an_object'),
      field: await skippedCounter('invalid_field'),
      id: await skippedCounter('invalid_event_id'),
    };
    const body = JSON.stringify(batch);
    const response = await post('sendgrid', body, sendgridHeaders(body));
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      received: 6,
      stored: 2,
      duplicates: 0,
      confirmed: 1,
      skippedCount: 4,
      skipped: [
        { index: 1, eventId: null, reason: 'missing_event_id', detail: expect.stringMatching(/^sg_event_id: /) },
        { index: 3, eventId: null, reason: 'not_an_object', detail: 'event is not a JSON object' },
        { index: 4, eventId: 'partial-bad-time', reason: 'invalid_field', detail: expect.stringMatching(/^timestamp: /) },
        { index: 5, eventId: null, reason: 'invalid_event_id', detail: expect.stringMatching(/^sg_event_id: /) },
      ],
    });
    for (const content of ['no-id-person', 'bad-time-person', 'long-id-person', 'do-not-echo-this-text', 'yesterday', 'xxxxxxxx'])
      expect(text).not.toContain(content);
    expect(await count('provider_events', "provider = 'sendgrid' and notice_key = $1", [noticeKey])).toBe(2);
    expect(await count('provider_events', "provider = 'sendgrid' and event_id like 'partial-%'")).toBe(2);
    expect(await count('provider_events', "recipient like '%-person@example.com'")).toBe(0);
    expect(await ledger(noticeKey)).toMatchObject({ state: 'sent', resolution: 'provider_evidence', job: 'sent' });
    expect({
      missing: await skippedCounter('missing_event_id'),
      object: await skippedCounter('not_an_object'),
      field: await skippedCounter('invalid_field'),
      id: await skippedCounter('invalid_event_id'),
    }).toEqual({
      missing: before.missing + 1,
      object: before.object + 1,
      field: before.field + 1,
      id: before.id + 1,
    });

    // SendGrid's retry of the same batch (it retries any non-2xx) changes nothing more.
    const retry = (await (await post('sendgrid', body, sendgridHeaders(body))).json()) as { stored: number; duplicates: number; skippedCount: number };
    expect(retry).toMatchObject({ stored: 0, duplicates: 2, skippedCount: 4 });
    expect(await count('provider_events', "provider = 'sendgrid' and event_id like 'partial-%'")).toBe(2);
  });

  it('still refuses, storing nothing, a body that is not an event array or whose signature fails', async () => {
    const before = await count('provider_events', "provider = 'sendgrid'");
    for (const body of ['[]', '{"events":[]}', '"text"', '[{"email":"a@b.c"']) {
      const response = await post('sendgrid', body, sendgridHeaders(body));
      expect(response.status, body).toBe(400);
    }
    const body = JSON.stringify([{ email: 'forged@example.com', timestamp: 1513299569, event: 'delivered', sg_event_id: 'forged-1' }, { event: 'delivered' }]);
    const forged = await post('sendgrid', body, createTestSendgridSigner().sign(body, Math.floor(Date.now() / 1000)));
    expect(forged.status).toBe(401);
    expect(await count('provider_events', "provider = 'sendgrid'")).toBe(before);
  });
});

describe('linking and reconciliation', () => {
  it('links an SES event by provider message id when the tag is missing', async () => {
    const sesId = 'SESONLY-0000-provider-id-000001';
    const noticeKey = keyWithCorrelation('0d0000000000000000000000000000e1');
    await insertClaimedNotice(t.db, { noticeKey, email: 'tagless@example.com', providerMessageId: sesId });
    const event = JSON.parse(readFixture('ses-send.json')) as { mail: Record<string, unknown> };
    event.mail.tags = { 'ses:configuration-set': ['ConfigSet'] };
    event.mail.headers = [];
    event.mail.messageId = sesId;
    const response = await post('ses', snsBody('ses-send.json', { messageId: 'sns-tagless', message: JSON.stringify(event) }), snsHeaders);
    expect(response.status).toBe(200);
    expect(await ledger(noticeKey)).toMatchObject({ state: 'sent', job: 'sent' });
  });

  it('stores an event that cannot be linked yet; reconcileQuarantine confirms the claim once it can', async () => {
    const noticeKey = keyWithCorrelation('0d0000000000000000000000000000e2');
    const body = JSON.stringify({
      events: [
        {
          id: 'late-1',
          type: 'delivered',
          correlation: null,
          providerMessageId: 'QUEUE-LATE-1',
          recipient: 'late@example.com',
          occurredAt: new Date().toISOString(),
        },
      ],
    });
    const response = await post('generic', body, genericHeaders(body));
    expect(response.status).toBe(200);
    expect(await count('provider_events', "event_id = 'late-1' and notice_key is null")).toBe(1);
    // The claim exists, and only now learns its provider id (e.g. written by an operator's lookup).
    await insertClaimedNotice(t.db, { noticeKey, email: 'late@example.com', providerMessageId: 'QUEUE-LATE-1' });
    const other = keyWithCorrelation('0d0000000000000000000000000000e3');
    await insertClaimedNotice(t.db, { noticeKey: other, email: 'none@example.com' });
    const result = await reconcileQuarantine(t.db);
    expect(result.confirmed).toEqual([noticeKey]);
    expect(await ledger(noticeKey)).toMatchObject({ state: 'sent', resolution: 'provider_evidence', job: 'sent' });
    expect(await count('provider_events', "event_id = 'late-1' and notice_key = $1", [noticeKey])).toBe(1);
    expect((await ledger(other)).state).toBe('claimed');
    expect((await reconcileQuarantine(t.db)).confirmed).toEqual([]);
  });

  it('never touches a released row; a bounce proves the hand-over and confirms, a drop never does', async () => {
    const released = keyWithCorrelation('0d0000000000000000000000000000e4');
    await insertClaimedNotice(t.db, { noticeKey: released, email: 'released@example.com' });
    await t.pool.query("update notice_ledger set state = 'released' where notice_key = $1", [released]);
    const bounced = keyWithCorrelation('0d0000000000000000000000000000e5');
    await insertClaimedNotice(t.db, { noticeKey: bounced, email: 'hard@example.com' });
    const dropped = keyWithCorrelation('0d0000000000000000000000000000e9');
    await insertClaimedNotice(t.db, { noticeKey: dropped, email: 'dropped@example.com' });
    const body = JSON.stringify({
      events: [
        { id: 'rel-1', type: 'delivered', correlation: released.slice(0, 32), recipient: 'released@example.com', occurredAt: new Date().toISOString() },
        { id: 'bnc-1', type: 'bounce', correlation: bounced.slice(0, 32), recipient: 'hard@example.com', occurredAt: new Date().toISOString() },
        { id: 'drp-1', type: 'dropped', correlation: dropped.slice(0, 32), recipient: 'dropped@example.com', occurredAt: new Date().toISOString() },
      ],
    });
    expect((await post('generic', body, genericHeaders(body))).status).toBe(200);
    expect((await ledger(released)).state).toBe('released');
    // The provider bounced it, so it had taken it from us: the notice went out (and the address is now suppressed).
    expect((await ledger(bounced)).state).toBe('sent');
    expect(await findRecipientSuppression(t.db, { email: 'hard@example.com' })).toMatchObject({ reason: 'hard_bounce', sourceEventId: 'generic:bnc-1' });
    expect((await ledger(dropped)).state).toBe('claimed');
    expect((await reconcileQuarantine(t.db)).confirmed).toEqual([]);
  });

  it('tolerates delivered before accepted and a complaint after: one confirmation, one suppression', async () => {
    const noticeKey = keyWithCorrelation('0d0000000000000000000000000000e6');
    await insertClaimedNotice(t.db, { noticeKey, email: 'order@example.com' });
    const corr = noticeKey.slice(0, 32);
    const at = new Date().toISOString();
    for (const [id, type] of [
      ['ord-delivered', 'delivered'],
      ['ord-accepted', 'accepted'],
      ['ord-complaint', 'complaint'],
    ] as const) {
      const body = JSON.stringify({ events: [{ id, type, correlation: corr, recipient: 'Order@Example.com', occurredAt: at }] });
      expect((await post('generic', body, genericHeaders(body))).status).toBe(200);
    }
    expect(await ledger(noticeKey)).toMatchObject({ state: 'sent', job: 'sent' });
    expect(await count('audit_log', 'target_id = $1', [noticeKey])).toBe(1);
    expect(await count('provider_events', 'notice_key = $1', [noticeKey])).toBe(3);
    expect(await findRecipientSuppression(t.db, { email: 'order@example.com' })).toMatchObject({ reason: 'complaint' });
  });

  it('confirmClaimSentByEvidence moves only claimed rows, once, under concurrency', async () => {
    const noticeKey = keyWithCorrelation('0d0000000000000000000000000000e7');
    await insertClaimedNotice(t.db, { noticeKey, email: 'race@example.com' });
    const evidence = (eventId: string) => ({
      rowId: 0,
      provider: 'generic',
      eventId,
      eventType: 'delivered' as const,
      occurredAt: new Date(),
      providerMessageId: 'Q-RACE',
    });
    const results = await Promise.all(
      ['race-1', 'race-2', 'race-3'].map((eventId) => t.db.transaction((tx) => confirmClaimSentByEvidence(tx, { noticeKey, evidence: evidence(eventId) }))),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await count('audit_log', "target_id = $1 and action = 'ledger.confirm_sent'", [noticeKey])).toBe(1);
    for (const state of ['released', 'suppressed']) {
      await t.pool.query('update notice_ledger set state = $2, sent_at = null where notice_key = $1', [noticeKey, state]);
      expect(await confirmClaimSentByEvidence(t.db, { noticeKey, evidence: evidence(`after-${state}`) })).toBe(false);
      expect((await ledger(noticeKey)).state).toBe(state);
    }
  });

  it('answers 413 to an oversized body and 503 when a provider is not configured', async () => {
    const big = 'x'.repeat(1024 * 1024 + 1);
    expect((await post('generic', big, genericHeaders(big))).status).toBe(413);
    const body = readFixture('postmark-delivery.json');
    const request = new Request('http://console.test/api/webhooks/postmark', { method: 'POST', body, headers: postmarkHeaders() });
    const response = await providerRoute(webhookContractFor('postmark'), { settings: () => ({ ...settings, postmarkUser: undefined }), db: () => t.db })(
      request,
    );
    expect(response.status).toBe(503);
  });
});
