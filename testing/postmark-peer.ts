import { randomBytes, randomUUID } from 'node:crypto';
import { CORRELATION_TAG } from '@/lib/events/types';
import {
  answerAccepted,
  createPeerState,
  faultFor,
  isRecord,
  lookupFaultReply,
  parseJson,
  peerControls,
  refusalOf,
  startHttpPeerServer,
  type Answered,
  type PeerControls,
  type PeerExchange,
  type PeerReply,
} from './http-peer';

/**
 * A local Postmark Email API peer for tests and the demo, answering the official `postmark`
 * client pointed at it (`new ServerClient(token, { useHttps: false, requestHost })`). It speaks
 * Postmark's documented shapes (developer docs: API overview, Email API, batch emails, Messages
 * API):
 * - `X-Postmark-Server-Token` auth; a missing or wrong token is 401 `{ErrorCode: 10, Message}`;
 * - `POST /email`: 200 `{To, SubmittedAt, MessageID, ErrorCode: 0, Message: "OK"}`, a refused
 *   message 422 `{ErrorCode, Message}`;
 * - `POST /email/batch`: up to 500 messages (more: 422, ErrorCode 410); HTTP 200 even when items
 *   fail, one result per message in request order, `{ErrorCode, Message, MessageID, SubmittedAt,
 *   To}` (a failed item has no MessageID);
 * - `Metadata` is stored with the message and echoed by the Messages API;
 * - `GET /messages/outbound?count=&offset=&recipient=&fromemail=&tag=&status=&subject=
 *   &messagestream=&fromdate=&todate=&metadata_<key>=`: `{TotalCount, Messages}`, newest first.
 *   Postmark's dates are US Eastern time: `SubmittedAt`/`ReceivedAt` carry the Eastern offset,
 *   and `fromdate`/`todate` (inclusive, `2021-01-01` or `2021-01-01T12:00:00`) are read as
 *   Eastern wall-clock times. Only one metadata filter is allowed per search, as documented.
 *
 * Faults: the request-level ones of `./http-peer` (429 with Retry-After, delay, 5xx after
 * accepting, a dropped connection after accepting), per-item refusals by recipient (`refuse`), and
 * a 5xx or 429 on the Messages API (`setLookupFault`). A message accepted before a 5xx-after-accept
 * or a dropped connection is stored, so the Messages API lists it as Postmark would.
 */

export type PostmarkItemError = { errorCode: 300 | 406 | 422; message?: string };

export type PostmarkMessage = {
  messageId: string;
  to: string[];
  cc: string[];
  bcc: string[];
  from: string;
  subject: string;
  tag: string | null;
  messageStream: string;
  metadata: Record<string, string>;
  correlation: string | null;
  headers: { Name: string; Value: string }[];
  textBody: string | null;
  htmlBody: string | null;
  receivedAt: Date;
  /** Which request carried it (0-based over the send endpoints) and how that request was answered. */
  requestIndex: number;
  answered: Answered | 'pending';
};

/** `refuse`: a refused recipient fails its message (single: 422; batch: that item's result only). */
export type PostmarkPeer = PeerControls<PostmarkMessage, PostmarkItemError> & {
  /** What the client's `requestHost` is set to (with `useHttps: false`). */
  requestHost: string;
  serverToken: string;
};

const BATCH_LIMIT = 500;
const SEARCH_COUNT_LIMIT = 500;
const SEARCH_WINDOW_LIMIT = 10_000;

function itemErrorText(errorCode: number, recipient: string): string {
  if (errorCode === 406)
    return `You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: ${recipient}. Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.`;
  return 'Invalid email request';
}

const eastern = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/New_York',
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** Minutes east of UTC that US Eastern time is at `instant` (−300 in winter, −240 in summer). */
function easternOffsetMinutes(instant: Date): number {
  const parts = Object.fromEntries(eastern.formatToParts(instant).map((part) => [part.type, part.value]));
  const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return Math.round((wall - Math.floor(instant.getTime() / 1000) * 1000) / 60_000);
}

/** Postmark's timestamp form: Eastern wall-clock time, seven fraction digits, the Eastern offset. */
export function postmarkDate(instant: Date): string {
  const offset = easternOffsetMinutes(instant);
  const wall = new Date(instant.getTime() + offset * 60_000).toISOString().slice(0, 23);
  const sign = offset < 0 ? '-' : '+';
  const hours = String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0');
  const minutes = String(Math.abs(offset) % 60).padStart(2, '0');
  return `${wall}0000${sign}${hours}:${minutes}`;
}

