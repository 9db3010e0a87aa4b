import { SendBulkEmailCommand, SendEmailCommand, SESv2Client, type SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CORRELATION_TAG } from '@/lib/events/types';
import { rejection } from './http-peer';
import { createSnsKeyResolver } from '@/lib/events/sns';
import { parseSesWebhook } from '@/lib/events/providers/ses';
import { createTestSnsSigner } from './provider-events';
import { sesEventRecord, startSesPeer, type SesPeer } from './ses-peer';

const correlation = 'abcdef0123456789abcdef0123456789';

function email(to: string, extra: Partial<SendEmailCommandInput> = {}): SendEmailCommandInput {
  return {
    FromEmailAddress: 'notices@notices.test',
    Destination: { ToAddresses: [to] },
    Content: {
      Simple: {
        Subject: { Data: 'Your renewal — in 3 days' },
        Body: { Text: { Data: 'hello' }, Html: { Data: '<p>hello</p>' } },
        Headers: [{ Name: 'Message-ID', Value: `<${correlation}@notices.test>` }],
      },
    },
    EmailTags: [{ Name: CORRELATION_TAG, Value: correlation }],
    ...extra,
  };
}

function bulk(recipients: string[]) {
  return new SendBulkEmailCommand({
    FromEmailAddress: 'notices@notices.test',
    DefaultContent: { Template: { TemplateContent: { Subject: 'Your renewal', Text: 'hello {{name}}' }, TemplateData: '{}' } },
    BulkEmailEntries: recipients.map((to, index) => ({
      Destination: { ToAddresses: [to] },
      ReplacementTags: [{ Name: CORRELATION_TAG, Value: index.toString(16).padStart(32, '0') }],
    })),
    DefaultEmailTags: [{ Name: 'kind', Value: 'renewal_notice_t72' }],
  });
}

/** What the SDK throws: a service exception (name, $metadata, $response) or a transport error (code). */
type SdkError = Error & { code?: string; $metadata?: { httpStatusCode?: number; attempts?: number }; $response?: { headers: Record<string, string> } };

const failure = (call: Promise<unknown>) => rejection(call, (error): error is SdkError => error instanceof Error);

