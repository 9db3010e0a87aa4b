import net from 'node:net';
import nodemailer from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { CORRELATION_HEADER, CORRELATION_TAG } from '@/lib/events/types';
import { correlationOf, messageIdFor } from '@/lib/ledger/notice-key';

/**
 * The hand-over to the mail relay and the classification of its result. The ledger's safety
 * rests on one distinction: a *definite* rejection (the server answered 4xx/5xx, or we never
 * connected) means the mail is known not to be out, so the claim may be released; anything
 * else after the connection opened — a timeout, a connection cut while waiting for the reply
 * to DATA — is *unknown*, and the claim must stay.
 */
export type SendOutcome =
  | { kind: 'accepted'; providerMessageId: string | null }
  /**
   * `mailboxUnknown`: the relay said the mailbox does not exist (550 5.1.1, "user unknown"): the address is suppressed as a hard bounce is.
   * `detail`: why, when the reason is ours (a template that does not render), recorded on the attempt.
   */
  | { kind: 'rejected'; permanent: boolean; code: number | null; errorClass: string; mailboxUnknown?: boolean; detail?: string }
  | { kind: 'unknown'; errorClass: string };

export type OutgoingNotice = {
  noticeKey: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /**
   * RFC 2369 / RFC 8058 one-click unsubscribe: a courtesy notice carries its signed https URI
   * (and a mailto URI when the operator has a mailbox that handles it); a required notice has
   * none, and then neither header is set.
   */
  listUnsubscribe?: { https: string; mailto: string | null } | null;
};

export type MailTransport = {
  send: (mail: OutgoingNotice) => Promise<SendOutcome>;
  close: () => void;
};

type MailError = Error & { code?: string; responseCode?: number; command?: string; syscall?: string; response?: string };

/**
 * "This mailbox does not exist": the enhanced status 5.1.1 (RFC 3463, bad destination mailbox
 * address), or the wording relays use for it. Not every 550 ("mailbox unavailable" is also a
 * policy refusal), so a refusal for any other reason never suppresses the address.
 */
const unknownMailboxReply =
  /^5\d\d[ -]5\.1\.1\b|\b(user unknown|unknown user|no such (user|mailbox|recipient)|(mailbox|address|user|recipient) (does not exist|not found|unknown)|unknown (recipient|mailbox))\b/i;

export function saysMailboxUnknown(response: string | undefined, code: number | null): boolean {
  return code !== null && code >= 500 && code < 600 && typeof response === 'string' && unknownMailboxReply.test(response.trim());
}

const lostConnection = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'ETLS']);

function asMailError(error: unknown): MailError {
  return error instanceof Error ? (error as MailError) : new Error(String(error));
}

/** Pure: how sure are we that the relay did NOT take the message? */
export function classifySendError(error: unknown): Exclude<SendOutcome, { kind: 'accepted' }> {
  const err = asMailError(error);
  const code = typeof err.responseCode === 'number' ? err.responseCode : null;
  if (code !== null && code >= 400 && code < 600 && !lostConnection.has(err.code ?? '')) {
    const mailboxUnknown = saysMailboxUnknown(err.response, code);
    return { kind: 'rejected', permanent: code >= 500, code, errorClass: `smtp_${code}`, ...(mailboxUnknown ? { mailboxUnknown } : {}) };
  }
  // The TCP connect itself failed: not a byte of the message left the process.
  if (err.syscall === 'connect' || (err.code === 'ESOCKET' && err.command === 'CONN' && /ECONNREFUSED/.test(err.message))) {
    return { kind: 'rejected', permanent: false, code: null, errorClass: 'connect_failed' };
  }
  if (err.code === 'ETIMEDOUT') return { kind: 'unknown', errorClass: 'timeout' };
  if (err.code === 'ECONNECTION' || err.code === 'ESOCKET') return { kind: 'unknown', errorClass: 'connection_lost' };
  return {
    kind: 'unknown',
    errorClass: (err.code ?? 'error')
      .toLowerCase()
      .replace(/[^a-z0-9_]/g, '_')
      .slice(0, 40),
  };
}

/**
 * The correlation as our own header plus each relay's metadata header, so provider events
 * echo it back even where the Message-ID is replaced (SES). Unknown headers are harmless.
 */