/** The instant an Eastern wall-clock time (`2021-01-01` or `2021-01-01T12:00:00`) names, else null. */
export function parseEasternWallClock(value: string, endOfDay: boolean): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(value.trim());
  if (!match) return null;
  const [, year, month, day, hour, minute, second] = match;
  const dateOnly = hour === undefined;
  const wall = Date.UTC(
    Number(year),
    Number(month) - 1,
    Number(day),
    dateOnly ? (endOfDay ? 23 : 0) : Number(hour),
    dateOnly ? (endOfDay ? 59 : 0) : Number(minute),
    dateOnly ? (endOfDay ? 59 : 0) : Number(second ?? 0),
  );
  if (Number.isNaN(wall)) return null;
  // The offset depends on the instant, which depends on the offset: two rounds settle it.
  let instant = wall - easternOffsetMinutes(new Date(wall)) * 60_000;
  instant = wall - easternOffsetMinutes(new Date(instant)) * 60_000;
  return new Date(instant + (dateOnly && endOfDay ? 999 : 0));
}

function addresses(value: unknown): string[] {
  if (typeof value !== 'string') return [];
  return value
    .split(',')
    .map((part) => {
      const angle = /<([^>]+)>/.exec(part);
      return (angle?.[1] ?? part).trim().toLowerCase();
    })
    .filter((address) => address.length > 0);
}

const plausibleAddress = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type Validated =
  { ok: true; fields: Omit<PostmarkMessage, 'messageId' | 'receivedAt' | 'requestIndex' | 'answered'> } | { ok: false; errorCode: number; message: string };

function validateMessage(input: unknown): Validated {
  if (!isRecord(input)) return { ok: false, errorCode: 402, message: 'Received invalid JSON input.' };
  const from = addresses(input.From)[0];
  if (!from || !plausibleAddress.test(from)) return { ok: false, errorCode: 300, message: "Invalid 'From' address: ''." };
  const to = addresses(input.To);
  const cc = addresses(input.Cc);
  const bcc = addresses(input.Bcc);
  if (to.length + cc.length + bcc.length === 0) return { ok: false, errorCode: 300, message: 'Zero recipients specified' };
  const bad = [...to, ...cc, ...bcc].find((address) => !plausibleAddress.test(address));
  if (bad) return { ok: false, errorCode: 300, message: `Error parsing 'To': Illegal email address '${bad}'. It must contain the '@' symbol.` };
  if (to.length + cc.length + bcc.length > 50)
    return { ok: false, errorCode: 300, message: 'Too many recipients. You can send to a maximum of 50 recipients per message.' };
  const textBody = typeof input.TextBody === 'string' ? input.TextBody : null;
  const htmlBody = typeof input.HtmlBody === 'string' ? input.HtmlBody : null;
  if (!textBody && !htmlBody) return { ok: false, errorCode: 300, message: 'Provide either email TextBody or HtmlBody or both.' };
  const metadata: Record<string, string> = {};
  if (input.Metadata !== undefined && input.Metadata !== null) {
    if (!isRecord(input.Metadata)) return { ok: false, errorCode: 300, message: 'Metadata must be an object of string values.' };
    for (const [name, value] of Object.entries(input.Metadata)) {
      if (typeof value !== 'string') return { ok: false, errorCode: 300, message: `Metadata value for '${name}' must be a string.` };
      metadata[name] = value;
    }
  }
  const headers = Array.isArray(input.Headers)
    ? input.Headers.filter(isRecord).map((header) => ({ Name: String(header.Name ?? ''), Value: String(header.Value ?? '') }))
    : [];
  return {
    ok: true,
    fields: {
      to,
      cc,
      bcc,
      from,
      subject: typeof input.Subject === 'string' ? input.Subject : '',
      tag: typeof input.Tag === 'string' && input.Tag ? input.Tag : null,
      messageStream: typeof input.MessageStream === 'string' && input.MessageStream ? input.MessageStream : 'outbound',
      metadata,
      correlation: metadata[CORRELATION_TAG] ?? null,
      headers,
      textBody,
      htmlBody,
    },
  };
}

function postmarkError(status: number, errorCode: number, message: string, headers?: Record<string, string>): PeerReply {
  return { status, body: { ErrorCode: errorCode, Message: message }, ...(headers ? { headers } : {}) };
}

