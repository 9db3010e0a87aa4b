import { randomFillSync } from 'node:crypto';
import type Mail from 'nodemailer/lib/mailer';
import mimeFuncs from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';

/**
 * A notice's message as MailComposer writes it, for the one shape the send path builds (issue 27):
 * multipart/alternative with a text and an HTML part, both handed over `raw` (their headers and
 * quoted-printable bodies, `partOf` in lib/mail/transport.ts), the notice's own headers, one
 * plain recipient. MailComposer builds a node tree and then normalises every header key against
 * every other (a regular-expression pass per header per lookup), parses both addresses and
 * streams the result: ~130 µs of a notice's ~1.3 ms of worker CPU in a profile, after the parts.
 *
 * It takes the same options MailComposer would (mailOptionsOf in lib/mail/transport.ts). Here
 * each header line comes from nodemailer's own encoders (mime-funcs `encodeWords`,
 * `foldLines`, `buildHeaderValue`), in MailComposer's order, and the From line is nodemailer's
 * own, written once per sender. Whatever this does not cover (an option beyond those, a part
 * that is not raw, a header value that is not a string, a recipient that is more than
 * `local@domain` in ASCII) returns null, and the caller builds the message with MailComposer. Byte-identical with MailComposer
 * for the same date and boundary (message.test.ts: every shipped template, and arbitrary
 * subjects, correlations and addresses).
 */

export type WrittenMessage = { raw: Buffer; envelope: { from: string; to: string[] }; messageId: string };

/** nodemailer's name for a header key (MimeNode `_normalizeHeaderKey`), asked of nodemailer once per key. */
const normalizedKeys = new Map<string, string>();
function normalizedKey(key: string): string | null {
  let normalized = normalizedKeys.get(key);
  if (normalized === undefined) {
    const line = new MimeNode('text/plain').setHeader(key, 'x').buildHeaders().split('\r\n')[0] ?? '';
    normalized = line.endsWith(': x') ? line.slice(0, -3) : '';
    normalizedKeys.set(key, normalized);
  }
  return normalized === '' ? null : normalized;
}

/** The sender's header line(s) and envelope address as nodemailer writes them, once per sender. */
const senders = new Map<string, { line: string; address: string } | null>();
function senderOf(from: string): { line: string; address: string } | null {
  let sender = senders.get(from);
  if (sender === undefined) {
    // With the message's text encoding (mailOptionsOf sets quoted-printable), as a name needing RFC 2047 is encoded by it.
    const node = new MimeNode('text/plain', { textEncoding: 'Q' }).setHeader('From', from);
    const lines = node.buildHeaders().split('\r\n');
    const start = lines.findIndex((line) => line.startsWith('From: '));
    let end = start + 1;
    while (start >= 0 && end < lines.length && /^[ \t]/.test(lines[end] ?? '')) end += 1;
    const address = node.getEnvelope().from;
    sender = start >= 0 && typeof address === 'string' && address !== '' ? { line: lines.slice(start, end).join('\r\n'), address } : null;
    senders.set(from, sender);
  }
  return sender;
}

