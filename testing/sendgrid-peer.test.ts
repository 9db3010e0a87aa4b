import { Client } from '@sendgrid/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CORRELATION_TAG } from '@/lib/events/types';
import { rejection } from './http-peer';
import { parseSendgridWebhook } from '@/lib/events/providers/sendgrid';
import { createTestSendgridSigner } from './provider-events';
import { parseLogsQuery, sendgridWebhookEvents, startSendgridPeer, type SendgridPeer } from './sendgrid-peer';

const correlation = 'abcdef0123456789abcdef0123456789';

function correlationOf(index: number): string {
  return index.toString(16).padStart(32, '0');
}

function mailSend(recipients: string[]) {
  return {
    from: { email: 'notices@notices.test' },
    subject: 'Your renewal — in 3 days',
    content: [{ type: 'text/plain', value: 'hello' }],
    custom_args: { kind: 'renewal_notice_t72' },
    personalizations: recipients.map((email, index) => ({ to: [{ email }], custom_args: { [CORRELATION_TAG]: correlationOf(index) } })),
  };
}

type SdkError = Error & { code?: number | string; response?: { headers: Record<string, string>; body: unknown } };

const failure = (call: Promise<unknown>) => rejection(call, (error): error is SdkError => error instanceof Error);

function clientFor(peer: SendgridPeer, apiKey = peer.apiKey, timeout?: number): Client {
  const client = new Client();
  client.setApiKey(apiKey);
  // setApiKey resets the base URL to the region's host, so the peer's comes after it.
  client.setDefaultRequest('baseUrl', `${peer.baseUrl}/`);
  // The client hands its default request to axios whole; its types do not list axios's timeout.
  if (timeout !== undefined) client.setDefaultRequest(Object.assign({ url: '' }, { timeout }));
  return client;
}