export async function startPostmarkPeer({
  serverToken = `pm-${randomBytes(12).toString('hex')}`,
  port = 0,
}: { serverToken?: string; port?: number } = {}): Promise<PostmarkPeer> {
  const state = createPeerState<PostmarkMessage, PostmarkItemError>();

  const authorised = (exchange: PeerExchange): PeerReply | null => {
    const token = exchange.headers['x-postmark-server-token'];
    if (typeof token !== 'string' || token === '')
      return postmarkError(
        401,
        10,
        'No Account or Server API tokens were supplied in the HTTP headers. Please add a header for either X-Postmark-Server-Token or X-Postmark-Account-Token.',
      );
    if (token !== serverToken)
      return postmarkError(
        401,
        10,
        'The Server Token you provided in the X-Postmark-Server-Token request header was invalid. Please verify that you are using a valid token.',
      );
    return null;
  };

  /** Checks one message and the recipient rule; accepts it (stored, answer pending) or says why not. */
  const accept = (
    input: unknown,
    itemIndex: number,
    requestIndex: number,
    now: Date,
  ): { accepted: PostmarkMessage } | { refused: { errorCode: number; message: string; to: string } } => {
    const checked = validateMessage(input);
    const to = isRecord(input) && typeof input.To === 'string' ? input.To : '';
    if (!checked.ok) return { refused: { errorCode: checked.errorCode, message: checked.message, to } };
    const refused = refusalOf(state.refusal, [...checked.fields.to, ...checked.fields.cc, ...checked.fields.bcc], itemIndex);
    if (refused)
      return {
        refused: { errorCode: refused.refusal.errorCode, message: refused.refusal.message ?? itemErrorText(refused.refusal.errorCode, refused.to), to },
      };
    const message: PostmarkMessage = { ...checked.fields, messageId: randomUUID(), receivedAt: now, requestIndex, answered: 'pending' };
    state.stored.push(message);
    return { accepted: message };
  };

  const result = (outcome: ReturnType<typeof accept>, now: Date) =>
    'accepted' in outcome
      ? { ErrorCode: 0, Message: 'OK', MessageID: outcome.accepted.messageId, SubmittedAt: postmarkDate(now), To: outcome.accepted.to.join(', ') }
      : { ErrorCode: outcome.refused.errorCode, Message: outcome.refused.message, To: outcome.refused.to };

  const serverError = (status: 500 | 502 | 503) => postmarkError(status, 0, status === 503 ? 'Service Unavailable' : 'Internal Server Error');

  const send = async (exchange: PeerExchange, batch: boolean) => {
    const requestIndex = state.received;
    state.received += 1;
    const refused = authorised(exchange);
    if (refused) return exchange.reply(refused);
    if (!String(exchange.headers['content-type'] ?? '').includes('application/json'))
      return exchange.reply(postmarkError(422, 409, "Request must be in JSON format. Please set the 'Content-Type' header to 'application/json'."));
    const input = parseJson(exchange.body);
    if (input === undefined) return exchange.reply(postmarkError(422, 402, 'Received invalid JSON input.'));
    if (batch && !Array.isArray(input)) return exchange.reply(postmarkError(422, 403, 'The batch endpoint expects a JSON array of messages.'));
    if (batch && Array.isArray(input) && input.length > BATCH_LIMIT)
      return exchange.reply(postmarkError(422, 410, `Too many batch messages. You may send up to ${BATCH_LIMIT} messages per batch.`));
    const current = faultFor(state.fault, requestIndex);
    if (current.kind === 'throttle') {
      const headers = current.retryAfterSeconds === undefined ? undefined : { 'retry-after': String(current.retryAfterSeconds) };
      return exchange.reply(postmarkError(429, 429, 'Rate limit exceeded.', headers));
    }
    const now = new Date();
    const items = batch && Array.isArray(input) ? input : [input];
    const outcomes = items.map((item, itemIndex) => accept(item, itemIndex, requestIndex, now));
    const accepted = outcomes.flatMap((outcome) => ('accepted' in outcome ? [outcome.accepted] : []));
    const single = outcomes[0];
    const reply: PeerReply =
      batch || !single
        ? { status: 200, body: outcomes.map((outcome) => result(outcome, now)) }
        : 'accepted' in single
          ? { status: 200, body: result(single, now) }
          : postmarkError(422, single.refused.errorCode, single.refused.message);
    const answered = await answerAccepted(exchange, accepted.length > 0 ? current : { kind: 'none' }, reply, serverError);
    for (const message of accepted) message.answered = answered;
  };

  const search = (exchange: PeerExchange) => {
    const refused = authorised(exchange);
    if (refused) return exchange.reply(refused);
    const faulted = lookupFaultReply(state, (status, message) => postmarkError(status, status === 429 ? 429 : 0, message));
    if (faulted) return exchange.reply(faulted);
    // Postmark's query names are case-insensitive (the SDK sends fromEmail, toDate, …).
    const query = new Map<string, string>();
    for (const [name, value] of exchange.query) query.set(name.toLowerCase(), value);
    const count = Number(query.get('count'));
    const offset = Number(query.get('offset'));
    if (!Number.isInteger(count) || !Number.isInteger(offset) || count < 1 || offset < 0)
      return exchange.reply(postmarkError(422, 300, 'The count and offset parameters are required, as whole numbers.'));
    if (count > SEARCH_COUNT_LIMIT) return exchange.reply(postmarkError(422, 300, `The count parameter may be at most ${SEARCH_COUNT_LIMIT}.`));
    if (count + offset > SEARCH_WINDOW_LIMIT) return exchange.reply(postmarkError(422, 300, `Count + Offset cannot exceed ${SEARCH_WINDOW_LIMIT}.`));
    const metadataFilters = [...query].filter(([name]) => name.startsWith('metadata_'));
    if (metadataFilters.length > 1) return exchange.reply(postmarkError(422, 300, 'You can only search by a single metadata field at a time.'));
    const fromDate = query.has('fromdate') ? parseEasternWallClock(query.get('fromdate') ?? '', false) : null;
    const toDate = query.has('todate') ? parseEasternWallClock(query.get('todate') ?? '', true) : null;
    if ((query.has('fromdate') && !fromDate) || (query.has('todate') && !toDate))
      return exchange.reply(postmarkError(422, 300, 'fromdate and todate must be dates (2021-01-01) or date-times (2021-01-01T12:00:00) in Eastern Time.'));
    const recipient = query.get('recipient')?.toLowerCase();
    const fromEmail = query.get('fromemail')?.toLowerCase();
    const tag = query.get('tag');
    const subject = query.get('subject');
    const stream = query.get('messagestream');
    const status = query.get('status')?.toLowerCase();
    const metadataFilter = metadataFilters[0];
    // Eastern wall-clock filters have whole-second precision.
    const second = (date: Date) => Math.floor(date.getTime() / 1000) * 1000;
    const matches = state.stored
      .filter((message) => !recipient || [...message.to, ...message.cc, ...message.bcc].includes(recipient))
      .filter((message) => !fromEmail || message.from === fromEmail)
      .filter((message) => !tag || message.tag === tag)
      .filter((message) => !subject || message.subject === subject)
      .filter((message) => !stream || message.messageStream === stream)
      // Every message the peer accepted counts as sent.
      .filter(() => !status || status === 'sent')
      .filter((message) => !fromDate || second(message.receivedAt) >= fromDate.getTime())
      .filter((message) => !toDate || second(message.receivedAt) <= toDate.getTime())
      .filter((message) => !metadataFilter || message.metadata[metadataFilter[0].slice('metadata_'.length)] === metadataFilter[1])
      .sort((a, b) => b.receivedAt.getTime() - a.receivedAt.getTime());
    exchange.reply({
      status: 200,
      body: {
        TotalCount: matches.length,
        Messages: matches.slice(offset, offset + count).map((message) => ({
          Tag: message.tag ?? '',
          MessageID: message.messageId,
          MessageStream: message.messageStream,
          To: message.to.map((Email) => ({ Email, Name: null })),
          Cc: message.cc.map((Email) => ({ Email, Name: null })),
          Bcc: message.bcc.map((Email) => ({ Email, Name: null })),
          Recipients: [...message.to, ...message.cc, ...message.bcc],
          ReceivedAt: postmarkDate(message.receivedAt),
          From: message.from,
          Subject: message.subject,
          Attachments: [],
          Status: 'Sent',
          TrackOpens: false,
          TrackLinks: 'None',
          Metadata: message.metadata,
          Sandboxed: false,
        })),
      },
    });
  };

  const server = await startHttpPeerServer({
    port,
    name: 'postmark',
    handle: async (exchange) => {
      if (exchange.method === 'POST' && exchange.path === '/email') return send(exchange, false);
      if (exchange.method === 'POST' && exchange.path === '/email/batch') return send(exchange, true);
      if (exchange.method === 'GET' && exchange.path === '/messages/outbound') return search(exchange);
      // GET /server: the server the token belongs to (what the transport's probe reads).
      if (exchange.method === 'GET' && exchange.path === '/server') {
        return exchange.reply(
          authorised(exchange) ?? { status: 200, body: { ID: 1, Name: 'notice-ledger peer', ApiTokens: [serverToken], DeliveryType: 'Live' } },
        );
      }
      exchange.reply(postmarkError(404, 0, 'The requested resource was not found.'));
    },
  });

  return { ...peerControls(state, server, 'postmark'), requestHost: server.baseUrl.replace(/^http:\/\//, ''), serverToken };
}

/**
 * The Delivery webhook Postmark posts for an accepted message (its documented record), for tests
 * that deliver it to the console's webhook route: MessageID and Metadata as sent.
 */
export function postmarkDeliveryWebhook(message: PostmarkMessage, recipient = message.to[0] ?? '', deliveredAt = new Date()): Record<string, unknown> {
  return {
    RecordType: 'Delivery',
    ServerID: 1,
    MessageStream: message.messageStream,
    MessageID: message.messageId,
    Recipient: recipient,
    Tag: message.tag ?? '',
    DeliveredAt: postmarkDate(deliveredAt),
    Details: 'Test delivery webhook details',
    Metadata: message.metadata,
  };
}