// A recipient nodemailer writes as given apart from its domain's case: a local part of letters,
// digits and `._%+-`, an ASCII host name: nothing its address parser or punycode would change.
const plainAddress = /^([A-Za-z0-9._%+-]+)@([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+)$/;

// mime-funcs' `encodeWords` with its fourth argument (encodeAll), which MimeNode passes and @types/nodemailer does not list.
const encodeWords = mimeFuncs.encodeWords.bind(mimeFuncs) as (value: string, encoding: 'Q' | 'B', maxLength: number, encodeAll: boolean) => string;

/**
 * Headers MailComposer sets itself or MimeNode encodes in a way of their own (addresses,
 * references, angle brackets, structured values): a custom header by one of these names leaves
 * the message to MailComposer.
 */
const ownHeaders = new Set([
  'From',
  'Sender',
  'To',
  'Cc',
  'Bcc',
  'Reply-To',
  'In-Reply-To',
  'References',
  'Subject',
  'Message-ID',
  'Content-Id',
  'Date',
  'MIME-Version',
  'Content-Type',
  'Content-Disposition',
  'Content-Transfer-Encoding',
]);

/** A header MimeNode writes from a string (its default case): line breaks as spaces, RFC 2047 Q where needed, folded at 76. */
function headerLine(key: string, value: string): string | null {
  const encoded = encodeWords(value.replace(/\r?\n|\r/g, ' '), 'Q', 52, true);
  return encoded.trim() === '' ? null : mimeFuncs.foldLines(`${key}: ${encoded}`, 76);
}

// The multipart boundary's random part (MimeNode's `baseBoundary`: 8 random bytes in hex), drawn
// from a pool filled from the CSPRNG 512 boundaries at a time. It must stay unguessable: a part's
// content could otherwise carry a line that ends the part.
const pool = Buffer.alloc(8 * 512);
let pooled = 0;
function randomBoundary(): string {
  if (pooled === 0) {
    randomFillSync(pool);
    pooled = 512;
  }
  pooled -= 1;
  return pool.toString('hex', pooled * 8, pooled * 8 + 8);
}

const rawOf = (part: Mail.Options['text']): string | null =>
  typeof part === 'object' && part !== null && 'raw' in part && typeof part.raw === 'string' ? part.raw : null;

// The options this writes as MailComposer would; any other (attachments, cc, replyTo, a date, …) is left to it.
const coveredOptions = new Set(['from', 'to', 'subject', 'messageId', 'headers', 'text', 'html', 'textEncoding']);

/** The message MailComposer would build from `options`, or null when it must build it. `date` and `baseBoundary` as MailComposer's options (tests fix them). */
export function writeMessage(
  options: Mail.Options,
  { date = new Date(), baseBoundary = randomBoundary() }: { date?: Date; baseBoundary?: string } = {},
): WrittenMessage | null {
  // The From line is written with quoted-printable words, as mailOptionsOf sets.
  if (options.textEncoding !== 'quoted-printable' || Object.keys(options).some((key) => !coveredOptions.has(key))) return null;
  const { from, to: recipientText, subject = '', messageId: givenId, headers = {} } = options;
  if (typeof from !== 'string' || typeof recipientText !== 'string' || typeof subject !== 'string' || typeof givenId !== 'string') return null;
  if (typeof headers !== 'object' || Array.isArray(headers)) return null;
  const text = rawOf(options.text);
  const html = rawOf(options.html);
  const sender = senderOf(from);
  const recipient = plainAddress.exec(recipientText);
  if (text === null || html === null || !sender || !recipient) return null;
  const to = `${recipient[1] ?? ''}@${(recipient[2] ?? '').toLowerCase()}`;
  const lines: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    const name = normalizedKey(key);
    if (name === null || ownHeaders.has(name)) return null;
    if (typeof value === 'string') {
      const line = headerLine(name, value);
      if (line !== null) lines.push(line);
      continue;
    }
    // `{ prepared: true, value }` and nothing else: the value as it is, as MimeNode writes it (skipped when blank).
    const prepared = value as unknown;
    if (typeof prepared !== 'object' || prepared === null || Object.keys(prepared).some((option) => option !== 'prepared' && option !== 'value')) return null;
    const { prepared: isPrepared, value: text } = prepared as { prepared?: unknown; value?: unknown };
    if (isPrepared !== true || typeof text !== 'string') return null;
    if (text.trim() !== '') lines.push(`${name}: ${text}`);
  }
  const messageId = `${givenId.startsWith('<') ? '' : '<'}${givenId.replace(/\r?\n|\r/g, ' ')}${givenId.endsWith('>') ? '' : '>'}`;
  const boundary = `--_NmP-${baseBoundary}-Part_1`;
  lines.push(
    sender.line,
    mimeFuncs.foldLines(`To: ${to}`, 76),
    ...(subject === '' ? [] : [headerLine('Subject', subject) ?? '']).filter((line) => line !== ''),
    mimeFuncs.foldLines(`Message-ID: ${messageId}`, 76),
    mimeFuncs.foldLines(`Date: ${date.toUTCString().replace(/GMT/, '+0000')}`, 76),
    'MIME-Version: 1.0',
    mimeFuncs.foldLines(`Content-Type: ${mimeFuncs.buildHeaderValue({ value: 'multipart/alternative', params: { boundary } })}`, 76),
  );
  const raw = Buffer.from(`${lines.join('\r\n')}\r\n\r\n--${boundary}\r\n${text}\r\n--${boundary}\r\n${html}\r\n--${boundary}--\r\n`, 'utf8');
  return { raw, envelope: { from: sender.address, to: [to] }, messageId };
}
