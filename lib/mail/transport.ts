import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import type MimeNode from 'nodemailer/lib/mime-node';
import mimeFuncs from 'nodemailer/lib/mime-funcs';
import { CORRELATION_HEADER, CORRELATION_TAG } from '@/lib/events/types';
import { correlationOf, messageIdFor } from '@/lib/ledger/notice-key';
import { withCrlf } from '@/lib/templates/engine';
import { classifySmtpPhase, type FailureClass, type Phase, type TransportName } from '@/lib/transport/phases';
import { writeMessage } from './message';
import { encodeQuotedPrintable } from './quoted-printable';
import { createSmtpPool, type SmtpFailure, type SmtpMessage, type SmtpResult } from './smtp-pool';

/**
 * The hand-over to the mail relay and the classification of its result by the phase it failed
 * in (`lib/transport/phases.ts`, the one table for every transport). The ledger's safety rests on
 * one distinction: a failure before the body (no connection, no greeting, a refusal of the
 * envelope) means the mail is known not to be out, so the claim may be released; a body handed
 * over with no final reply is *unknown*, and the claim must stay.
 */
export type SendOutcome =
  /**
   * `provisional`: the provider queued the request and answers for each message only later, by its
   * events (SendGrid's 202): the ledger row is `sent` with provider_status `accepted` until then.
   */
  | { kind: 'accepted'; providerMessageId: string | null; provisional?: boolean }
  /**
   * `mailboxUnknown`: the relay said the mailbox does not exist (550 5.1.1, "user unknown"): the address is suppressed as a hard bounce is.
   * `detail`: why, when the reason is ours (a template that does not render), recorded on the attempt.
   * `failure` and `phase`: set by a transport (lib/transport/phases.ts). Without them, `permanent` says it: refused for this recipient, or nothing left.
   */
  | {
      kind: 'rejected';
      permanent: boolean;
      code: number | null;
      errorClass: string;
      mailboxUnknown?: boolean;
      detail?: string;
      failure?: Exclude<FailureClass, 'outcome_unknown'>;
      phase?: Phase;
      /** A throttle's `Retry-After` (HTTP 429): the retry waits at least this long. */
      retryAfterMs?: number;
    }
  | { kind: 'unknown'; errorClass: string; phase?: Phase };

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

/** Pure: what a failure at its phase means (lib/transport/phases.ts), as the send path's outcome. */
export function classifySmtpFailure(failure: SmtpFailure): Exclude<SendOutcome, { kind: 'accepted' }> {
  const verdict = classifySmtpPhase(failure.phase, failure.code);
  if (verdict === 'outcome_unknown') return { kind: 'unknown', errorClass: failure.errorClass, phase: failure.phase };
  const mailboxUnknown = verdict === 'recipient_refused' && saysMailboxUnknown(failure.response ?? undefined, failure.code);
  return {
    kind: 'rejected',
    permanent: verdict === 'recipient_refused',
    code: failure.code,
    errorClass: failure.errorClass,
    failure: verdict,
    phase: failure.phase,
    ...(mailboxUnknown ? { mailboxUnknown } : {}),
  };
}

/**
 * The correlation as our own header plus each relay's metadata header, so provider events
 * echo it back even where the Message-ID is replaced (SES). Unknown headers are harmless.
 */