describe('ses v2 peer, through the official @aws-sdk/client-sesv2', () => {
  let peer: SesPeer;
  // maxAttempts: 1 turns the SDK's retry middleware off (the default is 3 attempts, see below).
  let client: SESv2Client;
  beforeEach(async () => {
    peer = await startSesPeer();
    client = new SESv2Client({ region: peer.region, endpoint: peer.baseUrl, credentials: peer.credentials, maxAttempts: 1 });
  });
  afterEach(async () => {
    client.destroy();
    await peer.stop();
  });

  it('sends one signed email: MessageId back, EmailTags kept, our Message-ID replaced by SES', async () => {
    const sent = await client.send(new SendEmailCommand(email('Alice@Example.com')));
    expect(sent.MessageId).toMatch(/^0100[0-9a-f]{12}-[0-9a-f-]{36}-000000$/);
    expect(peer.messages()).toEqual([
      expect.objectContaining({
        messageId: sent.MessageId,
        to: ['alice@example.com'],
        tags: { [CORRELATION_TAG]: correlation },
        correlation,
        requestedMessageIdHeader: `<${correlation}@notices.test>`,
        messageIdHeader: `<${sent.MessageId}@email.amazonses.com>`,
        answered: 'ok',
      }),
    ]);
  });

  it('sends a bulk call with one result per entry in order, {Status, MessageId, Error}', async () => {
    peer.refuse((to) => (to === 'bounced@example.com' ? { status: 'MESSAGE_REJECTED', error: 'Email address is on the suppression list.' } : null));
    const sent = await client.send(bulk(['a@example.com', 'bounced@example.com', 'c@example.com']));
    expect(sent.BulkEmailEntryResults?.map((result) => [result.Status, result.Error])).toEqual([
      ['SUCCESS', undefined],
      ['MESSAGE_REJECTED', 'Email address is on the suppression list.'],
      ['SUCCESS', undefined],
    ]);
    const accepted = peer.messages();
    expect(accepted.map((message) => message.messageId)).toEqual([sent.BulkEmailEntryResults?.[0]?.MessageId, sent.BulkEmailEntryResults?.[2]?.MessageId]);
    expect(accepted[1]?.tags).toEqual({ kind: 'renewal_notice_t72', [CORRELATION_TAG]: '2'.padStart(32, '0') });
  });

  it('refuses a bulk call over 50 entries whole and takes 50', async () => {
    const recipients = Array.from({ length: 51 }, (_, index) => `r${index}@example.com`);
    const error = await failure(client.send(bulk(recipients)));
    expect([error.name, error.$metadata?.httpStatusCode]).toEqual(['BadRequestException', 400]);
    expect(peer.messages()).toHaveLength(0);
    expect((await client.send(bulk(recipients.slice(0, 50)))).BulkEmailEntryResults).toHaveLength(50);
  });

  it('refuses a single email for its recipient with 400 MessageRejected', async () => {
    peer.refuse(() => ({ status: 'MESSAGE_REJECTED', error: 'Email address is not verified.' }));
    const error = await failure(client.send(new SendEmailCommand(email('a@example.com'))));
    expect([error.name, error.message]).toEqual(['MessageRejected', 'Email address is not verified.']);
    expect(peer.messages()).toHaveLength(0);
  });

  it('verifies SigV4 with the SDK signer: unsigned, unknown key, wrong secret and a tampered body are refused', async () => {
    const unsigned = await fetch(`${peer.baseUrl}/v2/email/outbound-emails`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(email('a@example.com')),
    });
    expect(unsigned.status).toBe(403);
    expect(unsigned.headers.get('x-amzn-errortype')).toMatch(/^MissingAuthenticationToken:/);
    expect(await unsigned.json()).toHaveProperty('message');

    const wrongKey = new SESv2Client({
      region: peer.region,
      endpoint: peer.baseUrl,
      credentials: { ...peer.credentials, accessKeyId: 'AKIAOTHERKEY' },
      maxAttempts: 1,
    });
    expect((await failure(wrongKey.send(new SendEmailCommand(email('a@example.com'))))).name).toBe('InvalidClientTokenId');
    const wrongSecret = new SESv2Client({
      region: peer.region,
      endpoint: peer.baseUrl,
      credentials: { ...peer.credentials, secretAccessKey: 'not-the-secret' },
      maxAttempts: 1,
    });
    const mismatch = await failure(wrongSecret.send(new SendEmailCommand(email('a@example.com'))));
    expect([mismatch.name, mismatch.$metadata?.httpStatusCode]).toEqual(['SignatureDoesNotMatch', 403]);
    wrongKey.destroy();
    wrongSecret.destroy();

    // The same signed request, sent as signed (control) and with its body changed after signing (attack).
    const signer = new SignatureV4({ credentials: peer.credentials, region: peer.region, service: 'ses', sha256: Sha256 });
    const url = new URL(`${peer.baseUrl}/v2/email/outbound-emails`);
    const body = JSON.stringify(email('a@example.com'));
    const signed = await signer.sign({
      method: 'POST',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: {},
      headers: { host: url.host, 'content-type': 'application/json' },
      body,
    });
    const post = (text: string) => fetch(url, { method: 'POST', headers: signed.headers, body: text });
    const tampered = await post(body.replace('a@example.com', 'x@example.com'));
    expect(tampered.status).toBe(403);
    expect(peer.messages()).toHaveLength(0);
    expect((await post(body)).status).toBe(200);
    expect(peer.messages().map((message) => message.to)).toEqual([['a@example.com']]);
  });

  it('throttles with 429 TooManyRequestsException; the SDK reads Retry-After and retries unless maxAttempts is 1', async () => {
    peer.setFault((index) => (index === 0 ? { kind: 'throttle', retryAfterSeconds: 1 } : { kind: 'none' }));
    const error = await failure(client.send(new SendEmailCommand(email('a@example.com'))));
    expect([error.name, error.$metadata?.httpStatusCode]).toEqual(['TooManyRequestsException', 429]);
    expect(error.$response?.headers['retry-after']).toBe('1');
    expect([peer.requests(), peer.messages().length]).toEqual([1, 0]);

    const retrying = new SESv2Client({ region: peer.region, endpoint: peer.baseUrl, credentials: peer.credentials });
    peer.setFault((index) => (index === 1 ? { kind: 'throttle', retryAfterSeconds: 1 } : { kind: 'none' }));
    const started = Date.now();
    const sent = await retrying.send(new SendEmailCommand(email('a@example.com')));
    expect(sent.$metadata.attempts).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect([peer.requests(), peer.messages().length]).toEqual([3, 1]);
    retrying.destroy();
  });

  it('accepts, then answers 500: with the default retries the SDK sends it three times, with maxAttempts 1 once', async () => {
    peer.setFault({ kind: 'error-after-accept' });
    const once = await failure(client.send(new SendEmailCommand(email('a@example.com'))));
    expect([once.name, once.$metadata?.httpStatusCode]).toEqual(['InternalServiceErrorException', 500]);
    expect(peer.countByCorrelation(correlation)).toBe(1);

    const retrying = new SESv2Client({ region: peer.region, endpoint: peer.baseUrl, credentials: peer.credentials });
    const thrice = await failure(retrying.send(new SendEmailCommand(email('b@example.com'))));
    expect(thrice.$metadata?.attempts).toBe(3);
    expect(peer.messages().filter((message) => message.to[0] === 'b@example.com')).toHaveLength(3);
    retrying.destroy();
  });

  it('accepts, then drops the connection: the SDK raises ECONNRESET (retried by default, so bound it)', async () => {
    peer.setFault({ kind: 'drop-after-accept' });
    const error = await failure(client.send(bulk(['a@example.com', 'b@example.com'])));
    expect(error.code).toBe('ECONNRESET');
    expect(peer.messages().map((message) => message.answered)).toEqual(['dropped', 'dropped']);
    expect(peer.requests()).toBe(1);

    const retrying = new SESv2Client({ region: peer.region, endpoint: peer.baseUrl, credentials: peer.credentials });
    const again = await failure(retrying.send(new SendEmailCommand(email('c@example.com'))));
    expect([again.code, again.$metadata?.attempts]).toEqual(['ECONNRESET', 3]);
    expect(peer.messages().filter((message) => message.to[0] === 'c@example.com')).toHaveLength(3);
    retrying.destroy();
  });

  it('delays its answer past the request timeout: accepted, the SDK raises a TimeoutError only with throwOnRequestTimeout', async () => {
    // Without throwOnRequestTimeout the node handler only logs a warning and keeps waiting.
    const impatient = new SESv2Client({
      region: peer.region,
      endpoint: peer.baseUrl,
      credentials: peer.credentials,
      maxAttempts: 1,
      requestHandler: { requestTimeout: 200, throwOnRequestTimeout: true },
    });
    peer.setFault({ kind: 'delay', ms: 2_000 });
    const error = await failure(impatient.send(new SendEmailCommand(email('a@example.com'))));
    expect(error.name).toBe('TimeoutError');
    expect(peer.messages()).toHaveLength(1);
    impatient.destroy();
  });
});

