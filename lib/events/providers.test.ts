import { describe, expect, it, beforeAll } from 'vitest';
import { signGenericRequest } from './generic-signature';
import { parseGenericWebhook } from './providers/generic';
import { parsePostmarkWebhook } from './providers/postmark';
import { parseSendgridWebhook } from './providers/sendgrid';
import { parseSesWebhook } from './providers/ses';
import { createSnsKeyResolver, isTrustedSnsUrl, snsHostForTopic } from './sns';
import { createTestSendgridSigner, createTestSnsSigner, readFixture, type TestSnsSigner } from '@/testing/provider-events';
import type { ParsedWebhook } from './types';

// Relative to the real clock: the test certificates are made now and are valid for two days.
const now = new Date(Math.floor(Date.now() / 1000) * 1000 + 60_000);
const secret = 'generic-webhook-secret-0123456789abcdef';

function events(result: ParsedWebhook) {
  if (!result.ok) throw new Error(`rejected: ${result.refusal.kind} ${result.refusal.message}`);
  return result.events;
}

describe('generic signed format', () => {
  const body = readFixture('generic-events.json');
  const headersFor = (text: string, at = now) => new Headers(signGenericRequest({ secret, body: text, now: at }));

  it('accepts the sink format and normalises it', () => {
    const parsed = events(parseGenericWebhook({ headers: headersFor(body), body: Buffer.from(body), secret, now }));
    expect(parsed.map((e) => [e.type, e.correlationId, e.recipient, e.bounceType])).toEqual([
      ['accepted', '9e9000000000000000000000000000d4', 'alice@example.com', null],
      ['delivered', '9e9000000000000000000000000000d4', 'alice@example.com', null],
      ['bounce', null, 'bounce@example.com', 'hard'],
    ]);
    expect(parsed[0]?.providerMessageId).toBe('3F2504E04F8911D3');
  });

  it('rejects a forged signature, a stale timestamp, a missing header and a malformed body', () => {
    const forged = new Headers({ 'X-Notice-Timestamp': String(now.getTime() / 1000), 'X-Notice-Signature': `v1=${'0'.repeat(64)}` });
    expect(parseGenericWebhook({ headers: forged, body: Buffer.from(body), secret, now })).toMatchObject({
      ok: false,
      refusal: { kind: 'unauthenticated', message: 'signature mismatch' },
    });
    const stale = headersFor(body, new Date(now.getTime() - 6 * 60_000));
    expect(parseGenericWebhook({ headers: stale, body: Buffer.from(body), secret, now })).toMatchObject({
      ok: false,
      refusal: { kind: 'unauthenticated', message: 'signature stale' },
    });
    expect(parseGenericWebhook({ headers: new Headers(), body: Buffer.from(body), secret, now })).toMatchObject({
      ok: false,
      refusal: { kind: 'unauthenticated' },
    });
    const tampered = body.replace('alice@', 'mallory@');
    expect(parseGenericWebhook({ headers: headersFor(body), body: Buffer.from(tampered), secret, now })).toMatchObject({
      ok: false,
      refusal: { kind: 'unauthenticated' },
    });
    const malformed = JSON.stringify({ events: [{ id: 'x', type: 'teleported', occurredAt: 'yesterday' }] });
    expect(parseGenericWebhook({ headers: headersFor(malformed), body: Buffer.from(malformed), secret, now })).toMatchObject({
      ok: false,
      refusal: { kind: 'invalid_input' },
    });
    expect(parseGenericWebhook({ headers: headersFor('{'), body: Buffer.from('{'), secret, now })).toMatchObject({
      ok: false,
      refusal: { kind: 'invalid_input' },
    });
  });

  it('refuses to run without a secret', () => {
    expect(parseGenericWebhook({ headers: headersFor(body), body: Buffer.from(body), secret: undefined, now })).toMatchObject({
      ok: false,
      refusal: { kind: 'not_configured' },
    });
  });
});

