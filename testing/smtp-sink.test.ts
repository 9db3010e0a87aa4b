import { createServer, type Server } from 'node:http';
import nodemailer from 'nodemailer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyGenericSignature } from '@/lib/events/generic-signature';
import { parseSunkMessage, startSmtpSink, type SmtpSink } from './smtp-sink';

const correlation = '0123456789abcdef0123456789abcdef';
const messageId = `<${correlation}@notices.test>`;

function transportFor(sink: SmtpSink, socketTimeout = 5_000) {
  return nodemailer.createTransport({ host: '127.0.0.1', port: sink.port, secure: false, ignoreTLS: true, socketTimeout, greetingTimeout: 2_000 });
}

function mail(overrides: Record<string, unknown> = {}) {
  return {
    from: 'notices@notices.test',
    to: 'Alice@Example.com',
    subject: 'Your renewal — in 3 days',
    text: 'hello',
    messageId,
    headers: { 'X-Notice-Correlation': correlation },
    ...overrides,
  };
}

describe('smtp sink', () => {
  let sink: SmtpSink;
  afterEach(async () => {
    await sink.stop();
  });

  it('accepts a message with a unique queue id and parses our headers', async () => {
    sink = await startSmtpSink();
    expect(sink.url).toBe(`smtp://127.0.0.1:${sink.port}`);
    const transport = transportFor(sink);
    const first = await transport.sendMail(mail());
    const second = await transport.sendMail(mail({ headers: {}, messageId: '<other@elsewhere>' }));
    transport.close();
    expect(first.response).toMatch(/^250 Ok: queued as [0-9A-F]{16}$/);
    const messages = sink.messages();
    expect(messages).toHaveLength(2);
    expect(messages[0]?.queueId).not.toBe(messages[1]?.queueId);
    expect(first.response).toContain(messages[0]?.queueId);
    expect(messages[0]).toMatchObject({ outcome: 'accepted', correlation, messageId, to: ['alice@example.com'], subject: 'Your renewal — in 3 days' });
    expect(messages[1]?.correlation).toBeNull();
    expect(sink.countByCorrelation(correlation)).toBe(1);
    expect(sink.countByMessageId(messageId)).toBe(1);
    expect(sink.countByMessageId(`${correlation}@notices.test`)).toBe(1);
    expect(second.accepted).toHaveLength(1);
  });

  it('derives the correlation from our Message-ID when the header is absent', () => {
    const parsed = parseSunkMessage({ raw: `Message-ID: ${messageId}\r\nSubject: x\r\n\r\nbody`, to: ['a@b.c'], from: null, queueId: 'Q' });
    expect(parsed.correlation).toBe(correlation);
  });

  it('rejects at DATA end with 451 the given number of times, then accepts', async () => {
    sink = await startSmtpSink();
    sink.setFault({ kind: 'reject', code: 451, times: 1 });
    const transport = transportFor(sink);
    await expect(transport.sendMail(mail())).rejects.toMatchObject({ responseCode: 451 });
    expect(sink.messages()).toHaveLength(0);
    expect(sink.rejections()).toMatchObject([{ code: 451, stage: 'data', correlation }]);
    await transport.sendMail(mail());
    transport.close();
    expect(sink.countByCorrelation(correlation)).toBe(1);
  });

  it('rejects at RCPT with 550 until the fault is cleared', async () => {
    sink = await startSmtpSink();
    sink.setFault({ kind: 'reject', code: 550, at: 'rcpt' });
    const transport = transportFor(sink);
    await expect(transport.sendMail(mail())).rejects.toMatchObject({ responseCode: 550 });
    await expect(transport.sendMail(mail())).rejects.toMatchObject({ responseCode: 550 });
    expect(sink.messages()).toHaveLength(0);
    expect(sink.rejections().map((r) => r.stage)).toEqual(['rcpt', 'rcpt']);
    sink.setFault({ kind: 'none' });
    await transport.sendMail(mail());
    transport.close();
    expect(sink.messages()).toHaveLength(1);
  });

  it('stall: holds the reply; the message counts only once released', async () => {
    sink = await startSmtpSink();
    sink.setFault({ kind: 'stall' });
    const transport = transportFor(sink);
    const sending = transport.sendMail(mail());
    await sink.waitFor(() => sink.stalled().length === 1);
    expect(sink.messages()).toHaveLength(0);
    expect(sink.releaseStalled()).toBe(1);
    const info = await sending;
    transport.close();
    expect(info.response).toMatch(/queued as/);
    expect(sink.countByCorrelation(correlation)).toBe(1);
    expect(sink.stalled()).toHaveLength(0);
  });

  it('stall: a client that times out leaves an unknown outcome; the sink still accepts after ms', async () => {
    sink = await startSmtpSink();
    sink.setFault({ kind: 'stall', ms: 1_500 });
    const transport = transportFor(sink, 300);
    await expect(transport.sendMail(mail())).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    transport.close();
    expect(sink.countByCorrelation(correlation)).toBe(0);
    await sink.waitFor(1, 5_000);
    expect(sink.countByCorrelation(correlation)).toBe(1);
  });

  it('drop-after-data: records the message as received, then cuts the connection without a reply', async () => {
    sink = await startSmtpSink();
    sink.setFault({ kind: 'drop-after-data', times: 1 });
    const transport = transportFor(sink);
    const error: unknown = await transport.sendMail(mail()).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as { responseCode?: number }).responseCode).toBeUndefined();
    expect(sink.messages()).toMatchObject([{ outcome: 'dropped-after-data', correlation }]);
    expect(sink.countByCorrelation(correlation)).toBe(1);
    await transport.sendMail(mail());
    transport.close();
    expect(sink.messages().map((m) => m.outcome)).toEqual(['dropped-after-data', 'accepted']);
  });

  it('waitFor rejects when the deadline passes', async () => {
    sink = await startSmtpSink();
    await expect(sink.waitFor(1, 100)).rejects.toThrow(/not met within 100 ms/);
  });
});

