import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { twilioWebhook, twilioInboundWebhook } from '@/lib/api/webhooks';
import { providerRoute } from '@/lib/http/provider-route';
import { preferenceFor } from '@/db/queries/preferences';
import { getSmsMessage } from '@/db/queries/sms';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertClaimedNotice, keyWithCorrelation } from '@/testing/provider-events';
import { snapshotTables } from '@/test/fuzz/table-snapshot';
import { twilioSignature } from '@/testing/twilio-peer';
import type { WebhookSettings } from './webhook';
import { refreshDeliveryGauges } from '@/lib/metrics/delivery-gap';
import { registry } from '@/lib/metrics/registry';

const authToken = 'twilio-test-auth-token-0123456789';
const publicBaseUrl = 'https://notices.example.com';
let t: TestDatabase;
const settings: WebhookSettings = {
  snsTopicArns: [],
  snsKeyResolver: async () => Promise.reject(new Error('no SNS here')),
  twilioAuthToken: authToken,
  publicBaseUrl,
};

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t.drop());

const sid = (n: number) => `SM${n.toString(16).padStart(32, '0')}`;

/** A POST as Twilio makes it: to the URL it was given, signed over that URL and the sorted parameters. */
function twilioRequest(path: string, params: Record<string, string>, { signature, host = 'http://10.0.0.7:3000' }: { signature?: string; host?: string } = {}) {
  // The console sits behind a proxy: the Host it sees is not the public one the signature covers.
  const signed = new URL(path, publicBaseUrl).href;
  return new Request(new URL(path, host).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature ?? twilioSignature(authToken, signed, params) },
    body: new URLSearchParams(params).toString(),
  });
}
const statusRoute = providerRoute(twilioWebhook, { settings: () => settings, db: () => t.db });
const inboundRoute = providerRoute(twilioInboundWebhook, { settings: () => settings, db: () => t.db });

function status(messageSid: string, messageStatus: string, extra: Record<string, string> = {}) {
  return {
    AccountSid: `AC${'1'.repeat(32)}`,
    ApiVersion: '2010-04-01',
    From: '+15005550006',
    MessageSid: messageSid,
    MessageStatus: messageStatus,
    SmsSid: messageSid,
    SmsStatus: messageStatus,
    To: '+14155550100',
    ...extra,
  };
}

async function count(table: string, where = 'true', params: unknown[] = []): Promise<number> {
  const result = await t.pool.query<{ n: number }>(`select count(*)::int as n from ${table} where ${where}`, params);
  return result.rows[0]?.n ?? 0;
}

describe('X-Twilio-Signature', () => {
  it("Twilio's documented example verifies with twilio.validateRequest, and our peer signs it identically", () => {
    // https://www.twilio.com/docs/usage/security#validating-requests: auth token 12345, this URL and these parameters.
    const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
    const params = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };
    const expected = '0/KCTR6DLpKmkAf8muzZqo1nDgQ=';
    expect(twilioSignature('12345', url, params)).toBe(expected);
    expect(twilio.validateRequest('12345', expected, url, params)).toBe(true);
    expect(twilio.validateRequest('12345', expected, url, { ...params, Digits: '1235' })).toBe(false);
    expect(twilio.validateRequest('12345', expected, 'https://mycompany.com/myapp.php?foo=1&bar=3', params)).toBe(false);
    expect(twilio.validateRequest('54321', expected, url, params)).toBe(false);
  });
});