describe('postmark', () => {
  const auth = { authorization: `Basic ${Buffer.from('hook:pass-word').toString('base64')}` };
  const parse = (name: string, headers: Record<string, string> = auth) =>
    parsePostmarkWebhook({ headers: new Headers(headers), body: Buffer.from(readFixture(name)), user: 'hook', password: 'pass-word' });

  it('normalises Delivery, Bounce and SpamComplaint with the Metadata correlation', () => {
    const [delivery] = events(parse('postmark-delivery.json'));
    expect(delivery).toMatchObject({
      type: 'delivered',
      correlationId: '7a7000000000000000000000000000d2',
      providerMessageId: '00000000-0000-0000-0000-000000000000',
      recipient: 'john@example.com',
    });
    expect(delivery?.eventId).toBe('delivery:00000000-0000-0000-0000-000000000000:john@example.com');
    const [bounce] = events(parse('postmark-bounce.json'));
    // The documented ID is above 2^53: it is kept digit for digit.
    expect(bounce).toMatchObject({ type: 'bounce', bounceType: 'HardBounce', recipient: 'john@example.com', eventId: 'bounce:4323372036854775807' });
    expect(bounce?.details).not.toHaveProperty('Content');
    expect(bounce?.occurredAt.toISOString()).toBe('2019-11-05T16:33:54.907Z');
    const [complaint] = events(parse('postmark-spam-complaint.json'));
    expect(complaint).toMatchObject({ type: 'complaint', recipient: 'complainer@example.com', eventId: 'complaint:42' });
  });

  it("finds the correlation of a message sent through Postmark's SMTP server, whose Metadata key keeps the header name's capitals", () => {
    const record = JSON.parse(readFixture('postmark-delivery.json')) as { Metadata: Record<string, unknown> };
    const correlation = '7a7000000000000000000000000000d2';
    record.Metadata = { Notice_correlation: correlation };
    const parsed = parsePostmarkWebhook({ headers: new Headers(auth), body: Buffer.from(JSON.stringify(record)), user: 'hook', password: 'pass-word' });
    expect(events(parsed)[0]?.correlationId).toBe(correlation);
    // The control: a record with no such key links to nothing.
    record.Metadata = { other: correlation };
    const unrelated = parsePostmarkWebhook({ headers: new Headers(auth), body: Buffer.from(JSON.stringify(record)), user: 'hook', password: 'pass-word' });
    expect(events(unrelated)[0]?.correlationId).toBeNull();
  });

  it('rejects wrong or missing credentials and a malformed record', () => {
    expect(parse('postmark-delivery.json', { authorization: `Basic ${Buffer.from('hook:guess').toString('base64')}` })).toMatchObject({
      ok: false,
      refusal: { kind: 'unauthenticated' },
    });
    expect(parse('postmark-delivery.json', {})).toMatchObject({ ok: false, refusal: { kind: 'unauthenticated' } });
    const malformed = parsePostmarkWebhook({
      headers: new Headers(auth),
      body: Buffer.from(JSON.stringify({ RecordType: 'Delivery', MessageID: 'x' })),
      user: 'hook',
      password: 'pass-word',
    });
    expect(malformed).toMatchObject({ ok: false, refusal: { kind: 'invalid_input' } });
  });
});

describe('sendgrid', () => {
  const signer = createTestSendgridSigner();
  const body = readFixture('sendgrid-events.json');
  const ts = Math.floor(now.getTime() / 1000);

  it('verifies the ECDSA signature and maps each documented event', () => {
    const parsed = events(
      parseSendgridWebhook({ headers: new Headers(signer.sign(body, ts)), body: Buffer.from(body), publicKey: signer.publicKeyBase64, now }),
    );
    expect(parsed.map((e) => e.type)).toEqual(['accepted', 'deferred', 'delivered', 'bounce', 'dropped', 'complaint']);
    expect(parsed[0]).toMatchObject({
      correlationId: '5a5000000000000000000000000000d3',
      providerMessageId: '14c5d75ce93.dfd.64b469',
      eventId: 'rbtnWrG1DVDGGGFHFyun0A==',
    });
    expect(parsed[3]?.recipient).toBe('bounced@test.com');
  });

  it('rejects a forged signature, a stale timestamp and a malformed body', () => {
    const other = createTestSendgridSigner();
    expect(parseSendgridWebhook({ headers: new Headers(other.sign(body, ts)), body: Buffer.from(body), publicKey: signer.publicKeyBase64, now })).toMatchObject(
      { ok: false, refusal: { kind: 'unauthenticated' } },
    );
    expect(
      parseSendgridWebhook({ headers: new Headers(signer.sign(body, ts - 600)), body: Buffer.from(body), publicKey: signer.publicKeyBase64, now }),
    ).toMatchObject({ ok: false, refusal: { kind: 'unauthenticated', message: 'timestamp outside the replay window' } });
    const malformed = JSON.stringify({ event: 'delivered' });
    expect(
      parseSendgridWebhook({ headers: new Headers(signer.sign(malformed, ts)), body: Buffer.from(malformed), publicKey: signer.publicKeyBase64, now }),
    ).toMatchObject({ ok: false, refusal: { kind: 'invalid_input' } });
  });
});

