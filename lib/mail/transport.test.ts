import { describe, expect, it, vi } from 'vitest';
import { freePort } from '@/db/embedded';
import { correlationOf } from '@/lib/ledger/notice-key';
import { startSilentPeer, startSmtpSink } from '@/testing/smtp-sink';
import type { SmtpFailure } from './smtp-pool';
import { classifySmtpFailure, correlationHeaders, createMailTransport, listUnsubscribeHeaders, providerIdFromResponse } from './transport';

const failure = (phase: SmtpFailure['phase'], code: number | null, response: string | null = null): SmtpFailure => ({
  phase,
  code,
  response,
  errorClass: code === null ? 'connection_lost' : `smtp_${code}`,
});

describe('classifySmtpFailure', () => {
  it('a 4xx before the body is a definite, temporary rejection', () => {
    expect(classifySmtpFailure(failure('rcpt_to', 451))).toEqual({
      kind: 'rejected',
      permanent: false,
      code: 451,
      errorClass: 'smtp_451',
      failure: 'nothing_left',
      phase: 'rcpt_to',
    });
  });

  it('a 5xx at RCPT is refused for this recipient', () => {
    expect(classifySmtpFailure(failure('rcpt_to', 550))).toMatchObject({ kind: 'rejected', permanent: true, failure: 'recipient_refused' });
  });

  it('535 at AUTH is our configuration, never permanent for the notice', () => {
    expect(classifySmtpFailure(failure('auth', 535))).toMatchObject({ kind: 'rejected', permanent: false, failure: 'config_broken', code: 535 });
  });

  it('a lost connection is unknown only once the body was handed over', () => {
    expect(classifySmtpFailure(failure('greeting', null))).toMatchObject({ kind: 'rejected', failure: 'nothing_left' });
    expect(classifySmtpFailure(failure('mail_from', null))).toMatchObject({ kind: 'rejected', failure: 'nothing_left' });
    expect(classifySmtpFailure(failure('body', null))).toEqual({ kind: 'unknown', errorClass: 'connection_lost', phase: 'body' });
  });
});

describe('a reply that says the mailbox does not exist', () => {
  it.each([
    '550 5.1.1 <a@b.test>: Recipient address rejected: User unknown in local recipient table',
    '550-5.1.1 The email account that you tried to reach does not exist.',
    '550 No such user here',
    '553 sorry, user unknown',
    '550 Mailbox not found',
  ])('%s → permanent, mailbox unknown', (response) => {
    const code = Number(response.slice(0, 3));
    expect(classifySmtpFailure(failure('rcpt_to', code, response))).toEqual({
      kind: 'rejected',
      permanent: true,
      code,
      errorClass: `smtp_${code}`,
      failure: 'recipient_refused',
      phase: 'rcpt_to',
      mailboxUnknown: true,
    });
  });

  it.each(['550 Mailbox unavailable', '550 5.7.1 Message rejected as spam', '554 5.7.1 Relay access denied', '451 4.1.1 user unknown, try later'])(
    '%s → not a missing mailbox',
    (response) => {
      const outcome = classifySmtpFailure(failure('rcpt_to', Number(response.slice(0, 3)), response));
      expect(outcome).not.toHaveProperty('mailboxUnknown');
    },
  );
});

