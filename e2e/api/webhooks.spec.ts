import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@/e2e/fixtures/test';
import { genericHeaders, postmarkHeaders, sendgridHeaders, snsNotification, snsSubscriptionConfirmation } from '@/e2e/fixtures/webhook-keys';

// Bodies go as Buffers: Playwright JSON-encodes a string `data` that does not parse as JSON,
// and a signed body must reach the server byte for byte.

/**
 * Each provider webhook through `next start`, authenticated as the provider does it (HMAC,
 * HTTP Basic, SendGrid's ECDSA signature, an SNS-signed notification checked against the
 * pinned certificate), with the provider's documented example payload. The payload's
 * correlation names a claim a killed worker left (seeded): the event must confirm it as sent.
 * Every refusal is checked to store nothing and leave the claim as it was.
 */

const fixture = (name: string) => readFileSync(path.join(process.cwd(), 'testing', 'fixtures', name), 'utf8');

type Sql = <T extends object>(text: string, values?: unknown[]) => Promise<T[]>;

async function snapshot(sql: Sql, noticeKey: string) {
  const [events] = await sql<{ n: string }>('select count(*)::text as n from provider_events');
  const ledger = await sql('select state, sent_at, provider_message_id from notice_ledger where notice_key = $1', [noticeKey]);
  return { events: events?.n, ledger };
}

async function ledgerState(sql: Sql, noticeKey: string): Promise<string | undefined> {
  const [row] = await sql<{ state: string }>('select state from notice_ledger where notice_key = $1', [noticeKey]);
  return row?.state;
}

test('generic (our SMTP sink’s signed format): refusals store nothing; the signed event confirms the claim, a repeat is a duplicate', async ({
  request,
  seed,
  sql,
}) => {
  const { keys, claimedKeys } = seed.webhooks;
  const body = fixture('generic-events.json');
  const before = await snapshot(sql, claimedKeys.generic);

  const unsigned = await request.post('/api/webhooks/generic', { headers: { 'content-type': 'application/json' }, data: Buffer.from(body) });
  expect(unsigned.status()).toBe(401);
  expect(await unsigned.json()).toEqual({ error: 'signature missing' });
  const forged = await request.post('/api/webhooks/generic', {
    headers: genericHeaders({ ...keys, genericSecret: 'f'.repeat(64) }, body),
    data: Buffer.from(body),
  });
  expect(forged.status()).toBe(401);
  const tampered = await request.post('/api/webhooks/generic', { headers: genericHeaders(keys, body), data: Buffer.from(body.replace('accepted', 'bounce')) });
  expect(tampered.status()).toBe(401);
  const stale = { ...genericHeaders(keys, body), 'X-Notice-Timestamp': String(Math.floor(Date.now() / 1000) - 3_600) };
  expect((await request.post('/api/webhooks/generic', { headers: stale, data: Buffer.from(body) })).status()).toBe(401);
  const notJson = '{"events": [';
  expect((await request.post('/api/webhooks/generic', { headers: genericHeaders(keys, notJson), data: Buffer.from(notJson) })).status()).toBe(400);
  expect(await snapshot(sql, claimedKeys.generic)).toEqual(before);

  const accepted = await request.post('/api/webhooks/generic', { headers: genericHeaders(keys, body), data: Buffer.from(body) });
  expect(accepted.status()).toBe(200);
  expect(await accepted.json()).toMatchObject({ received: 3, stored: 3, duplicates: 0, confirmed: 1 });
  expect(await ledgerState(sql, claimedKeys.generic)).toBe('sent');
  const repeated = await request.post('/api/webhooks/generic', { headers: genericHeaders(keys, body), data: Buffer.from(body) });
  expect(await repeated.json()).toMatchObject({ received: 3, stored: 0, duplicates: 3, confirmed: 0 });
});

