import { randomBytes } from 'node:crypto';
import { CORRELATION_TAG } from '@/lib/events/types';
import {
  answerAccepted,
  createPeerState,
  faultFor,
  isRecord,
  lookupFaultReply,
  parseJson,
  peerControls,
  startHttpPeerServer,
  type Answered,
  type PeerControls,
  type PeerExchange,
  type PeerReply,
} from './http-peer';

/**
 * A local SendGrid v3 peer for tests, answering the official `@sendgrid/client` pointed at it
 * (`client.setApiKey(key)`, then `client.setDefaultRequest('baseUrl', peer.baseUrl)`). It speaks
 * the documented shapes (v3 Mail Send reference and its errors page, the Email Logs API's
 * OpenAPI document):
 * - `Authorization: Bearer <key>`; a missing or wrong key is 401 `{errors: [{message, field, help}]}`;
 * - `POST /v3/mail/send`: up to 1000 personalizations (and 1000 recipients); 202 with one
 *   `X-Message-Id` and an empty body, no per-item result; any 400 rejects the whole request with
 *   `{errors: [{message, field, help}]}` and nothing is sent;
 * - `custom_args` and `headers` (the message's, overridden by each personalization's) are stored
 *   per recipient, and so is the content with that personalization's `substitutions` made (in the
 *   subject and the content; at most 50 000 bytes of them per personalization, strings only);
 *   one address may appear only once in the request; every recipient gets its own
 *   `sg_message_id`, `<X-Message-Id>.<filter part>`;
 * - Email Logs, for the reconciler: `POST /v3/logs {query, limit}` with the documented query
 *   language (conditions joined by AND, no nesting; `to_email`, `subject`, `sg_message_id`,
 *   `reason` with `=`, `status` and `categories` with `IN (…)`, `sg_message_id_created_at` with
 *   `> < >= <=` and `TIMESTAMP "…"`), `{messages: [...]}`; custom args cannot be queried there,
 *   so `GET /v3/logs/{sg_message_id}` returns one message's details with its `custom_args`.
 *
 * Faults: the request-level ones of `./http-peer` (429 with SendGrid's X-RateLimit-* headers and
 * Retry-After when asked, delay, 5xx after accepting, a dropped connection after accepting), a 5xx
 * or 429 on the Email Logs endpoints (`setLookupFault`), and
 * `refuse` by recipient: SendGrid has no per-item results, so a refused recipient is a 400 that
 * rejects the whole request, as its invalid-address errors do.
 */

export type SendgridMessage = {
  /** The request's X-Message-Id. */
  xMessageId: string;
  /** This recipient's message id in events and Email Logs. */
  sgMessageId: string;
  to: string;
  from: string;
  subject: string;
  customArgs: Record<string, string>;
  correlation: string | null;
  categories: string[];
  /** The message's headers, overridden by its personalization's (lower-case names). */
  headers: Record<string, string>;
  /** The content as this recipient gets it: the message's parts with its personalization's substitutions made. */
  text: string;
  html: string;
  personalizationIndex: number;
  receivedAt: Date;
  requestIndex: number;
  answered: Answered | 'pending';
};

/**
 * `baseUrl` is what `setDefaultRequest('baseUrl', …)` is set to; `refuse` (by recipient and
 * personalization index): a refused recipient rejects the whole request with 400.
 */
export type SendgridPeer = PeerControls<SendgridMessage, SendgridRefusal> & { apiKey: string };

export type SendgridRefusal = { message?: string };

const PERSONALIZATION_LIMIT = 1000;
const SUBSTITUTION_LIMIT = 50_000;
const RECIPIENT_LIMIT = 1000;
const LOGS_LIMIT = 1000;
const helpBase = 'http://sendgrid.com/docs/API_Reference/Web_API_v3/Mail/errors.html';

type SendgridError = { message: string; field: string | null; help: string | null };

function sendgridErrors(status: number, errors: SendgridError[], headers?: Record<string, string>): PeerReply {
  return { status, body: { errors }, ...(headers ? { headers } : {}) };
}

function fieldError(message: string, field: string, anchor: string): PeerReply {
  return sendgridErrors(400, [{ message, field, help: `${helpBase}#${anchor}` }]);
}

