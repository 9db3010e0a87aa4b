import { describe, expect, it } from 'vitest';
import { freePort } from '@/db/embedded';
import { correlationOf } from '@/lib/ledger/notice-key';
import { startSmtpSink } from '@/testing/smtp-sink';
import { classifySendError, correlationHeaders, createMailTransport, listUnsubscribeHeaders, providerIdFromResponse } from './transport';

const err = (fields: Record<string, unknown>, message = 'failed') => Object.assign(new Error(message), fields);

describe('classifySendError', () => {
  it('treats a 4xx reply as a definite, temporary rejection', () => {
    expect(classifySendError(err({ code: 'EMESSAGE', responseCode: 451, command: 'DATA' }))).toEqual({
      kind: 'rejected',
      permanent: false,
      code: 451,
      errorClass: 'smtp_451',
    });
  });

  it('treats a 5xx reply as a definite, permanent rejection', () => {
    expect(classifySendError(err({ code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO' }))).toEqual({
      kind: 'rejected',
      permanent: true,
      code: 550,
      errorClass: 'smtp_550',
    });
  });

  it('treats a refused connection as definitely not sent', () => {
    expect(classifySendError(err({ code: 'ESOCKET', command: 'CONN', syscall: 'connect', errno: -111 }, 'connect ECONNREFUSED 127.0.0.1:1'))).toMatchObject({
      kind: 'rejected',
      permanent: false,
      errorClass: 'connect_failed',
    });
  });

  it('treats a timeout or a dropped connection as unknown', () => {
    expect(classifySendError(err({ code: 'ETIMEDOUT', command: 'CONN' }))).toEqual({ kind: 'unknown', errorClass: 'timeout' });
    expect(classifySendError(err({ code: 'ECONNECTION', command: 'CONN' }, 'Connection closed unexpectedly'))).toEqual({
      kind: 'unknown',
      errorClass: 'connection_lost',
    });
  });

  it('does not trust a reply code carried by a lost connection', () => {
    expect(classifySendError(err({ code: 'ECONNECTION', responseCode: 451, command: 'CONN' }))).toMatchObject({ kind: 'unknown' });
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
    expect(classifySendError(Object.assign(new Error('rcpt'), { code: 'EENVELOPE', responseCode: code, response }))).toEqual({
      kind: 'rejected',
      permanent: true,
      code,
      errorClass: `smtp_${code}`,
      mailboxUnknown: true,
    });
  });

  it.each(['550 Mailbox unavailable', '550 5.7.1 Message rejected as spam', '554 5.7.1 Relay access denied', '451 4.1.1 user unknown, try later'])(
    '%s → not a missing mailbox',
    (response) => {
      const outcome = classifySendError(Object.assign(new Error('rcpt'), { code: 'EENVELOPE', responseCode: Number(response.slice(0, 3)), response }));
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
      'X-SMTPAPI': `{"unique_args":{"notice_correlation":"${corr}"}}`,
    });
  });
});

describe('pooled transport against a real SMTP peer', () => {
  const send = (transport: ReturnType<typeof createMailTransport>, n: number) =>
    transport.send({ noticeKey: n.toString(16).padStart(2, '0').repeat(32), to: `r${String(n)}@example.org`, subject: 's', text: 't', html: '<p>t</p>' });

  it('never resends a message whose connection was cut after DATA: unknown, and the peer holds it once', async () => {
    const sink = await startSmtpSink();
    const transport = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'from@example.org', messageIdDomain: 'example.org', maxConnections: 2 });
    try {
      expect(await send(transport, 1)).toMatchObject({ kind: 'accepted' });
      sink.setFault({ kind: 'drop-after-data', times: 1 });
      expect(await send(transport, 2)).toEqual({ kind: 'unknown', errorClass: 'connection_lost' });
      // A requeue would reach the peer on another pooled connection within milliseconds.
      expect(await send(transport, 3)).toMatchObject({ kind: 'accepted' });
      expect(sink.countByCorrelation(correlationOf('02'.repeat(32)))).toBe(1);
      expect(sink.messages()).toHaveLength(3);
    } finally {
      transport.close();
      await sink.stop();
    }
  });

  it('keeps a 4xx a definite rejection and the pooled connection usable', async () => {
    const sink = await startSmtpSink();
    const transport = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'from@example.org', messageIdDomain: 'example.org', maxConnections: 1 });
    try {
      sink.setFault({ kind: 'reject', code: 451, times: 1 });
      expect(await send(transport, 4)).toEqual({ kind: 'rejected', permanent: false, code: 451, errorClass: 'smtp_451' });
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
});