describe('status callbacks (/api/webhooks/twilio)', () => {
  it('confirms a stuck claim when Twilio reports the message, moves the status forward only, and is idempotent on a replay', async () => {
    const correlation = 'a1'.repeat(16);
    const noticeKey = keyWithCorrelation(correlation);
    await insertClaimedNotice(t.db, { noticeKey, email: 'sms-stuck@example.com' });
    const path = `/api/webhooks/twilio?c=${correlation}`;

    // Out of order: delivered first, then a late `sent`.
    const delivered = await statusRoute(twilioRequest(path, status(sid(1), 'delivered')));
    expect(delivered.status).toBe(200);
    const ledger = await t.pool.query<{ state: string; resolution: string }>('select state, resolution from notice_ledger where notice_key = $1', [noticeKey]);
    expect(ledger.rows[0]).toEqual({ state: 'sent', resolution: 'provider_evidence' });
    expect(await getSmsMessage(t.db, { messageSid: sid(1) })).toMatchObject({ status: 'delivered', noticeKey, correlationId: correlation });

    expect((await statusRoute(twilioRequest(path, status(sid(1), 'sent')))).status).toBe(200);
    expect(await getSmsMessage(t.db, { messageSid: sid(1) })).toMatchObject({ status: 'delivered' });

    // The same callback again: 2xx, no new row, nothing changes.
    const before = await snapshotTables(t.pool);
    const replay = await statusRoute(twilioRequest(path, status(sid(1), 'delivered')));
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ stored: 0, duplicates: 1 });
    expect(await snapshotTables(t.pool)).toEqual(before);
  });

  it('a validly signed callback for a message we do not know: 2xx, stored unlinked', async () => {
    const response = await statusRoute(
      twilioRequest('/api/webhooks/twilio?c=ffffffffffffffffffffffffffffffff', status(sid(2), 'undelivered', { ErrorCode: '30003' })),
    );
    expect(response.status).toBe(200);
    expect(await count('provider_events', "provider = 'twilio' and provider_message_id = $1 and notice_key is null", [sid(2)])).toBe(1);
    expect(await getSmsMessage(t.db, { messageSid: sid(2) })).toMatchObject({ status: 'undelivered', errorCode: '30003', noticeKey: null });
    // No phone number or body in what is kept.
    const stored = await t.pool.query<{ details: unknown; recipient: string | null }>(
      'select details, recipient from provider_events where provider_message_id = $1',
      [sid(2)],
    );
    expect(JSON.stringify(stored.rows)).not.toContain('+1415');
  });

  it('sent → delivered in order, and a status never moves back from a final one', async () => {
    const path = '/api/webhooks/twilio?c=b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2';
    for (const step of ['queued', 'sent', 'undelivered', 'delivered', 'sent'])
      expect((await statusRoute(twilioRequest(path, status(sid(3), step)))).status).toBe(200);
    expect(await getSmsMessage(t.db, { messageSid: sid(3) })).toMatchObject({ status: 'undelivered' });
  });

  it.each([
    ['no signature', (r: Record<string, string>) => twilioRequest('/api/webhooks/twilio?c=c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3', r, { signature: '' })],
    [
      'a forged signature',
      (r: Record<string, string>) =>
        twilioRequest('/api/webhooks/twilio?c=c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3', r, {
          signature: twilioSignature('another-token-0123456789', `${publicBaseUrl}/api/webhooks/twilio?c=c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3`, r),
        }),
    ],
    [
      'an altered parameter',
      (r: Record<string, string>) => {
        const signature = twilioSignature(authToken, `${publicBaseUrl}/api/webhooks/twilio?c=c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3`, r);
        return twilioRequest('/api/webhooks/twilio?c=c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3', { ...r, MessageStatus: 'delivered' }, { signature });
      },
    ],
    [
      'an altered correlation in the URL',
      (r: Record<string, string>) => {
        const signature = twilioSignature(authToken, `${publicBaseUrl}/api/webhooks/twilio?c=c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3`, r);
        return twilioRequest('/api/webhooks/twilio?c=d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4', r, { signature });
      },
    ],
  ])('%s → 403, no row changes', async (_name, build) => {
    const before = await snapshotTables(t.pool);
    const response = await statusRoute(build(status(sid(4), 'failed')));
    expect(response.status).toBe(403);
    expect(await snapshotTables(t.pool)).toEqual(before);
  });

  it('not configured (no TWILIO_AUTH_TOKEN) → 503, nothing stored', async () => {
    const route = providerRoute(twilioWebhook, { settings: () => ({ ...settings, twilioAuthToken: undefined }), db: () => t.db });
    const before = await snapshotTables(t.pool);
    expect((await route(twilioRequest('/api/webhooks/twilio', status(sid(5), 'sent')))).status).toBe(503);
    expect(await snapshotTables(t.pool)).toEqual(before);
  });
});