/** A 22-character id like SendGrid's X-Message-Id. */
function xMessageId(): string {
  return randomBytes(16).toString('base64url').slice(0, 22);
}

const plausibleAddress = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function stringRecord(value: unknown): Record<string, string> | null {
  if (value === undefined) return {};
  if (!isRecord(value)) return null;
  const out: Record<string, string> = {};
  for (const [name, item] of Object.entries(value)) {
    if (typeof item !== 'string') return null;
    out[name] = item;
  }
  return out;
}

type Condition =
  | { field: 'to_email' | 'subject' | 'sg_message_id' | 'reason'; op: '='; value: string }
  | { field: 'status' | 'categories'; op: 'IN'; values: string[] }
  | { field: 'sg_message_id_created_at'; op: '>' | '<' | '>=' | '<='; value: Date };

/** Parses the Email Logs query language as documented; a string says what is wrong. */
export function parseLogsQuery(query: string): Condition[] | string {
  const text = query.trim();
  if (text === '') return [];
  // AND joins conditions; one inside a quoted value (an even number of quotes follows it) does not.
  const parts = text.split(/\s+AND\s+(?=(?:[^"']*["'][^"']*["'])*[^"']*$)/);
  const conditions: Condition[] = [];
  for (const part of parts) {
    if (/[()]/.test(part.replace(/\bIN\s*\([^()]*\)/, ''))) return `nesting is not allowed: ${part}`;
    const equals = /^(to_email|subject|sg_message_id|reason)\s*=\s*(?:"([^"]*)"|'([^']*)')$/.exec(part);
    if (equals) {
      conditions.push({ field: equals[1] as 'to_email', op: '=', value: equals[2] ?? equals[3] ?? '' });
      continue;
    }
    const within = /^(status|categories)\s+IN\s*\(([^()]*)\)$/.exec(part);
    if (within) {
      const values = (within[2] ?? '').split(',').map((value) => /^\s*'([^']*)'\s*$/.exec(value)?.[1]);
      if (values.some((value) => value === undefined)) return `IN takes a list of quoted strings: ${part}`;
      conditions.push({ field: within[1] as 'status', op: 'IN', values: values as string[] });
      continue;
    }
    const time = /^sg_message_id_created_at\s*(>=|<=|>|<)\s*TIMESTAMP\s+"([^"]+)"$/.exec(part);
    if (time) {
      const value = new Date(time[2] ?? '');
      if (Number.isNaN(value.getTime())) return `invalid timestamp: ${time[2]}`;
      conditions.push({ field: 'sg_message_id_created_at', op: time[1] as '>', value });
      continue;
    }
    return `invalid syntax: '${part}' is not a condition on a known field with its allowed operator`;
  }
  return conditions;
}

function matches(message: SendgridMessage, condition: Condition): boolean {
  if (condition.op === '=') {
    const value = { to_email: message.to, subject: message.subject, sg_message_id: message.sgMessageId, reason: '' }[condition.field];
    return condition.field === 'to_email' ? value === condition.value.toLowerCase() : value === condition.value;
  }
  if (condition.op === 'IN')
    return condition.field === 'status' ? condition.values.includes('processed') : message.categories.some((category) => condition.values.includes(category));
  const at = message.receivedAt.getTime();
  const bound = condition.value.getTime();
  return { '>': at > bound, '<': at < bound, '>=': at >= bound, '<=': at <= bound }[condition.op];
}

