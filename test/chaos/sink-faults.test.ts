import { createServer, type Server } from 'node:http';
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { startSmtpSink, type FaultContext, type SmtpSink } from '@/testing/smtp-sink';

/** The sink's additive chaos features: per-message fault decisions and events for dropped messages. */

const correlation = 'fedcba9876543210fedcba9876543210';

function transportFor(sink: SmtpSink) {
  return nodemailer.createTransport({ host: '127.0.0.1', port: sink.port, secure: false, ignoreTLS: true, socketTimeout: 5_000, greetingTimeout: 2_000 });
}

function mail(corr: string) {
  return {
    from: 'notices@notices.test',
    to: 'bob@example.org',
    subject: 'x',
    text: 'hello',
    messageId: `<${corr}@notices.test>`,
    headers: { 'X-Notice-Correlation': corr },
  };
}

async function attempt(transport: ReturnType<typeof transportFor>, corr: string): Promise<number | 'ok' | 'lost'> {
  try {
    await transport.sendMail(mail(corr));
    return 'ok';
  } catch (error) {
    const code = (error as { responseCode?: number }).responseCode;
    return typeof code === 'number' ? code : 'lost';
  }
}

describe('smtp sink chaos faults', () => {
  let sink: SmtpSink | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    await sink?.stop();
    if (server) await new Promise<void>((resolve) => server?.close(() => resolve()));
    sink = undefined;
    server = undefined;
  });

  it('per-message: decides each DATA from the correlation and its earlier attempts, independent of other messages', async () => {
    sink = await startSmtpSink();
    const seen: FaultContext[] = [];
    sink.setFault({
      kind: 'per-message',
      decide: (context) => {
        seen.push(context);
        if (context.correlation !== correlation) return { kind: 'none' };
        return context.previousAttempts === 0 ? { kind: 'reject', code: 451 } : context.previousAttempts === 1 ? { kind: 'drop-after-data' } : { kind: 'none' };
      },
    });
    const transport = transportFor(sink);
    const other = '0'.repeat(32);
    expect(await attempt(transport, other)).toBe('ok');
    expect(await attempt(transport, correlation)).toBe(451);
    expect(await attempt(transport, correlation)).toBe('lost');
    expect(await attempt(transport, correlation)).toBe('ok');
    transport.close();
    expect(seen.map((c) => [c.correlation, c.previousAttempts, c.to])).toEqual([
      [other, 0, ['bob@example.org']],
      [correlation, 0, ['bob@example.org']],
      [correlation, 1, ['bob@example.org']],
      [correlation, 2, ['bob@example.org']],
    ]);
    expect(sink.rejections().map((r) => r.code)).toEqual([451]);
    expect(
      sink
        .messages()
        .filter((m) => m.correlation === correlation)
        .map((m) => m.outcome),
    ).toEqual(['dropped-after-data', 'accepted']);
    // setFault still replaces it: the per-message decision is just another fault.
    sink.setFault({ kind: 'reject', code: 550, times: 1 });
    const again = transportFor(sink);
    expect(await attempt(again, other)).toBe(550);
    expect(await attempt(again, other)).toBe('ok');
    again.close();
  });

  it('eventsForDropped: a dropped-after-data message gets its accepted event like an accepted one; off by default', async () => {
    const bodies: string[] = [];
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        response.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const eventsUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/events`;
    const secret = 'chaos-sink-secret-0123456789abcdef0123456789';

    for (const eventsForDropped of [false, true]) {
      bodies.length = 0;
      const current = await startSmtpSink({ eventsUrl, eventsSecret: secret, eventDelayMs: 5, eventTypes: ['accepted'], eventsForDropped });
      current.setFault({ kind: 'drop-after-data', times: 1 });
      const transport = transportFor(current);
      expect(await attempt(transport, correlation)).toBe('lost');
      transport.close();
      await current.flushEvents();
      const events = bodies.flatMap((body) => (JSON.parse(body) as { events: { type: string; correlation: string; providerMessageId: string }[] }).events);
      const [dropped] = current.messages();
      expect(dropped?.outcome).toBe('dropped-after-data');
      expect(events).toEqual(eventsForDropped ? [expect.objectContaining({ type: 'accepted', correlation, providerMessageId: dropped?.queueId })] : []);
      await current.stop();
    }
  });
});