describe('listUnsubscribeHeaders', () => {
  it('sets both RFC 8058 headers for a notice with a URI, none without', () => {
    expect(listUnsubscribeHeaders({ https: 'https://n.test/u/t', mailto: 'mailto:u@n.test?subject=unsubscribe%20t' })).toEqual({
      'List-Unsubscribe': '<https://n.test/u/t>, <mailto:u@n.test?subject=unsubscribe%20t>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    expect(listUnsubscribeHeaders({ https: 'https://n.test/u/t', mailto: null })).toEqual({
      'List-Unsubscribe': '<https://n.test/u/t>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    expect(listUnsubscribeHeaders(null)).toEqual({});
    expect(listUnsubscribeHeaders(undefined)).toEqual({});
  });
});

describe('providerIdFromResponse', () => {
  it('extracts the relay queue id', () => {
    expect(providerIdFromResponse('250 Ok: queued as 9F3A1C')).toBe('9F3A1C');
    expect(providerIdFromResponse('250 2.0.0 OK 1700000000 abc.123 - gsmtp')).toBe('OK 1700000000 abc.123 - gsmtp');
    expect(providerIdFromResponse(undefined)).toBeNull();
  });
});

describe('correlationHeaders', () => {
  it('carries the correlation in our header and in each relay metadata header', () => {
    const corr = 'ab'.repeat(16);
    expect(correlationHeaders(corr)).toEqual({
      'X-Notice-Correlation': corr,
      'X-SES-MESSAGE-TAGS': `notice_correlation=${corr}`,
      'X-PM-Metadata-notice_correlation': corr,
      'X-SMTPAPI': { prepared: true, value: `{"unique_args":{"notice_correlation":"${corr}"}}` },
    });
  });

  it("reaches the relay as each provider reads it: SendGrid's X-SMTPAPI as JSON on one line, not as encoded words", async () => {
    const sink = await startSmtpSink();
    const transport = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'from@example.org', messageIdDomain: 'example.org', maxConnections: 1 });
    try {
      const noticeKey = 'cd'.repeat(32);
      const mail = { noticeKey, to: 'r@example.org', subject: 's', text: 'a text long enough to be encoded '.repeat(4), html: `<p>${'html '.repeat(40)}</p>` };
      expect(await transport.send(mail)).toMatchObject({ kind: 'accepted' });
      const [received] = sink.messages();
      const line = received?.raw.split('\r\n').find((text) => text.startsWith('X-SMTPAPI:')) ?? '';
      expect(line.length).toBeLessThanOrEqual(998);
      expect(JSON.parse(line.slice('X-SMTPAPI:'.length))).toEqual({ unique_args: { notice_correlation: correlationOf(noticeKey) } });
      expect(received?.headers['x-ses-message-tags']).toBe(`notice_correlation=${correlationOf(noticeKey)}`);
      expect(received?.headers['x-pm-metadata-notice_correlation']).toBe(correlationOf(noticeKey));
    } finally {
      transport.close();
      await sink.stop();
    }
  });
});