export async function startSendgridPeer({
  apiKey = `SG.${randomBytes(11).toString('base64url')}.${randomBytes(32).toString('base64url')}`,
  port = 0,
}: { apiKey?: string; port?: number } = {}): Promise<SendgridPeer> {
  const state = createPeerState<SendgridMessage, SendgridRefusal>();

  const authorised = (exchange: PeerExchange): PeerReply | null => {
    const header = exchange.headers.authorization;
    if (!header) return sendgridErrors(401, [{ message: 'Permission denied, wrong credentials', field: null, help: null }]);
    if (header !== `Bearer ${apiKey}`)
      return sendgridErrors(401, [{ message: 'The provided authorization grant is invalid, expired, or revoked', field: null, help: null }]);
    return null;
  };

  type Recipient = Omit<SendgridMessage, 'xMessageId' | 'sgMessageId' | 'receivedAt' | 'requestIndex' | 'answered'>;

  /** The whole mail send checked as SendGrid does: every recipient out, or a 400 and nothing. */
  const prepare = (input: unknown): Recipient[] | PeerReply => {
    if (!isRecord(input)) return sendgridErrors(400, [{ message: 'Bad Request', field: null, help: null }]);
    const personalizations = input.personalizations;
    if (!Array.isArray(personalizations) || personalizations.length === 0)
      return fieldError('You must have at least one personalization.', 'personalizations', 'message.personalizations');
    if (personalizations.length > PERSONALIZATION_LIMIT)
      return fieldError(
        `The personalization block is limited to ${PERSONALIZATION_LIMIT} personalizations per API request. You have provided ${personalizations.length} personalizations. Please consider splitting this into multiple requests and resending your request.`,
        'personalizations',
        'message.personalizations',
      );
    const from = isRecord(input.from) && typeof input.from.email === 'string' ? input.from.email.trim().toLowerCase() : '';
    if (!plausibleAddress.test(from))
      return fieldError(
        'The from object must be provided for every email send. It is an object that requires the email parameter.',
        'from.email',
        'message.from',
      );
    const hasContent = Array.isArray(input.content) && input.content.some((part) => isRecord(part) && typeof part.value === 'string' && part.value.length > 0);
    if (!hasContent && typeof input.template_id !== 'string')
      return fieldError('Unless a valid template_id is provided, the content parameter is required.', 'content', 'message.content');
    const messageArgs = stringRecord(input.custom_args);
    if (!messageArgs) return fieldError('Invalid type. Expected: object of strings.', 'custom_args', 'message.custom_args');
    const categories = Array.isArray(input.categories) ? input.categories.filter((category): category is string => typeof category === 'string') : [];
    const messageHeaders = stringRecord(input.headers);
    if (!messageHeaders) return fieldError('Invalid type. Expected: object of strings.', 'headers', 'message.headers');
    const part = (type: string) => {
      const found = Array.isArray(input.content) ? input.content.find((one) => isRecord(one) && one.type === type) : undefined;
      return isRecord(found) && typeof found.value === 'string' ? found.value : '';
    };
    const content = { text: part('text/plain'), html: part('text/html') };
    const seen = new Set<string>();
    const recipients: Recipient[] = [];
    for (const [index, personalization] of personalizations.entries()) {
      if (!isRecord(personalization) || !Array.isArray(personalization.to) || personalization.to.length === 0)
        return fieldError(
          'The to parameter is required for all personalization objects, and must have at least one email object with a valid email address.',
          `personalizations.${index}.to`,
          'message.personalizations.to',
        );
      const args = stringRecord(personalization.custom_args);
      if (!args)
        return fieldError('Invalid type. Expected: object of strings.', `personalizations.${index}.custom_args`, 'message.personalizations.custom_args');
      const substitutions = stringRecord(personalization.substitutions);
      if (!substitutions)
        return fieldError('Invalid type. Expected: object of strings.', `personalizations.${index}.substitutions`, 'message.personalizations.substitutions');
      const substitutionBytes = Object.entries(substitutions).reduce((sum, [tag, value]) => sum + Buffer.byteLength(tag) + Buffer.byteLength(value), 0);
      if (substitutionBytes > SUBSTITUTION_LIMIT)
        return fieldError(
          `Substitutions are limited to ${SUBSTITUTION_LIMIT} bytes per personalization block.`,
          `personalizations.${index}.substitutions`,
          'message.personalizations.substitutions',
        );
      const headerArgs = stringRecord(personalization.headers);
      if (!headerArgs) return fieldError('Invalid type. Expected: object of strings.', `personalizations.${index}.headers`, 'message.personalizations.headers');
      const substitute = (value: string) => Object.entries(substitutions).reduce((text, [tag, replacement]) => text.split(tag).join(replacement), value);
      const subject = substitute(
        typeof personalization.subject === 'string' ? personalization.subject : typeof input.subject === 'string' ? input.subject : '',
      );
      if (!subject && typeof input.template_id !== 'string')
        return fieldError(
          'The subject is required. You can get around this requirement if you use a template with a subject defined.',
          'subject',
          'message.subject',
        );
      for (const [toIndex, address] of personalization.to.entries()) {
        const to = isRecord(address) && typeof address.email === 'string' ? address.email.trim().toLowerCase() : '';
        const field = `personalizations.${index}.to.${toIndex}.email`;
        if (!plausibleAddress.test(to)) return fieldError('Does not contain a valid address.', field, 'message.personalizations.to');
        if (seen.has(to))
          return fieldError(
            'Each unique email address in the personalizations array should only be included once. You have included email address more than once.',
            field,
            'message.personalizations',
          );
        seen.add(to);
        const refused = state.refusal?.(to, index);
        if (refused) return fieldError(refused.message ?? 'Does not contain a valid address.', field, 'message.personalizations.to');
        const customArgs = { ...messageArgs, ...args };
        const headers = Object.fromEntries(Object.entries({ ...messageHeaders, ...headerArgs }).map(([name, value]) => [name.toLowerCase(), value]));
        recipients.push({
          to,
          from,
          subject,
          customArgs,
          correlation: customArgs[CORRELATION_TAG] ?? null,
          categories,
          headers,
          text: substitute(content.text),
          html: substitute(content.html),
          personalizationIndex: index,
        });
      }
    }
    if (recipients.length > RECIPIENT_LIMIT)
      return fieldError(`There is a limit of ${RECIPIENT_LIMIT} total recipients (to + cc + bcc) per request.`, 'personalizations', 'message.personalizations');
    return recipients;
  };

  const serverError = (status: 500 | 502 | 503) => sendgridErrors(status, [{ message: 'internal error', field: null, help: null }]);

  const send = async (exchange: PeerExchange) => {
    const requestIndex = state.received;
    state.received += 1;
    const refused = authorised(exchange);
    if (refused) return exchange.reply(refused);
    const input = parseJson(exchange.body);
    if (input === undefined) return exchange.reply(sendgridErrors(400, [{ message: 'Invalid JSON', field: null, help: null }]));
    const recipients = prepare(input);
    if (!Array.isArray(recipients)) return exchange.reply(recipients);
    const current = faultFor(state.fault, requestIndex);
    if (current.kind === 'throttle') {
      const reset = String(Math.ceil(Date.now() / 1000) + (current.retryAfterSeconds ?? 1));
      return exchange.reply(
        sendgridErrors(429, [{ message: 'too many requests', field: null, help: null }], {
          'x-ratelimit-limit': '600',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': reset,
          ...(current.retryAfterSeconds === undefined ? {} : { 'retry-after': String(current.retryAfterSeconds) }),
        }),
      );
    }
    const id = xMessageId();
    const now = new Date();
    const accepted = recipients.map((recipient, index) => {
      const message: SendgridMessage = {
        ...recipient,
        xMessageId: id,
        sgMessageId: `${id}.recvd-peer-${requestIndex}-${index.toString(16).toUpperCase()}.0`,
        receivedAt: now,
        requestIndex,
        answered: 'pending',
      };
      state.stored.push(message);
      return message;
    });
    const answered = await answerAccepted(exchange, current, { status: 202, headers: { 'x-message-id': id } }, serverError);
    for (const message of accepted) message.answered = answered;
  };

  const searchLogs = (exchange: PeerExchange) => {
    const refused = authorised(exchange);
    if (refused) return exchange.reply(refused);
    const faulted = lookupFaultReply(state, (status, message) => sendgridErrors(status, [{ message, field: null, help: null }]));
    if (faulted) return exchange.reply(faulted);
    const input = parseJson(exchange.body);
    if (!isRecord(input)) return exchange.reply(sendgridErrors(400, [{ message: 'the request body must be a JSON object', field: null, help: null }]));
    const limit = input.limit === undefined ? 10 : input.limit;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > LOGS_LIMIT)
      return exchange.reply(sendgridErrors(400, [{ message: `limit must be a whole number from 1 to ${LOGS_LIMIT}`, field: 'limit', help: null }]));
    if (input.query !== undefined && typeof input.query !== 'string')
      return exchange.reply(sendgridErrors(400, [{ message: 'query must be a string', field: 'query', help: null }]));
    const conditions = parseLogsQuery(typeof input.query === 'string' ? input.query : '');
    if (typeof conditions === 'string') return exchange.reply(sendgridErrors(400, [{ message: conditions, field: 'query', help: null }]));
    const found = state.stored
      .filter((message) => conditions.every((condition) => matches(message, condition)))
      .sort((a, b) => b.receivedAt.getTime() - a.receivedAt.getTime())
      .slice(0, limit);
    exchange.reply({
      status: 200,
      body: {
        messages: found.map((message) => ({
          from_email: message.from,
          sg_message_id: message.sgMessageId,
          subject: message.subject,
          to_email: message.to,
          status: 'processed',
          sg_message_id_created_at: message.receivedAt.toISOString(),
        })),
      },
    });
  };

  const logDetails = (exchange: PeerExchange, sgMessageId: string) => {
    const refused = authorised(exchange);
    if (refused) return exchange.reply(refused);
    const faulted = lookupFaultReply(state, (status, message) => sendgridErrors(status, [{ message, field: null, help: null }]));
    if (faulted) return exchange.reply(faulted);
    const message = state.stored.find((candidate) => candidate.sgMessageId === sgMessageId);
    if (!message) return exchange.reply(sendgridErrors(404, [{ message: 'message not found', field: null, help: null }]));
    exchange.reply({
      status: 200,
      body: {
        from_email: message.from,
        sg_message_id: message.sgMessageId,
        subject: message.subject,
        to_email: message.to,
        status: 'processed',
        api_key_id: apiKey.split('.')[1] ?? '',
        client_ip: '127.0.0.1',
        category: message.categories,
        custom_args: message.customArgs,
        events: [
          {
            event: 'processed',
            email: message.to,
            sg_message_id: message.sgMessageId,
            sg_event_id: randomBytes(16).toString('base64url').slice(0, 22),
            timestamp: Math.floor(message.receivedAt.getTime() / 1000),
            'smtp-id': `<${message.xMessageId}@peer.sendgrid.test>`,
            custom_args: message.customArgs,
          },
        ],
      },
    });
  };

  const server = await startHttpPeerServer({
    port,
    name: 'sendgrid',
    handle: async (exchange) => {
      if (exchange.method === 'POST' && exchange.path === '/v3/mail/send') return send(exchange);
      if (exchange.method === 'POST' && exchange.path === '/v3/logs') return searchLogs(exchange);
      // GET /v3/scopes: the key's permissions (what the transport's probe reads).
      if (exchange.method === 'GET' && exchange.path === '/v3/scopes')
        return exchange.reply(authorised(exchange) ?? { status: 200, body: { scopes: ['mail.send'] } });
      const detail = /^\/v3\/logs\/([^/]+)$/.exec(exchange.path);
      if (exchange.method === 'GET' && detail?.[1]) return logDetails(exchange, decodeURIComponent(detail[1]));
      exchange.reply(sendgridErrors(404, [{ message: 'not found', field: null, help: null }]));
    },
  });

  return { ...peerControls(state, server, 'sendgrid'), apiKey };
}

/**
 * The Event Webhook entries SendGrid posts for an accepted message: its sg_message_id, and its
 * custom args at the top level of each event, as the Event Webhook puts them.
 */
export function sendgridWebhookEvents(
  message: SendgridMessage,
  events: ('processed' | 'delivered' | 'dropped')[] = ['processed', 'delivered'],
  at = new Date(),
): Record<string, unknown>[] {
  return events.map((event) => ({
    ...message.customArgs,
    email: message.to,
    timestamp: Math.floor(at.getTime() / 1000),
    'smtp-id': `<${message.xMessageId}@peer.sendgrid.test>`,
    event,
    category: message.categories,
    sg_event_id: randomBytes(16).toString('base64url').slice(0, 22),
    sg_message_id: message.sgMessageId,
    ...(event === 'delivered' ? { response: '250 OK' } : {}),
    ...(event === 'dropped' ? { reason: 'Bounced Address', status: '5.0.0' } : {}),
  }));
}