describe('sendgrid peer, through the official @sendgrid/client', () => {
  let peer: SendgridPeer;
  let client: Client;
  beforeEach(async () => {
    peer = await startSendgridPeer();
    client = clientFor(peer);
  });
  afterEach(async () => {
    await peer.stop();
  });

  it('accepts a mail send with 202, one X-Message-Id and an empty body; custom_args per recipient', async () => {
    const [response, body] = await client.request({ url: '/v3/mail/send', method: 'POST', body: mailSend(['Alice@Example.com', 'bob@example.com']) });
    expect(response.statusCode).toBe(202);
    expect(body).toBe('');
    const id = response.headers['x-message-id'];
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(peer.messages().map((message) => [message.to, message.xMessageId, message.customArgs])).toEqual([
      ['alice@example.com', id, { kind: 'renewal_notice_t72', [CORRELATION_TAG]: correlationOf(0) }],
      ['bob@example.com', id, { kind: 'renewal_notice_t72', [CORRELATION_TAG]: correlationOf(1) }],
    ]);
    expect(peer.messages()[0]?.sgMessageId.startsWith(`${id}.`)).toBe(true);
  });

  it('takes 1000 personalizations and refuses 1001 whole with 400 {errors: [{message, field, help}]}', async () => {
    const recipients = Array.from({ length: 1001 }, (_, index) => `r${index}@example.com`);
    const error = await failure(client.request({ url: '/v3/mail/send', method: 'POST', body: mailSend(recipients) }));
    expect(error.code).toBe(400);
    expect(error.response?.body).toEqual({ errors: [expect.objectContaining({ field: 'personalizations', help: expect.stringContaining('errors.html') })] });
    expect(peer.messages()).toHaveLength(0);
    const [response] = await client.request({ url: '/v3/mail/send', method: 'POST', body: mailSend(recipients.slice(0, 1000)) });
    expect(response.statusCode).toBe(202);
    expect(peer.messages()).toHaveLength(1000);
  });

  it('rejects the whole request when one recipient is refused: no per-item result, nothing sent', async () => {
    peer.refuse((to) => (to === 'bad@example.com' ? {} : null));
    const error = await failure(
      client.request({ url: '/v3/mail/send', method: 'POST', body: mailSend(['a@example.com', 'bad@example.com', 'c@example.com']) }),
    );
    expect(error.code).toBe(400);
    expect(error.response?.body).toEqual({
      errors: [
        { message: 'Does not contain a valid address.', field: 'personalizations.1.to.0.email', help: expect.stringContaining('#message.personalizations.to') },
      ],
    });
    expect(peer.messages()).toHaveLength(0);
  });

  it('refuses a missing or wrong key with 401 and accepts nothing', async () => {
    const wrong = clientFor(peer, 'SG.not.the-key');
    const error = await failure(wrong.request({ url: '/v3/mail/send', method: 'POST', body: mailSend(['a@example.com']) }));
    expect(error.code).toBe(401);
    expect(error.response?.body).toMatchObject({ errors: [{ message: expect.any(String), field: null }] });
    const missing = await fetch(`${peer.baseUrl}/v3/mail/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(mailSend(['a@example.com'])),
    });
    expect(missing.status).toBe(401);
    expect(peer.messages()).toHaveLength(0);
  });

  it('throttles with 429: the client does not retry and hands back Retry-After and X-RateLimit-Reset', async () => {
    peer.setFault({ kind: 'throttle', retryAfterSeconds: 3 });
    const error = await failure(client.request({ url: '/v3/mail/send', method: 'POST', body: mailSend(['a@example.com']) }));
    expect(error.code).toBe(429);
    expect(error.response?.headers['retry-after']).toBe('3');
    expect(Number(error.response?.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    expect([peer.requests(), peer.messages().length]).toEqual([1, 0]);
  });

  it('accepts, then answers 500: recorded as accepted, the client raises a ResponseError with code 500, no retry', async () => {
    peer.setFault({ kind: 'error-after-accept' });
    const error = await failure(client.request({ url: '/v3/mail/send', method: 'POST', body: mailSend(['a@example.com', 'b@example.com']) }));
    expect(error.code).toBe(500);
    expect(peer.messages().map((message) => message.answered)).toEqual(['server-error', 'server-error']);
    expect(peer.requests()).toBe(1);
  });

  it('accepts, then drops the connection: the client raises axios ECONNRESET ("socket hang up")', async () => {
    peer.setFault({ kind: 'drop-after-accept' });
    const error = await failure(client.request({ url: '/v3/mail/send', method: 'POST', body: mailSend(['a@example.com']) }));
    expect([error.code, error.message]).toEqual(['ECONNRESET', 'socket hang up']);
    expect(peer.messages().map((message) => message.answered)).toEqual(['dropped']);
  });

  it('delays its answer past the request timeout: accepted, the client raises ECONNABORTED', async () => {
    const impatient = clientFor(peer, peer.apiKey, 200);
    peer.setFault({ kind: 'delay', ms: 2_000 });
    const error = await failure(impatient.request({ url: '/v3/mail/send', method: 'POST', body: mailSend(['a@example.com']) }));
    expect(error.code).toBe('ECONNABORTED');
    expect(peer.messages()).toHaveLength(1);
  });

  it('finds accepted messages in Email Logs by to_email and time, and their custom_args by sg_message_id', async () => {
    peer.setFault({ kind: 'drop-after-accept' });
    await failure(client.request({ url: '/v3/mail/send', method: 'POST', body: mailSend(['alice@example.com']) }));
    peer.setFault({ kind: 'none' });
    await client.request({ url: '/v3/mail/send', method: 'POST', body: mailSend(['bob@example.com']) });
    const since = new Date(Date.now() - 60_000).toISOString();

    const [, found] = await client.request({
      url: '/v3/logs',
      method: 'POST',
      body: { query: `to_email = "Alice@example.com" AND sg_message_id_created_at >= TIMESTAMP "${since}"`, limit: 10 },
    });
    const messages = (found as { messages: { sg_message_id: string; to_email: string; status: string }[] }).messages;
    expect(messages.map((message) => [message.to_email, message.status])).toEqual([['alice@example.com', 'processed']]);
    const [, detail] = await client.request({ url: `/v3/logs/${messages[0]?.sg_message_id}`, method: 'GET' });
    expect(detail).toMatchObject({ to_email: 'alice@example.com', custom_args: { [CORRELATION_TAG]: correlationOf(0) } });

    const [, none] = await client.request({
      url: '/v3/logs',
      method: 'POST',
      body: { query: `to_email = "alice@example.com" AND sg_message_id_created_at > TIMESTAMP "${new Date(Date.now() + 60_000).toISOString()}"` },
    });
    expect(none).toEqual({ messages: [] });
    const invalid = await failure(client.request({ url: '/v3/logs', method: 'POST', body: { query: `custom_args.${CORRELATION_TAG} = "${correlation}"` } }));
    expect(invalid.code).toBe(400);
    const missing = await failure(client.request({ url: '/v3/logs/not-a-message', method: 'GET' }));
    expect(missing.code).toBe(404);
  });
});

describe('sendgrid peer webhooks', () => {
  it('build Event Webhook entries the product parses back to the sent message: X-Message-Id and correlation', async () => {
    const peer = await startSendgridPeer();
    try {
      const [response] = await clientFor(peer).request({ url: '/v3/mail/send', method: 'POST', body: mailSend(['alice@example.com']) });
      const [accepted] = peer.messages();
      if (!accepted) throw new Error('nothing accepted');
      const signer = createTestSendgridSigner();
      const body = JSON.stringify(sendgridWebhookEvents(accepted));
      const now = new Date();
      const parsed = parseSendgridWebhook({
        headers: new Headers(signer.sign(body, Math.floor(now.getTime() / 1000))),
        body: Buffer.from(body),
        publicKey: signer.publicKeyBase64,
        now,
      });
      const link = { correlationId: correlationOf(0), providerMessageId: response.headers['x-message-id'], recipient: 'alice@example.com' };
      expect(parsed).toMatchObject({
        ok: true,
        events: [
          { type: 'accepted', rawType: 'processed', ...link },
          { type: 'delivered', rawType: 'delivered', ...link },
        ],
      });
    } finally {
      await peer.stop();
    }
  });
});

describe('email logs query language', () => {
  it('reads the documented fields and operators, joined by AND', () => {
    expect(
      parseLogsQuery(`to_email = "a@example.com" AND status IN ('delivered', 'processed') AND sg_message_id_created_at >= TIMESTAMP "2026-01-01T00:00:00Z"`),
    ).toEqual([
      { field: 'to_email', op: '=', value: 'a@example.com' },
      { field: 'status', op: 'IN', values: ['delivered', 'processed'] },
      { field: 'sg_message_id_created_at', op: '>=', value: new Date('2026-01-01T00:00:00Z') },
    ]);
  });

  it('keeps an AND inside a quoted value', () => {
    expect(parseLogsQuery('subject = "Terms AND conditions" AND to_email = "a@example.com"')).toEqual([
      { field: 'subject', op: '=', value: 'Terms AND conditions' },
      { field: 'to_email', op: '=', value: 'a@example.com' },
    ]);
  });

  it('refuses unknown fields, wrong operators and nesting', () => {
    expect(parseLogsQuery('from_email = "a@example.com"')).toEqual(expect.any(String));
    expect(parseLogsQuery("to_email IN ('a@example.com')")).toEqual(expect.any(String));
    expect(parseLogsQuery('(to_email = "a@example.com")')).toEqual(expect.any(String));
  });
});