test('Postmark (HTTP Basic): wrong or missing credentials are 401 with a Basic challenge; the Delivery example confirms the claim', async ({
  request,
  seed,
  sql,
}) => {
  const { keys, claimedKeys } = seed.webhooks;
  const body = fixture('postmark-delivery.json');
  const before = await snapshot(sql, claimedKeys.postmark);
  const anonymous = await request.post('/api/webhooks/postmark', { headers: { 'content-type': 'application/json' }, data: Buffer.from(body) });
  expect(anonymous.status()).toBe(401);
  expect(anonymous.headers()['www-authenticate']).toBe('Basic realm="notice-ledger webhooks"');
  const wrong = await request.post('/api/webhooks/postmark', {
    headers: postmarkHeaders({ ...keys, postmark: { user: keys.postmark.user, password: 'wrong-password' } }),
    data: Buffer.from(body),
  });
  expect(wrong.status()).toBe(401);
  expect((await request.post('/api/webhooks/postmark', { headers: postmarkHeaders(keys), data: Buffer.from('{"RecordType":') })).status()).toBe(400);
  expect(await snapshot(sql, claimedKeys.postmark)).toEqual(before);

  const accepted = await request.post('/api/webhooks/postmark', { headers: postmarkHeaders(keys), data: Buffer.from(body) });
  expect(accepted.status()).toBe(200);
  expect(await accepted.json()).toMatchObject({ received: 1, stored: 1, confirmed: 1 });
  expect(await ledgerState(sql, claimedKeys.postmark)).toBe('sent');
});

test('SendGrid (Signed Event Webhook): a bad or stale signature is 401; the documented batch confirms the claim', async ({ request, seed, sql }) => {
  const { keys, claimedKeys } = seed.webhooks;
  const body = fixture('sendgrid-events.json');
  const before = await snapshot(sql, claimedKeys.sendgrid);
  expect((await request.post('/api/webhooks/sendgrid', { headers: { 'content-type': 'application/json' }, data: Buffer.from(body) })).status()).toBe(401);
  const signedOther = sendgridHeaders(keys, '[]');
  expect((await request.post('/api/webhooks/sendgrid', { headers: signedOther, data: Buffer.from(body) })).status()).toBe(401);
  const stale = sendgridHeaders(keys, body, Math.floor(Date.now() / 1000) - 3_600);
  expect((await request.post('/api/webhooks/sendgrid', { headers: stale, data: Buffer.from(body) })).status()).toBe(401);
  expect(await snapshot(sql, claimedKeys.sendgrid)).toEqual(before);

  const accepted = await request.post('/api/webhooks/sendgrid', { headers: sendgridHeaders(keys, body), data: Buffer.from(body) });
  expect(accepted.status()).toBe(200);
  const summary = (await accepted.json()) as { received: number; stored: number; confirmed: number };
  expect(summary.stored).toBe(summary.received);
  expect(summary.confirmed).toBe(1);
  expect(await ledgerState(sql, claimedKeys.sendgrid)).toBe('sent');
});