export function correlationHeaders(correlation: string): Record<string, string | { prepared: true; value: string }> {
  return {
    [CORRELATION_HEADER]: correlation,
    'X-SES-MESSAGE-TAGS': `${CORRELATION_TAG}=${correlation}`,
    [`X-PM-Metadata-${CORRELATION_TAG}`]: correlation,
    // SendGrid reads this header as JSON. Left to nodemailer, a value with quotes and braces goes out
    // as RFC 2047 encoded words (`=?UTF-8?Q?=7B=22unique=5Fargs…?=`), which is no JSON; `prepared`
    // writes it as it is (nodemailer's "Custom headers"), one line of ~75 characters.
    'X-SMTPAPI': { prepared: true, value: JSON.stringify({ unique_args: { [CORRELATION_TAG]: correlation } }) },
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

export type MailTransportParams = {
  smtpUrl: string;
  /** The longest wait for any one step: connect, greeting, each command, the reply to the body. */
  timeoutMs: number;
  /** One send from the first byte to the final reply (a new connection included); 2 × timeoutMs when unset. */
  sendDeadlineMs?: number;
  from: string;
  messageIdDomain: string;
  /** Pooled SMTP connections (≈ worker concurrency); 0 opens one connection per message. */
  maxConnections?: number;
};

export type SendOptions = {
  /** Aborts a send that has not reached the body (nothing left); a body already handed over waits for its reply or deadline. */
  signal?: AbortSignal;
};

/** What every email transport offers the email channel (lib/channels/email.ts): SMTP here, each HTTP provider in lib/channels/<name>/. */
export type EmailTransport = {
  name: TransportName;
  /**
   * Does the work of a send that needs nothing from the claim (SMTP: the MIME message), when the
   * message is composed, before its claim: the claim-to-commit interval, the one a crash turns into
   * quarantine, then holds the hand-over and the commit only. Building all 32 messages of a burst
   * after their one claim statement was ~200 µs of CPU each, in front of the burst's last send.
   * Resolves to the message the send path keeps until its send, which `send` takes: SMTP's carries
   * no parts, built into the MIME message already (a notice's HTML is ~20 KB of string, held across
   * the claim by every handler for nothing: issue 27). Without `prepare`, `send` does it all.
   */
  prepare?: (mail: OutgoingNotice) => Promise<OutgoingNotice>;
  send: (mail: OutgoingNotice, options?: SendOptions) => Promise<SendOutcome>;
  /**
   * Many notices in one request (an HTTP provider's batch API, lib/jobs/handle-batch.ts): one
   * outcome per notice, in order. Absent (SMTP): the send path sends one notice at a time.
   */
  sendBatch?: (mails: OutgoingNotice[], options?: SendOptions) => Promise<SendOutcome[]>;
  /** The most notices one `sendBatch` takes: the provider's documented cap. */
  batchLimit?: number;
  /** Connect, greeting, EHLO, AUTH and QUIT, no message: accepted when the relay would take mail now. */
  probe: () => Promise<SendOutcome>;
  /** Cuts every send in flight, body or not: the worker's stop grace ran out. */
  cancelAll: () => void;
  close: () => void;
};

export type MailTransport = EmailTransport;

/**
 * What MailComposer builds a notice from. `textEncoding` is set, not detected: left unset,
 * nodemailer picks quoted-printable or base64 for every part and encoded header by running two
 * global regular expressions over the whole value (counting Latin letters against the rest),
 * 8 % of the worker's CPU per notice (issue 27). Our parts are HTML markup and Latin-script text,
 * for which that count always picks quoted-printable; `compose.test.ts` builds every shipped
 * template's message both ways and finds them byte-identical. A template in another script
 * would now go quoted-printable instead of base64: larger, equally valid MIME.
 */
export function mailOptionsOf(mail: OutgoingNotice, { from, messageIdDomain }: { from: string; messageIdDomain: string }): Mail.Options {
  return {
    from,
    to: mail.to,
    subject: mail.subject,
    // CRLF like the HTML (parsed so from its templates): with no LF left without its CR, nodemailer's
    // DATA transform passes the message on whole instead of slicing it at each line break after the
    // claim (issue 27). The text part is rendered with LF (its blank lines are collapsed on them).
    text: partOf('text/plain', withCrlf(mail.text)),
    html: partOf('text/html', mail.html),
    messageId: messageIdFor(mail.noticeKey, messageIdDomain),
    headers: { ...correlationHeaders(correlationOf(mail.noticeKey)), ...listUnsubscribeHeaders(mail.listUnsubscribe) },
    textEncoding: 'quoted-printable',
  };
}

/**
 * A text or HTML part. One nodemailer would send as it is (7bit: ASCII with no line over 76, its own
 * test) is left to it; any other is handed over whole, its headers and quoted-printable body, as
 * nodemailer's `raw` part: the bytes its encoder would have streamed (lib/mail/quoted-printable.ts,
 * byte-identical, compose.test.ts), without its encoder's cost: 185 of the ~580 µs of CPU nodemailer
 * spent building a notice's message, against 53 µs here (issue 27).
 */
function partOf(contentType: 'text/plain' | 'text/html', content: string): string | Mail.Attachment {
  if (mimeFuncs.isPlainText(content) && !mimeFuncs.hasLongerLines(content, 76)) return content;
  return { raw: `Content-Type: ${contentType}; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${encodeQuotedPrintable(content)}` };
}

/** What a node holds beyond its typed fields: its raw content (`setRaw`) and what would transform its stream. */
type NodeInternals = MimeNode & { _raw?: unknown; _transforms?: unknown[]; _processFuncs?: unknown[] };

/**
 * The bytes MailComposer's `build()` streams for a notice's tree, written at once: the root's
 * headers (its own `buildHeaders`, so every header is nodemailer's), then each part between the
 * boundaries as its `stream` writes them. `build()` pipes every part through streams and a
 * `setImmediate` per part: 395 µs against 250 here for a renewal notice's message in a
 * micro-benchmark (issue 27), and ~60 KB more garbage per notice. Null for any tree this does
 * not cover, which `build()` then streams: a part with children, content it would encode itself
 * (quoted-printable or base64), or a stream transform. Byte-identical with `build()`
 * (compose.test.ts, every shipped template).
 */
export function writtenAtOnce(root: MimeNode): Buffer | null {
  const node = root as NodeInternals;
  if (node._raw !== undefined && node._raw !== false) return null;
  if (node.content !== undefined || node.newline || node._transforms?.length || node._processFuncs?.length) return null;
  const parts: string[] = [];
  for (const child of node.childNodes as NodeInternals[]) {
    if (child.childNodes.length > 0 || child._transforms?.length || child._processFuncs?.length || child.newline) return null;
    if (typeof child._raw === 'string') parts.push(child._raw);
    else if (typeof child.content === 'string' && !['quoted-printable', 'base64'].includes(child.getTransferEncoding()))
      parts.push(`${child.buildHeaders()}\r\n\r\n${child.content}`);
    else return null;
  }
  if (parts.length === 0) return null;
  const headers = node.buildHeaders();
  if (!node.multipart || typeof node.boundary !== 'string') return null;
  const boundary = node.boundary;
  return Buffer.from(`${headers}\r\n\r\n--${boundary}\r\n${parts.join(`\r\n--${boundary}\r\n`)}\r\n--${boundary}--\r\n`, 'utf8');
}

function outcomeOf(result: SmtpResult, fallbackId: string | null): SendOutcome {
  if (!result.ok) return classifySmtpFailure(result.failure);
  return { kind: 'accepted', providerMessageId: providerIdFromResponse(result.response) ?? fallbackId };
}

const BUILT = Symbol('built');
type Built = { message: SmtpMessage; messageId: string };
/** A notice `prepare` built: its parts dropped, the build kept. */
type Prepared = OutgoingNotice & { [BUILT]?: Promise<Built> };

export function createMailTransport({ smtpUrl, timeoutMs, sendDeadlineMs, from, messageIdDomain, maxConnections = 0 }: MailTransportParams): MailTransport {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  const pool = createSmtpPool({
    endpoint: {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port ? Number(url.port) : secure ? 465 : 587,
      secure,
      auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : null,
    },
    phaseTimeoutMs: timeoutMs,
    sendDeadlineMs: sendDeadlineMs ?? 2 * timeoutMs,
    maxConnections,
  });
  const build = async (mail: OutgoingNotice): Promise<Built> => {
    const options = mailOptionsOf(mail, { from, messageIdDomain });
    const written = writeMessage(options);
    if (written) return { message: { envelope: written.envelope, raw: written.raw }, messageId: written.messageId };
    const composed = new MailComposer(options).compile();
    const envelope = composed.getEnvelope();
    const raw = writtenAtOnce(composed) ?? (await composed.build());
    return { message: { envelope: { from: envelope.from || from, to: envelope.to }, raw }, messageId: composed.messageId() };
  };
  // The message `prepare` built rides on the stand-in it returns, under a key of its own: each send
  // of that stand-in sends those bytes, however often, and they go when it does. (A WeakMap from
  // stand-in to build kept every entry until a full collection: +7 MB at 2 × 32, and slower.)
  // A message given to `send` unprepared is built there.
  return {
    name: 'smtp',
    prepare: async (mail) => {
      const building = build(mail);
      const kept: Prepared = { ...mail, subject: '', text: '', html: '', [BUILT]: building };
      // A message that does not build fails its send, as it did when built there.
      await building.catch(() => undefined);
      return kept;
    },
    send: async (mail, options = {}) => {
      const building = (mail as Prepared)[BUILT] ?? build(mail);
      const { message, messageId } = await building;
      const result = await pool.send(message, options.signal);
      return outcomeOf(result, messageId);
    },
    probe: async () => outcomeOf(await pool.probe(), null),
    cancelAll: () => pool.cancelAll(),
    close: () => pool.close(),
  };
}