export function correlationHeaders(correlation: string): Record<string, string> {
  return {
    [CORRELATION_HEADER]: correlation,
    'X-SES-MESSAGE-TAGS': `${CORRELATION_TAG}=${correlation}`,
    [`X-PM-Metadata-${CORRELATION_TAG}`]: correlation,
    'X-SMTPAPI': JSON.stringify({ unique_args: { [CORRELATION_TAG]: correlation } }),
  };
}

/** The RFC 8058 headers of a courtesy notice; none for a notice without an unsubscribe URI. */
export function listUnsubscribeHeaders(listUnsubscribe: OutgoingNotice['listUnsubscribe']): Record<string, string> {
  if (!listUnsubscribe) return {};
  const uris = [`<${listUnsubscribe.https}>`, ...(listUnsubscribe.mailto ? [`<${listUnsubscribe.mailto}>`] : [])];
  return { 'List-Unsubscribe': uris.join(', '), 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}

/** The relay's queue id from "250 2.0.0 Ok: queued as ABC123", else the whole reply line. */
export function providerIdFromResponse(response: string | undefined): string | null {
  if (!response) return null;
  const queued = /queued as ([A-Za-z0-9._-]+)/i.exec(response);
  if (queued?.[1]) return queued[1];
  const trimmed = response.replace(/^250[ -](\d\.\d\.\d )?/, '').trim();
  return trimmed ? trimmed.slice(0, 200) : null;
}

type GetSocket = (options: unknown, callback: (error: Error | null, socket?: { connection: net.Socket }) => void) => void;

/**
 * A connected socket for nodemailer (it runs EHLO, STARTTLS or TLS on top). A refused connect
 * surfaces as Node's own error (syscall `connect`: definitely not sent); a connect that does
 * not finish in time as ETIMEDOUT, which classifySendError calls unknown, as nodemailer did.
 */
function connectWithNoDelay({ host, port, timeoutMs }: { host: string; port: number; timeoutMs: number }): GetSocket {
  return (_options, callback) => {
    const socket = net.connect({ host, port });
    socket.setNoDelay(true);
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('error', settle);
      if (error) {
        socket.destroy();
        callback(error);
        return;
      }
      callback(null, { connection: socket });
    };
    const timer = setTimeout(() => settle(Object.assign(new Error('Connection timeout'), { code: 'ETIMEDOUT', command: 'CONN' })), timeoutMs);
    socket.once('error', settle);
    socket.once('connect', () => settle(null));
  };
}

export type MailTransportParams = {
  smtpUrl: string;
  timeoutMs: number;
  from: string;
  messageIdDomain: string;
  /** Pooled SMTP connections (≈ worker concurrency); 0 opens one connection per message. */
  maxConnections?: number;
};

export function createMailTransport({ smtpUrl, timeoutMs, from, messageIdDomain, maxConnections = 0 }: MailTransportParams): MailTransport {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  const base: SMTPTransport.Options = {
    host: url.hostname,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    // Nagle's algorithm held the message body until the relay's delayed ACK: ~40 ms on every
    // send on Linux. We open the TCP connection ourselves, with TCP_NODELAY.
    getSocket: connectWithNoDelay({ host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : secure ? 465 : 587, timeoutMs }),
  };
  // A pooled connection that closes while a message is on it is NOT retried on another one:
  // nodemailer's default (maxRequeues unset) would resend a message the relay may already
  // hold. With 0 the send fails with ECONNECTION, which classifySendError calls unknown.
  const transporter =
    maxConnections > 0
      ? nodemailer.createTransport({ ...base, pool: true, maxConnections, maxMessages: 1_000, maxRequeues: 0 } as SMTPPool.Options)
      : nodemailer.createTransport(base);
  return {
    send: async (mail) => {
      try {
        const info = await transporter.sendMail({
          from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          messageId: messageIdFor(mail.noticeKey, messageIdDomain),
          headers: { ...correlationHeaders(correlationOf(mail.noticeKey)), ...listUnsubscribeHeaders(mail.listUnsubscribe) },
        });
        return { kind: 'accepted', providerMessageId: providerIdFromResponse(info.response) ?? info.messageId ?? null };
      } catch (error) {
        return classifySendError(error);
      }
    },
    close: () => transporter.close(),
  };
}
