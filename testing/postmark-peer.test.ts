import { Errors, ServerClient, type Models } from 'postmark';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CORRELATION_TAG } from '@/lib/events/types';
import { rejection } from './http-peer';
import { parsePostmarkWebhook } from '@/lib/events/providers/postmark';
import { parseEasternWallClock, postmarkDate, postmarkDeliveryWebhook, startPostmarkPeer, type PostmarkPeer } from './postmark-peer';

const correlation = 'abcdef0123456789abcdef0123456789';

function message(to: string, extra: Partial<Models.Message> = {}): Models.Message {
  return {
    From: 'notices@notices.test',
    To: to,
    Subject: 'Your renewal — in 3 days',
    TextBody: 'hello',
    HtmlBody: '<p>hello</p>',
    MessageStream: 'outbound',
    Metadata: { [CORRELATION_TAG]: correlation },
    ...extra,
  };
}

const failure = (call: Promise<unknown>) => rejection(call, (error): error is Errors.PostmarkError => error instanceof Errors.PostmarkError);

describe('postmark peer, through the official postmark client', () => {
  let peer: PostmarkPeer;
  let client: ServerClient;
  beforeEach(async () => {
    peer = await startPostmarkPeer();
    client = new ServerClient(peer.serverToken, { useHttps: false, requestHost: peer.requestHost, timeout: 5 });
  });
  afterEach(async () => {
    await peer.stop();
  });

  it('sends one message and answers with its MessageID and an Eastern SubmittedAt', async () => {
    const sent = await client.sendEmail(message('Alice@Example.com'));
    expect(sent).toMatchObject({ ErrorCode: 0, Message: 'OK', To: 'alice@example.com' });
    expect(sent.SubmittedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}-0[45]:00$/);
    expect(peer.messages()).toEqual([
      expect.objectContaining({ messageId: sent.MessageID, to: ['alice@example.com'], metadata: { [CORRELATION_TAG]: correlation }, answered: 'ok' }),
    ]);
    expect(peer.countByCorrelation(correlation)).toBe(1);
  });

  it('answers a batch with one result per message in request order, HTTP 200 even when an item fails', async () => {
    peer.refuse((to) => (to === 'bounced@example.com' ? { errorCode: 406 } : null));
    const results = await client.sendEmailBatch([message('a@example.com'), message('bounced@example.com'), message('c@example.com')]);
    expect(results.map((result) => [result.ErrorCode, result.To])).toEqual([
      [0, 'a@example.com'],
      [406, 'bounced@example.com'],
      [0, 'c@example.com'],
    ]);
    expect(results[1]?.MessageID).toBeUndefined();
    expect(results[1]?.Message).toContain('Found inactive addresses: bounced@example.com.');
    expect(peer.messages().map((accepted) => accepted.messageId)).toEqual([results[0]?.MessageID, results[2]?.MessageID]);
  });

  it('refuses a single message for its recipient with 422, which the SDK raises as its typed error', async () => {
    peer.refuse((to) => (to === 'bounced@example.com' ? { errorCode: 406 } : null));
    const error = await failure(client.sendEmail(message('bounced@example.com')));
    expect(error).toBeInstanceOf(Errors.InactiveRecipientsError);
    expect((error as Errors.InactiveRecipientsError).recipients).toEqual(['bounced@example.com']);
    expect([error.statusCode, error.code]).toEqual([422, 406]);
    expect(peer.messages()).toHaveLength(0);
  });

  it('refuses a batch over 500 messages whole (ErrorCode 410) and takes 500', async () => {
    const many = Array.from({ length: 501 }, (_, index) => message(`r${index}@example.com`));
    const error = await failure(client.sendEmailBatch(many));
    expect(error).toBeInstanceOf(Errors.ApiInputError);
    expect([error.statusCode, error.code]).toEqual([422, 410]);
    expect(peer.messages()).toHaveLength(0);
    expect(await client.sendEmailBatch(many.slice(0, 500))).toHaveLength(500);
  });

  it('refuses a missing or wrong server token with 401 {ErrorCode: 10}, accepting nothing', async () => {
    const wrong = new ServerClient('not-the-token', { useHttps: false, requestHost: peer.requestHost });
    const error = await failure(wrong.sendEmailBatch([message('a@example.com')]));
    expect(error).toBeInstanceOf(Errors.InvalidAPIKeyError);
    expect([error.statusCode, error.code]).toEqual([401, 10]);
    const missing = await fetch(`${peer.baseUrl}/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(message('a@example.com')),
    });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ ErrorCode: 10 });
    expect(peer.messages()).toHaveLength(0);
  });

  it('throttles with 429: the SDK raises RateLimitExceededError, does not retry, and hides Retry-After unless given a fetch', async () => {
    peer.setFault((index) => (index === 0 ? { kind: 'throttle', retryAfterSeconds: 7 } : { kind: 'none' }));
    const error = await failure(client.sendEmail(message('a@example.com')));
    expect(error).toBeInstanceOf(Errors.RateLimitExceededError);
    expect(error.statusCode).toBe(429);
    expect(peer.requests()).toBe(1);
    expect(peer.messages()).toHaveLength(0);
    // The SDK's documented `fetch` option is where a caller reads the header.
    const seen: (string | null)[] = [];
    const reading = new ServerClient(peer.serverToken, {
      useHttps: false,
      requestHost: peer.requestHost,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        seen.push(response.headers.get('retry-after'));
        return response;
      },
    });
    peer.setFault({ kind: 'throttle', retryAfterSeconds: 7 });
    await failure(reading.sendEmail(message('a@example.com')));
    expect(seen).toEqual(['7']);
  });

  it('accepts, then answers 500: recorded as accepted, the SDK raises InternalServerError', async () => {
    peer.setFault({ kind: 'error-after-accept' });
    const error = await failure(client.sendEmailBatch([message('a@example.com'), message('b@example.com')]));
    expect(error).toBeInstanceOf(Errors.InternalServerError);
    expect(error.statusCode).toBe(500);
    expect(peer.messages().map((accepted) => [accepted.to[0], accepted.answered])).toEqual([
      ['a@example.com', 'server-error'],
      ['b@example.com', 'server-error'],
    ]);
    expect(peer.requests()).toBe(1);
  });

  it('accepts, then drops the connection: recorded as accepted, the SDK raises a PostmarkError with no status', async () => {
    peer.setFault({ kind: 'drop-after-accept' });
    const error = await failure(client.sendEmail(message('a@example.com')));
    expect(error.constructor).toBe(Errors.PostmarkError);
    expect([error.statusCode, error.code]).toEqual([0, 0]);
    expect(error.message).toBe('fetch failed');
    expect(peer.messages()).toEqual([expect.objectContaining({ answered: 'dropped' })]);
    expect(peer.requests()).toBe(1);
  });

  it('delays its answer past the client timeout: recorded as accepted, the SDK raises a timeout', async () => {
    const impatient = new ServerClient(peer.serverToken, { useHttps: false, requestHost: peer.requestHost, timeout: 0.2 });
    peer.setFault({ kind: 'delay', ms: 2_000 });
    const error = await failure(impatient.sendEmail(message('a@example.com')));
    expect([error.statusCode, error.message]).toEqual([0, 'The operation was aborted due to timeout']);
    expect(peer.messages()).toHaveLength(1);
    peer.setFault({ kind: 'delay', ms: 50 });
    expect((await client.sendEmail(message('b@example.com'))).ErrorCode).toBe(0);
  });

  it('finds accepted messages by recipient and metadata through the Messages API, Eastern dates', async () => {
    peer.setFault({ kind: 'drop-after-accept' });
    await failure(client.sendEmail(message('Alice@example.com')));
    peer.setFault({ kind: 'none' });
    await client.sendEmail(message('alice@example.com', { Metadata: { [CORRELATION_TAG]: 'f'.repeat(32) } }));
    await client.sendEmail(message('bob@example.com'));

    const found = await client.getOutboundMessages({ count: 50, offset: 0, recipient: 'alice@example.com', [`metadata_${CORRELATION_TAG}`]: correlation });
    expect(found.TotalCount).toBe(1);
    expect(found.Messages[0]).toMatchObject({
      MessageID: peer.messages()[0]?.messageId,
      Recipients: ['alice@example.com'],
      Metadata: { [CORRELATION_TAG]: correlation },
    });
    expect(found.Messages[0]?.ReceivedAt).toMatch(/-0[45]:00$/);

    const sentAt = peer.messages()[0]?.receivedAt ?? new Date();
    const wallClock = (instant: Date) => postmarkDate(instant).slice(0, 19);
    const before = await client.getOutboundMessages({
      count: 50,
      offset: 0,
      recipient: 'alice@example.com',
      toDate: wallClock(new Date(sentAt.getTime() - 2_000)),
    });
    expect(before.TotalCount).toBe(0);
    const since = await client.getOutboundMessages({
      count: 50,
      offset: 0,
      recipient: 'alice@example.com',
      fromDate: wallClock(new Date(sentAt.getTime() - 2_000)),
    });
    expect(since.TotalCount).toBe(2);

    const two = await fetch(`${peer.baseUrl}/messages/outbound?count=10&offset=0&metadata_a=1&metadata_b=2`, {
      headers: { 'x-postmark-server-token': peer.serverToken },
    });
    expect(two.status).toBe(422);
    const noCount = await fetch(`${peer.baseUrl}/messages/outbound?offset=0`, { headers: { 'x-postmark-server-token': peer.serverToken } });
    expect(noCount.status).toBe(422);
  });
});

describe('postmark peer webhooks', () => {
  it('build a Delivery record the product parses back to the sent message: MessageID and correlation', async () => {
    const peer = await startPostmarkPeer();
    try {
      const client = new ServerClient(peer.serverToken, { useHttps: false, requestHost: peer.requestHost });
      const sent = await client.sendEmail(message('alice@example.com'));
      const [accepted] = peer.messages();
      if (!accepted) throw new Error('nothing accepted');
      const body = Buffer.from(JSON.stringify(postmarkDeliveryWebhook(accepted)));
      const headers = new Headers({ authorization: `Basic ${Buffer.from('hook:secret').toString('base64')}` });
      const parsed = parsePostmarkWebhook({ headers, body, user: 'hook', password: 'secret' });
      expect(parsed).toMatchObject({
        ok: true,
        events: [{ type: 'delivered', correlationId: correlation, providerMessageId: sent.MessageID, recipient: 'alice@example.com' }],
      });
    } finally {
      await peer.stop();
    }
  });
});

describe('postmark dates', () => {
  it('are Eastern wall-clock time with the offset of that day (EST and EDT)', () => {
    expect(postmarkDate(new Date('2026-01-15T17:00:00.123Z'))).toBe('2026-01-15T12:00:00.1230000-05:00');
    expect(postmarkDate(new Date('2026-07-15T16:00:00Z'))).toBe('2026-07-15T12:00:00.0000000-04:00');
  });

  it('read fromdate/todate as Eastern wall clock, a bare todate through the end of that day', () => {
    expect(parseEasternWallClock('2026-01-15T12:00:00', false)?.toISOString()).toBe('2026-01-15T17:00:00.000Z');
    expect(parseEasternWallClock('2026-07-15T12:00', false)?.toISOString()).toBe('2026-07-15T16:00:00.000Z');
    expect(parseEasternWallClock('2026-07-15', true)?.toISOString()).toBe('2026-07-16T03:59:59.999Z');
    expect(parseEasternWallClock('15/07/2026', false)).toBeNull();
  });
});