test('SES through SNS: a wrong topic is 403, an untrusted or unknown certificate and a bad signature are 401; the signed Delivery confirms the claim', async ({
  request,
  seed,
  sql,
}) => {
  const { keys, claimedKeys } = seed.webhooks;
  const message = fixture('ses-delivery.json');
  const post = (envelope: unknown) =>
    request.post('/api/webhooks/ses', {
      headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' },
      data: Buffer.from(JSON.stringify(envelope)),
    });
  const before = await snapshot(sql, claimedKeys.ses);

  const signed = snsNotification(keys, { message, messageId: 'e2e-ses-delivery-1' });
  expect((await post({ ...signed, Message: message.replace('Delivery', 'Bounce') })).status()).toBe(401);
  expect(
    (
      await post(
        snsNotification(
          { ...keys, sns: { ...keys.sns, topicArn: 'arn:aws:sns:us-east-1:123456789012:someone-else' } },
          { message, messageId: 'e2e-ses-topic' },
        ),
      )
    ).status(),
  ).toBe(403);
  expect(
    (
      await post(
        snsNotification(
          { ...keys, sns: { ...keys.sns, certUrl: 'https://attacker.example.com/SimpleNotificationService-x.pem' } },
          { message, messageId: 'e2e-ses-url' },
        ),
      )
    ).status(),
  ).toBe(401);
  expect(
    (
      await post(
        snsNotification(
          { ...keys, sns: { ...keys.sns, certUrl: 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-not-pinned.pem' } },
          { message, messageId: 'e2e-ses-cert' },
        ),
      )
    ).status(),
  ).toBe(401);
  expect((await post(snsNotification(keys, { message, messageId: 'e2e-ses-old', at: new Date(Date.now() - 2 * 3_600_000) }))).status()).toBe(401);
  expect((await post({ Type: 'Notification' })).status()).toBe(400);
  expect(await snapshot(sql, claimedKeys.ses)).toEqual(before);

  const accepted = await post(signed);
  expect(accepted.status()).toBe(200);
  expect(await accepted.json()).toMatchObject({ received: 1, stored: 1, confirmed: 1 });
  expect(await ledgerState(sql, claimedKeys.ses)).toBe('sent');
});

test('SES through SNS: a correctly signed bounce from a topic nobody listed is refused before any certificate is looked up; nothing is stored, nobody suppressed', async ({
  request,
  seed,
  sql,
}) => {
  const { keys } = seed.webhooks;
  // Any AWS account can create a topic, subscribe our URL and have SNS sign a bounce for any address.
  const attacker = { ...keys, sns: { ...keys.sns, topicArn: 'arn:aws:sns:us-east-1:999999999999:attacker' } };
  const post = (envelope: unknown) =>
    request.post('/api/webhooks/ses', { headers: { 'content-type': 'text/plain; charset=UTF-8' }, data: Buffer.from(JSON.stringify(envelope)) });
  const state = async () => ({
    events: await sql('select provider, event_id from provider_events order by 1, 2'),
    suppressions: await sql('select email, reason from recipient_suppressions order by 1, 2'),
  });
  const before = await state();
  const bounce = fixture('ses-bounce.json');

  const signed = await post(snsNotification(attacker, { message: bounce, messageId: 'e2e-attacker-bounce' }));
  expect(signed.status()).toBe(403);
  expect(await signed.json()).toEqual({ error: 'unexpected TopicArn' });
  // The same with a certificate nobody pinned: a lookup would answer 401 ("signing certificate
  // unavailable"); 403 says the topic was refused first and no certificate was asked for.
  const unpinned = { ...attacker, sns: { ...attacker.sns, certUrl: 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-attacker.pem' } };
  const unfetched = await post(snsNotification(unpinned, { message: bounce, messageId: 'e2e-attacker-unpinned' }));
  expect(unfetched.status()).toBe(403);
  // Nor is the attacker's subscription confirmed.
  const subscribe = await post(snsSubscriptionConfirmation(unpinned, { messageId: 'e2e-attacker-subscribe' }));
  expect(subscribe.status()).toBe(403);
  // A listed topic's notification with the pinned certificate's file on another region's host: SNS
  // signs us-east-1 topics from sns.us-east-1.amazonaws.com only.
  const otherRegion = { ...keys, sns: { ...keys.sns, certUrl: keys.sns.certUrl.replace('sns.us-east-1.', 'sns.eu-west-1.') } };
  const misplaced = await post(snsNotification(otherRegion, { message: bounce, messageId: 'e2e-ses-region' }));
  expect(misplaced.status()).toBe(401);
  expect(await state()).toEqual(before);
});

test('a body over the limit is 413 on every webhook, before any authentication is tried', async ({ request }) => {
  const huge = 'x'.repeat(1024 * 1024 + 1);
  for (const provider of ['generic', 'postmark', 'sendgrid', 'ses']) {
    const response = await request.post(`/api/webhooks/${provider}`, { headers: { 'content-type': 'application/json' }, data: Buffer.from(huge) });
    expect(response.status(), provider).toBe(413);
  }
});