describe('ses peer events', () => {
  it('build an event record the product parses back to the sent message: SES MessageId and the correlation tag', async () => {
    const peer = await startSesPeer();
    const client = new SESv2Client({ region: peer.region, endpoint: peer.baseUrl, credentials: peer.credentials, maxAttempts: 1 });
    try {
      const sent = await client.send(new SendEmailCommand(email('alice@example.com')));
      const [accepted] = peer.messages();
      if (!accepted) throw new Error('nothing accepted');
      const signer = createTestSnsSigner();
      const topic = 'arn:aws:sns:us-east-1:123456789012:ses-events';
      const now = new Date();
      const envelope = signer.sign({
        Type: 'Notification',
        MessageId: 'sns-1',
        TopicArn: topic,
        Message: JSON.stringify(sesEventRecord(accepted)),
        Timestamp: now.toISOString(),
      });
      const parsed = await parseSesWebhook({
        body: Buffer.from(JSON.stringify(envelope)),
        resolveKey: createSnsKeyResolver({ fetcher: async () => signer.certificatePem, now: () => now.getTime() }),
        allowedTopics: [topic],
        now,
      });
      expect(parsed).toMatchObject({
        ok: true,
        events: [{ type: 'delivered', correlationId: correlation, providerMessageId: sent.MessageId, recipient: 'alice@example.com' }],
      });
    } finally {
      client.destroy();
      await peer.stop();
    }
  });
});