describe('pooled transport against a real SMTP peer', () => {
  const send = (transport: ReturnType<typeof createMailTransport>, n: number, signal?: AbortSignal) =>
    transport.send(
      { noticeKey: n.toString(16).padStart(2, '0').repeat(32), to: `r${String(n)}@example.org`, subject: 's', text: 't', html: '<p>t</p>' },
      { signal },
    );

  it('never resends a message whose connection was cut after DATA: unknown, and the peer holds it once', async () => {
    const sink = await startSmtpSink();
    const transport = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'from@example.org', messageIdDomain: 'example.org', maxConnections: 2 });
    try {
      expect(await send(transport, 1)).toMatchObject({ kind: 'accepted' });
      sink.setFault({ kind: 'drop-after-data', times: 1 });
      expect(await send(transport, 2)).toEqual({ kind: 'unknown', errorClass: 'connection_lost', phase: 'body' });
      // A requeue would reach the peer on another pooled connection within milliseconds.
      expect(await send(transport, 3)).toMatchObject({ kind: 'accepted' });
      expect(sink.countByCorrelation(correlationOf('02'.repeat(32)))).toBe(1);
      expect(sink.messages()).toHaveLength(3);
    } finally {
      transport.close();
      await sink.stop();
    }
  });

  it('prepare builds the message when it is composed, before the claim, and returns a stand-in without its parts: each send of it hands over exactly those bytes', async () => {
    const sink = await startSmtpSink();
    const transport = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'from@example.org', messageIdDomain: 'example.org', maxConnections: 1 });
    try {
      const mail = { noticeKey: '0a'.repeat(32), to: 'r10@example.org', subject: 'as composed', text: 'the text part', html: '<p>the html part</p>' };
      if (!transport.prepare) throw new Error('the SMTP transport prepares');
      const kept = await transport.prepare(mail);
      // What the send path keeps until the send holds none of the rendered message.
      expect(kept).toMatchObject({ noticeKey: mail.noticeKey, to: mail.to, subject: '', text: '', html: '' });
      // Whatever happens to the object after it was prepared, the send carries what was built.
      mail.subject = 'changed after prepare';
      expect(await transport.send(kept)).toMatchObject({ kind: 'accepted' });
      // The same stand-in sent again: the same bytes again, never an empty message.
      expect(await transport.send(kept)).toMatchObject({ kind: 'accepted' });
      // A message that was not prepared is built at its send.
      expect(await transport.send(mail)).toMatchObject({ kind: 'accepted' });
      const received = sink.messages();
      expect(received.map((m) => m.subject)).toEqual(['as composed', 'as composed', 'changed after prepare']);
      expect(received[1]?.raw).toBe(received[0]?.raw);
      expect(received[0]?.raw).toContain('the html part');
      expect(received[0]?.raw).toContain('the text part');
    } finally {
      transport.close();
      await sink.stop();
    }
  });

  it.each([
    { pipelining: true, envelopeWrites: 1 },
    { pipelining: false, envelopeWrites: 3 },
  ])(
    'a relay with PIPELINING $pipelining gets MAIL, RCPT and DATA in $envelopeWrites write(s), and every message whole',
    async ({ pipelining, envelopeWrites }) => {
      const writes: string[] = [];
      const sink = await startSmtpSink({ pipelining, onClientBytes: (chunk) => writes.push(chunk.toString('latin1')) });
      const transport = createMailTransport({
        smtpUrl: sink.url,
        timeoutMs: 5_000,
        from: 'from@example.org',
        messageIdDomain: 'example.org',
        maxConnections: 1,
      });
      try {
        // Lines that start with a dot (dot-stuffed on the wire, RFC 5321 §4.5.2) and a lone one, which would end DATA early.
        const text = '.starts with a dot\n.\nand ends';
        for (const n of [1, 2]) {
          const mail = { noticeKey: String(n).repeat(64), to: `r${String(n)}@example.org`, subject: `message ${String(n)}`, text, html: '<p>x</p>' };
          expect(await transport.send(mail)).toMatchObject({ kind: 'accepted' });
        }
        const received = sink.messages();
        expect(received.map((m) => [m.subject, m.to])).toEqual([
          ['message 1', ['r1@example.org']],
          ['message 2', ['r2@example.org']],
        ]);
        for (const m of received) expect(m.raw).toContain('\r\n\r\n.starts with a dot\r\n.\r\nand ends\r\n');
        // On the wire: each envelope's commands, and which of them shared a write.
        const envelopes = writes.filter((chunk) => /^(MAIL FROM|RCPT TO|DATA\r\n)/m.test(chunk));
        const perMessage = envelopes.filter((chunk) => chunk.includes('MAIL FROM')).length === 2 ? envelopes.length / 2 : Number.NaN;
        expect(perMessage).toBe(envelopeWrites);
        if (pipelining) expect(envelopes[0]).toBe('MAIL FROM:<from@example.org>\r\nRCPT TO:<r1@example.org>\r\nDATA\r\n');
      } finally {
        transport.close();
        await sink.stop();
      }
    },
  );

  it('keeps a 4xx a definite rejection and the pooled connection usable', async () => {
    const sink = await startSmtpSink();
    const transport = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'from@example.org', messageIdDomain: 'example.org', maxConnections: 1 });
    try {
      sink.setFault({ kind: 'reject', code: 451, times: 1 });
      expect(await send(transport, 4)).toMatchObject({
        kind: 'rejected',
        permanent: false,
        code: 451,
        errorClass: 'smtp_451',
        failure: 'nothing_left',
        phase: 'body',
      });
      expect(await send(transport, 5)).toMatchObject({ kind: 'accepted' });
    } finally {
      transport.close();
      await sink.stop();
    }
  });

  it('calls a refused connection definitely not sent', async () => {
    const port = await freePort();
    const transport = createMailTransport({
      smtpUrl: `smtp://127.0.0.1:${String(port)}`,
      timeoutMs: 5_000,
      from: 'from@example.org',
      messageIdDomain: 'example.org',
      maxConnections: 2,
    });
    try {
      expect(await send(transport, 6)).toMatchObject({ kind: 'rejected', permanent: false, errorClass: 'connect_failed' });
    } finally {
      transport.close();
    }
  });

  it('recovers from refused connects: after more refusals than connections, the relay coming back takes every message (issue 23)', async () => {
    // nodemailer's SMTPPool kept each refused PoolResource, unavailable, for good: 8 refusals
    // with 8 connections and every later send waited forever, the relay back or not.
    const port = await freePort();
    const transport = createMailTransport({
      smtpUrl: `smtp://127.0.0.1:${String(port)}`,
      timeoutMs: 2_000,
      from: 'from@example.org',
      messageIdDomain: 'example.org',
      maxConnections: 2,
    });
    const sink = await startSmtpSink({ port });
    await sink.goDown();
    try {
      const refused = await Promise.all([10, 11, 12, 13, 14].map((n) => send(transport, n)));
      expect(refused.map((outcome) => outcome.kind === 'rejected' && outcome.errorClass)).toEqual(Array(5).fill('connect_failed'));
      await sink.comeBack();
      const after = await Promise.all([15, 16, 17, 18, 19].map((n) => send(transport, n)));
      expect(after.map((outcome) => outcome.kind)).toEqual(Array(5).fill('accepted'));
      expect(sink.messages()).toHaveLength(5);
    } finally {
      transport.close();
      await sink.stop();
    }
  });

  it('an abort before the body ends the send at once, nothing left; the relay never sees the message', async () => {
    const silent = await startSilentPeer();
    const transport = createMailTransport({
      smtpUrl: `smtp://127.0.0.1:${String(silent.port)}`,
      timeoutMs: 30_000,
      from: 'from@example.org',
      messageIdDomain: 'example.org',
      maxConnections: 1,
    });
    try {
      const stop = new AbortController();
      const pending = transport.send({ noticeKey: '20'.repeat(32), to: 'r@example.org', subject: 's', text: 't', html: '<p>t</p>' }, { signal: stop.signal });
      await vi.waitFor(() => expect(silent.connections()).toBe(1));
      const startedAt = Date.now();
      stop.abort(new Error('worker stopping'));
      expect(await pending).toMatchObject({ kind: 'rejected', failure: 'nothing_left', phase: 'greeting', errorClass: 'send_aborted' });
      expect(Date.now() - startedAt).toBeLessThan(1_000);
    } finally {
      transport.close();
      await silent.stop();
    }
  });

  it('an abort after the body waits for the reply: a stalled relay that answers in time still counts as accepted', async () => {
    const sink = await startSmtpSink();
    const transport = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'from@example.org', messageIdDomain: 'example.org', maxConnections: 1 });
    try {
      sink.setFault({ kind: 'stall', times: 1 });
      const stop = new AbortController();
      const pending = send(transport, 21, stop.signal);
      await vi.waitFor(() => expect(sink.stalled()).toHaveLength(1));
      stop.abort(new Error('worker stopping'));
      sink.releaseStalled();
      expect(await pending).toMatchObject({ kind: 'accepted' });
    } finally {
      transport.close();
      await sink.stop();
    }
  });

  it('cancelAll cuts a body waiting for its reply: unknown (the relay holds it)', async () => {
    const sink = await startSmtpSink();
    const transport = createMailTransport({
      smtpUrl: sink.url,
      timeoutMs: 30_000,
      from: 'from@example.org',
      messageIdDomain: 'example.org',
      maxConnections: 1,
    });
    try {
      sink.setFault({ kind: 'stall', times: 1 });
      const pending = send(transport, 22);
      await vi.waitFor(() => expect(sink.stalled()).toHaveLength(1));
      transport.cancelAll();
      expect(await pending).toEqual({ kind: 'unknown', errorClass: 'send_aborted', phase: 'body' });
    } finally {
      transport.close();
      await sink.stop();
    }
  });

  it('the overall deadline ends a send whose relay trickles: nothing hangs past sendDeadlineMs', async () => {
    const sink = await startSmtpSink();
    const transport = createMailTransport({
      smtpUrl: sink.url,
      timeoutMs: 5_000,
      sendDeadlineMs: 400,
      from: 'from@example.org',
      messageIdDomain: 'example.org',
      maxConnections: 1,
    });
    try {
      sink.setFault({ kind: 'stall', times: 1 });
      expect(await send(transport, 23)).toEqual({ kind: 'unknown', errorClass: 'timeout', phase: 'body' });
    } finally {
      transport.close();
      await sink.stop();
    }
  });

  it('probe: connect, EHLO, AUTH and QUIT, no message', async () => {
    const sink = await startSmtpSink({ auth: { user: 'u', pass: 'p' } });
    const good = createMailTransport({
      smtpUrl: `smtp://u:p@127.0.0.1:${String(sink.port)}`,
      timeoutMs: 2_000,
      from: 'f@example.org',
      messageIdDomain: 'example.org',
      maxConnections: 1,
    });
    const wrong = createMailTransport({
      smtpUrl: `smtp://u:x@127.0.0.1:${String(sink.port)}`,
      timeoutMs: 2_000,
      from: 'f@example.org',
      messageIdDomain: 'example.org',
      maxConnections: 1,
    });
    try {
      expect(await good.probe()).toMatchObject({ kind: 'accepted' });
      expect(await wrong.probe()).toMatchObject({ kind: 'rejected', failure: 'config_broken', code: 535, phase: 'auth' });
      expect(sink.messages()).toHaveLength(0);
    } finally {
      good.close();
      wrong.close();
      await sink.stop();
    }
  });
});