describe('smtp sink events', () => {
  const secret = 'sink-events-secret-0123456789abcdef0123';
  let server: Server;
  let eventsUrl: string;
  const bodies: { body: string; timestamp: string | null; signature: string | null }[] = [];
  let sink: SmtpSink;
  let failNext = 0;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        bodies.push({
          body: Buffer.concat(chunks).toString('utf8'),
          timestamp: request.headers['x-notice-timestamp']?.toString() ?? null,
          signature: request.headers['x-notice-signature']?.toString() ?? null,
        });
        if (failNext > 0) {
          failNext -= 1;
          response.writeHead(503).end('{}');
          return;
        }
        response.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    eventsUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/events`;
  });
  afterAll(async () => {
    await sink.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('posts signed accepted+delivered events, and a hard bounce for bouncing recipients', async () => {
    sink = await startSmtpSink({ eventsUrl, eventsSecret: secret, eventDelayMs: 10, bounce: (rcpt) => rcpt.startsWith('bounce') });
    const transport = transportFor(sink);
    await transport.sendMail(mail());
    await transport.sendMail(mail({ to: 'bounce@example.com' }));
    transport.close();
    await sink.flushEvents();
    expect(sink.postedEvents().map((p) => p.status)).toEqual([200, 200]);
    expect(bodies).toHaveLength(2);
    const all = bodies.flatMap((entry) => {
      expect(verifyGenericSignature({ secret, body: entry.body, timestampHeader: entry.timestamp, signatureHeader: entry.signature })).toEqual({ ok: true });
      return (JSON.parse(entry.body) as { events: { type: string; correlation: string; providerMessageId: string; recipient: string; bounceType?: string }[] })
        .events;
    });
    const [first, second] = sink.messages();
    expect(all).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'accepted', correlation, providerMessageId: first?.queueId, recipient: 'alice@example.com' }),
        expect.objectContaining({ type: 'delivered', correlation, providerMessageId: first?.queueId }),
        expect.objectContaining({ type: 'bounce', bounceType: 'hard', recipient: 'bounce@example.com', providerMessageId: second?.queueId }),
      ]),
    );
    expect(all).toHaveLength(3);
    await sink.stop();
  });

  it('retries a batch the console answered with a 5xx', async () => {
    bodies.length = 0;
    failNext = 2;
    sink = await startSmtpSink({ eventsUrl, eventsSecret: secret, eventDelayMs: 10, eventRetryDelaysMs: [20, 20, 20] });
    const transport = transportFor(sink);
    await transport.sendMail(mail());
    transport.close();
    await sink.flushEvents();
    expect(bodies).toHaveLength(3);
    expect(sink.postedEvents().map((p) => p.status)).toEqual([200]);
  });

  it('reports an unreachable console after its retries', async () => {
    const unreachable = await startSmtpSink({ eventsUrl: 'http://127.0.0.1:1/events', eventsSecret: secret, eventDelayMs: 10, eventRetryDelaysMs: [10] });
    const transport = transportFor(unreachable);
    await transport.sendMail(mail());
    transport.close();
    await unreachable.flushEvents();
    expect(unreachable.postedEvents()).toMatchObject([{ status: null }]);
    await unreachable.stop();
  });
});