describe('provider events per channel', () => {
  it('Twilio messages count under channel="sms": a status callback of `sent` is an accepted event, not a delivered one', async () => {
    const path = '/api/webhooks/twilio?c=e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5';
    await statusRoute(twilioRequest(path, status(sid(600), 'sent')));
    await refreshDeliveryGauges(t.db);
    const text = await registry.getSingleMetricAsString('notice_ledger_provider_messages');
    const pattern = /\{channel="sms",provider="twilio",notice_type="[a-z_]+",status="accepted"\} (\d+)/g;
    const accepted = [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1]), 0);
    expect(accepted).toBeGreaterThanOrEqual(1);
    expect(text).not.toMatch(/channel="email",provider="twilio"/);
  });
});

describe('incoming keywords (/api/webhooks/twilio/inbound)', () => {
  const inbound = (body: string, from = '+14155550177', messageSid = sid(100 + body.length)) => ({
    AccountSid: `AC${'1'.repeat(32)}`,
    ApiVersion: '2010-04-01',
    Body: body,
    From: from,
    MessageSid: messageSid,
    NumMedia: '0',
    To: '+15005550006',
  });

  it.each(['STOP', 'stopall', ' Unsubscribe ', 'CANCEL', 'END', 'QUIT'])('%s → SMS opt-out (sms_keyword)', async (word) => {
    const from = `+1415555${String(1000 + word.length * 7).slice(0, 4)}`;
    expect((await inboundRoute(twilioRequest('/api/webhooks/twilio/inbound', inbound(word, from, sid(200 + word.length))))).status).toBe(200);
    expect(await preferenceFor(t.db, { recipient: from, category: 'courtesy', channel: 'sms' })).toBe('opted_out');
  });

  it('START after STOP opts back in; a replayed STOP changes nothing; other text changes nothing and keeps no number', async () => {
    const from = '+14155550188';
    await inboundRoute(twilioRequest('/api/webhooks/twilio/inbound', inbound('STOP', from, sid(301))));
    expect(await preferenceFor(t.db, { recipient: from, category: 'courtesy', channel: 'sms' })).toBe('opted_out');
    await inboundRoute(twilioRequest('/api/webhooks/twilio/inbound', inbound('START', from, sid(302))));
    expect(await preferenceFor(t.db, { recipient: from, category: 'courtesy', channel: 'sms' })).toBe('opted_in');
    const before = await snapshotTables(t.pool);
    const replay = await inboundRoute(twilioRequest('/api/webhooks/twilio/inbound', inbound('STOP', from, sid(301))));
    expect(replay.status).toBe(200);
    expect(await snapshotTables(t.pool)).toEqual(before);
    expect(await preferenceFor(t.db, { recipient: from, category: 'courtesy', channel: 'sms' })).toBe('opted_in');

    const answered = await inboundRoute(twilioRequest('/api/webhooks/twilio/inbound', inbound('what is this about?', '+14155550199', sid(303))));
    expect(answered.status).toBe(200);
    // TwiML, empty: no reply text goes back to the sender.
    expect(answered.headers.get('content-type')).toMatch(/^text\/xml/);
    expect(await answered.text()).toBe('<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
    const kept = await t.pool.query<{ recipient: string | null; details: unknown }>('select recipient, details from provider_events where event_id = $1', [
      `inbound:${sid(303)}`,
    ]);
    expect(kept.rows).toEqual([{ recipient: null, details: {} }]);
  });

  it('a forged STOP → 403, no preference written', async () => {
    const before = await snapshotTables(t.pool);
    const params = inbound('STOP', '+14155550111', sid(400));
    const response = await inboundRoute(
      twilioRequest('/api/webhooks/twilio/inbound', params, {
        signature: twilioSignature('not-our-token-0123456789', `${publicBaseUrl}/api/webhooks/twilio/inbound`, params),
      }),
    );
    expect(response.status).toBe(403);
    expect(await snapshotTables(t.pool)).toEqual(before);
  });
});