describe('ses over sns', () => {
  let signer: TestSnsSigner;
  const topic = 'arn:aws:sns:us-east-1:123456789012:ses-events';
  beforeAll(() => {
    signer = createTestSnsSigner();
  });
  const envelope = (fixture: string, at = now, version: '1' | '2' = '2') =>
    signer.sign({ Type: 'Notification', MessageId: `sns-${fixture}`, TopicArn: topic, Message: readFixture(fixture), Timestamp: at.toISOString() }, version);
  const parse = (value: unknown, fetched: string[] = []) =>
    parseSesWebhook({
      body: Buffer.from(JSON.stringify(value)),
      resolveKey: createSnsKeyResolver({
        fetcher: async (url) => {
          fetched.push(url);
          return signer.certificatePem;
        },
        now: () => now.getTime(),
      }),
      allowedTopics: [topic],
      now,
    });

  it('verifies SignatureVersion 1 and 2 and reads tag, provider id and recipients', async () => {
    const fetched: string[] = [];
    const [delivery] = events(await parse(envelope('ses-delivery.json'), fetched));
    expect(delivery).toMatchObject({
      provider: 'ses',
      type: 'delivered',
      correlationId: '5e5000000000000000000000000000d1',
      providerMessageId: 'EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000',
      recipient: 'recipient@example.com',
    });
    expect(delivery?.details).not.toHaveProperty('mail.headers');
    expect(fetched).toEqual([signer.certUrl]);
    const [send] = events(await parse(envelope('ses-send.json', now, '1')));
    expect(send?.type).toBe('accepted');
    const [bounce] = events(await parse(envelope('ses-bounce.json')));
    expect(bounce).toMatchObject({ type: 'bounce', bounceType: 'Permanent/General', recipient: 'recipient@example.com' });
    const [complaint] = events(await parse(envelope('ses-complaint.json')));
    expect(complaint?.type).toBe('complaint');
  });

  it('rejects a forged signature, a foreign cert URL, a stale timestamp, an unknown topic and a malformed message', async () => {
    const good = envelope('ses-delivery.json');
    expect(await parse({ ...good, Message: good.Message.replace('recipient@', 'mallory@') })).toMatchObject({
      ok: false,
      refusal: { kind: 'unauthenticated', message: 'signature mismatch' },
    });
    expect(await parse({ ...good, SigningCertURL: 'https://evil.example.com/sns.pem' })).toMatchObject({ ok: false, refusal: { kind: 'unauthenticated' } });
    expect(await parse({ ...good, SigningCertURL: 'http://sns.us-east-1.amazonaws.com/x.pem' })).toMatchObject({
      ok: false,
      refusal: { kind: 'unauthenticated' },
    });
    expect(await parse(envelope('ses-delivery.json', new Date(now.getTime() - 2 * 3_600_000)))).toMatchObject({
      ok: false,
      refusal: { kind: 'unauthenticated', message: 'timestamp outside the replay window' },
    });
    expect(await parse({ ...good, TopicArn: 'arn:aws:sns:us-east-1:999999999999:other' })).toMatchObject({ ok: false, refusal: { kind: 'forbidden' } });
    const notSes = signer.sign({ Type: 'Notification', MessageId: 'm', TopicArn: topic, Message: '{"hello":"world"}', Timestamp: now.toISOString() });
    expect(await parse(notSes)).toMatchObject({ ok: false, refusal: { kind: 'invalid_input' } });
    expect(await parse({ Type: 'Notification' })).toMatchObject({ ok: false, refusal: { kind: 'invalid_input' } });
  });

  it("trusts only https URLs on exactly the topic's SNS host", () => {
    const host = 'sns.eu-west-1.amazonaws.com';
    expect(snsHostForTopic('arn:aws:sns:eu-west-1:123456789012:t')).toBe(host);
    expect(snsHostForTopic('arn:aws-cn:sns:cn-north-1:123456789012:t')).toBe('sns.cn-north-1.amazonaws.com.cn');
    expect(snsHostForTopic('arn:aws:sqs:eu-west-1:123456789012:t')).toBeNull();
    expect(isTrustedSnsUrl('https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-abc.pem', { pem: true, host })).toBe(true);
    expect(isTrustedSnsUrl('https://sns.cn-north-1.amazonaws.com.cn/x.pem', { pem: true, host: 'sns.cn-north-1.amazonaws.com.cn' })).toBe(true);
    // Another region's host is an SNS host too, but not this topic's.
    expect(isTrustedSnsUrl('https://sns.us-east-1.amazonaws.com/x.pem', { pem: true, host })).toBe(false);
    expect(isTrustedSnsUrl('https://sns.eu-west-1.amazonaws.com.evil.com/x.pem', { pem: true, host })).toBe(false);
    expect(isTrustedSnsUrl('https://user@sns.eu-west-1.amazonaws.com/x.pem', { pem: true, host })).toBe(false);
    expect(isTrustedSnsUrl('https://sns.eu-west-1.amazonaws.com:8443/x.pem', { pem: true, host })).toBe(false);
    expect(isTrustedSnsUrl('https://sns.eu-west-1.amazonaws.com/x.txt', { pem: true, host })).toBe(false);
  });

  it('refuses an unlisted topic before fetching any certificate, and trusts no topic when none is listed', async () => {
    const fetched: string[] = [];
    const resolveKey = createSnsKeyResolver({
      fetcher: async (url) => {
        fetched.push(url);
        return signer.certificatePem;
      },
      now: () => now.getTime(),
    });
    const bounce = signer.sign({
      Type: 'Notification',
      MessageId: 'sns-attacker',
      TopicArn: 'arn:aws:sns:us-east-1:999999999999:attacker',
      Message: readFixture('ses-bounce.json'),
      Timestamp: now.toISOString(),
    });
    for (const allowedTopics of [[], [topic]]) {
      expect(await parseSesWebhook({ body: Buffer.from(JSON.stringify(bounce)), resolveKey, allowedTopics, now })).toMatchObject({
        ok: false,
        refusal: { kind: 'forbidden' },
      });
    }
    expect(fetched).toEqual([]);
  });

  it("refuses a certificate on another region's SNS host than the topic's", async () => {
    const fetched: string[] = [];
    const other = createTestSnsSigner('https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-test.pem');
    const message = other.sign({
      Type: 'Notification',
      MessageId: 'sns-region',
      TopicArn: topic,
      Message: readFixture('ses-delivery.json'),
      Timestamp: now.toISOString(),
    });
    const result = await parseSesWebhook({
      body: Buffer.from(JSON.stringify(message)),
      resolveKey: createSnsKeyResolver({
        fetcher: async (url) => {
          fetched.push(url);
          return other.certificatePem;
        },
        now: () => now.getTime(),
      }),
      allowedTopics: [topic],
      now,
    });
    expect(result).toMatchObject({ ok: false, refusal: { kind: 'unauthenticated' } });
    expect(fetched).toEqual([]);
  });

  it('caches the certificate per URL and retries after a failed fetch', async () => {
    let calls = 0;
    let fail = true;
    const resolve = createSnsKeyResolver({
      fetcher: async () => {
        calls += 1;
        if (fail) throw new Error('offline');
        return signer.certificatePem;
      },
    });
    await expect(resolve(signer.certUrl)).rejects.toThrow('offline');
    fail = false;
    await resolve(signer.certUrl);
    await resolve(signer.certUrl);
    expect(calls).toBe(2);
  });

  it('confirms a subscription only for a listed topic, only through its SNS host', async () => {
    const confirmation = (topicArn: string, subscribeUrl: string) =>
      signer.sign({
        Type: 'SubscriptionConfirmation',
        MessageId: 'c1',
        TopicArn: topicArn,
        Message: 'You have chosen to subscribe to the topic',
        Timestamp: now.toISOString(),
        Token: 'token-1',
        SubscribeURL: subscribeUrl,
      });
    const confirm = async (value: unknown, allowedTopics: string[]) => {
      const confirmed: string[] = [];
      const result = await parseSesWebhook({
        body: Buffer.from(JSON.stringify(value)),
        resolveKey: async () => (await import('node:crypto')).createPublicKey(signer.certificatePem),
        allowedTopics,
        confirmSubscription: async (url) => {
          confirmed.push(url);
        },
        now,
      });
      return { result, confirmed };
    };
    const subscribeUrl = 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=token-1';
    const listed = await confirm(confirmation(topic, subscribeUrl), [topic]);
    expect(listed.result).toMatchObject({ ok: true, events: [], note: 'subscription confirmed' });
    expect(listed.confirmed).toEqual([subscribeUrl]);

    const attacker = await confirm(confirmation('arn:aws:sns:us-east-1:999999999999:attacker', subscribeUrl), [topic]);
    expect(attacker.result).toMatchObject({ ok: false, refusal: { kind: 'forbidden' } });
    const nothingListed = await confirm(confirmation(topic, subscribeUrl), []);
    expect(nothingListed.result).toMatchObject({ ok: false, refusal: { kind: 'forbidden' } });
    const elsewhere = await confirm(confirmation(topic, 'https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&Token=token-1'), [topic]);
    expect(elsewhere.result).toMatchObject({ ok: false, refusal: { kind: 'invalid_input' } });
    expect([...attacker.confirmed, ...nothingListed.confirmed, ...elsewhere.confirmed]).toEqual([]);
  });
});
