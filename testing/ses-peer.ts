import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { CORRELATION_TAG } from '@/lib/events/types';
import {
  answerAccepted,
  createPeerState,
  faultFor,
  isRecord,
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
 * A local Amazon SES API v2 peer for tests, answering the official `@aws-sdk/client-sesv2`
 * pointed at it (`endpoint: peer.baseUrl`, `credentials: peer.credentials`). It speaks the
 * documented restJson1 shapes (SES API v2 reference: SendEmail, SendBulkEmail,
 * BulkEmailEntryResult, Common Errors):
 * - every request is SigV4-signed: the peer recomputes the signature with the SDK's own signer
 *   (`@smithy/signature-v4`) from the headers the request says it signed, against the configured
 *   key; unsigned, malformed, unknown-key and wrong-signature requests get AWS's common errors
 *   (403 MissingAuthenticationToken, 400 IncompleteSignature, 403 InvalidClientTokenId,
 *   403 SignatureDoesNotMatch) as `x-amzn-ErrorType` plus `{message}`;
 * - `POST /v2/email/outbound-emails` (SendEmail): 200 `{MessageId}`; a refused recipient is
 *   400 MessageRejected;
 * - `POST /v2/email/outbound-bulk-emails` (SendBulkEmail): up to 50 entries, 200
 *   `{BulkEmailEntryResults: [{Status, MessageId, Error}]}` in entry order;
 * - EmailTags (SendBulkEmail: DefaultEmailTags merged with each entry's ReplacementTags) are
 *   stored with the message; the correlation rides on the `notice_correlation` tag;
 * - SES overwrites any Message-ID we set: the stored message's header is
 *   `<MessageId@email.amazonses.com>`, whatever the request carried.
 *
 * SES documents no Retry-After; the `throttle` fault sends one only when asked (429
 * TooManyRequestsException either way). 5xx is InternalServiceErrorException.
 */

export const bulkEmailStatuses = [
  'SUCCESS',
  'MESSAGE_REJECTED',
  'MAIL_FROM_DOMAIN_NOT_VERIFIED',
  'CONFIGURATION_SET_DOES_NOT_EXIST',
  'TEMPLATE_DOES_NOT_EXIST',
  'ACCOUNT_SUSPENDED',
  'ACCOUNT_THROTTLED',
  'ACCOUNT_DAILY_QUOTA_EXCEEDED',
  'INVALID_SENDING_POOL_NAME',
  'ACCOUNT_SENDING_PAUSED',
  'CONFIGURATION_SET_SENDING_PAUSED',
  'INVALID_PARAMETER',
  'TRANSIENT_FAILURE',
  'FAILED',
] as const;
export type BulkEmailStatus = (typeof bulkEmailStatuses)[number];

export type SesItemError = { status: Exclude<BulkEmailStatus, 'SUCCESS'>; error?: string };

export type SesMessage = {
  messageId: string;
  /** SES's Message-ID header for the message: its own, never ours. */
  messageIdHeader: string;
  /** The Message-ID the request tried to set, if any (SES replaced it). */
  requestedMessageIdHeader: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  from: string;
  subject: string;
  tags: Record<string, string>;
  correlation: string | null;
  configurationSet: string | null;
  operation: 'SendEmail' | 'SendBulkEmail';
  receivedAt: Date;
  requestIndex: number;
  answered: Answered | 'pending';
};

export type SesCredentials = { accessKeyId: string; secretAccessKey: string };

/** `baseUrl` is the client's `endpoint`; `refuse`: SendEmail answers 400 MessageRejected, SendBulkEmail that entry's Status. */
export type SesPeer = PeerControls<SesMessage, SesItemError> & { region: string; credentials: SesCredentials };

const BULK_LIMIT = 50;
const RECIPIENT_LIMIT = 50;
const CLOCK_SKEW_MS = 15 * 60_000;
const tagPattern = /^[A-Za-z0-9_-]{1,256}$/;

function sesError(status: number, type: string, message: string, headers: Record<string, string> = {}): PeerReply {
  return {
    status,
    headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.ses/`, 'x-amzn-requestid': randomUUID(), ...headers },
    body: { message },
  };
}

/** An SES message id: 0100 + 12 hex of the time, a UUID, -000000. */
function sesMessageId(now: Date): string {
  return `0100${now.getTime().toString(16).padStart(12, '0')}-${randomUUID()}-000000`;
}

function addressList(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is string => typeof item === 'string').map((item) => (/<([^>]+)>/.exec(item)?.[1] ?? item).trim().toLowerCase());
}

function tagsOf(value: unknown): Record<string, string> | string {
  const tags: Record<string, string> = {};
  if (value === undefined) return tags;
  if (!Array.isArray(value)) return 'EmailTags must be a list of {Name, Value}.';
  for (const tag of value) {
    if (!isRecord(tag) || typeof tag.Name !== 'string' || typeof tag.Value !== 'string') return 'Each tag needs a Name and a Value.';
    if (!tagPattern.test(tag.Name) || !tagPattern.test(tag.Value))
      return `Invalid tag ${tag.Name}: names and values may contain only ASCII letters, numbers, underscores and dashes, at most 256 characters.`;
    tags[tag.Name] = tag.Value;
  }
  return tags;
}

function headerValue(headers: unknown, name: string): string | null {
  if (!Array.isArray(headers)) return null;
  const found = headers.find((header) => isRecord(header) && typeof header.Name === 'string' && header.Name.toLowerCase() === name.toLowerCase());
  return isRecord(found) && typeof found.Value === 'string' ? found.Value : null;
}

/** Subject, recipients and the Message-ID a raw MIME message names in its header block. */
function readRawMessage(data: unknown): { subject: string; to: string[]; messageId: string | null } | null {
  if (typeof data !== 'string') return null;
  const text = Buffer.from(data, 'base64').toString('utf8');
  const head = text.split(/\r?\n\r?\n/, 1)[0] ?? '';
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const field = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(unfolded)?.[1]?.trim() ?? null;
  const to = (field('To') ?? '')
    .split(',')
    .map((part) => (/<([^>]+)>/.exec(part)?.[1] ?? part).trim().toLowerCase())
    .filter(Boolean);
  return { subject: field('Subject') ?? '', to, messageId: field('Message-ID') };
}

/** What a sending call says about all its messages: the correlation tag, the configuration set, the operation. */
function sendingOf(input: Record<string, unknown>, tags: Record<string, string>, operation: SesMessage['operation']) {
  return {
    correlation: tags[CORRELATION_TAG] ?? null,
    configurationSet: typeof input.ConfigurationSetName === 'string' ? input.ConfigurationSetName : null,
    operation,
  };
}

type SignatureCheck = { credentials: SesCredentials; region: string };

/**
 * Verifies the request's SigV4 signature by signing the same request again with the SDK's own
 * signer: the method, path, query, the headers it lists as signed and the body. The signer
 * trusts an `x-amz-content-sha256` header for the payload, so that header is checked against
 * the body first (else a tampered body would pass).
 */
async function verifySignature(exchange: PeerExchange, { credentials, region }: SignatureCheck): Promise<PeerReply | null> {
  const authorization = exchange.headers.authorization;
  if (!authorization)
    return sesError(403, 'MissingAuthenticationToken', 'The request must contain either a valid (registered) AWS access key ID or X.509 certificate.');
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  const amzDate = exchange.headers['x-amz-date'];
  const dateMatch = typeof amzDate === 'string' ? /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate) : null;
  if (!match || !dateMatch || match[2] !== amzDate?.slice(0, 8))
    return sesError(400, 'IncompleteSignature', 'The request signature does not conform to AWS standards.');
  const [, accessKeyId, , scopeRegion, service, signedHeaderList = '', signature = ''] = match;
  if (accessKeyId !== credentials.accessKeyId)
    return sesError(403, 'InvalidClientTokenId', 'The X.509 certificate or AWS access key ID provided does not exist in our records.');
  const [, year, month, day, hour, minute, second] = dateMatch;
  const signingDate = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)));
  if (Math.abs(Date.now() - signingDate.getTime()) > CLOCK_SKEW_MS)
    return sesError(400, 'RequestExpired', 'Request has expired: its x-amz-date is more than 15 minutes from the server time.');
  const mismatch = sesError(
    403,
    'SignatureDoesNotMatch',
    'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
  );
  if (scopeRegion !== region || service !== 'ses') return mismatch;
  const signedNames = signedHeaderList.split(';');
  if (!signedNames.includes('host')) return sesError(400, 'IncompleteSignature', 'The request signature does not conform to AWS standards.');
  const headers: Record<string, string> = {};
  for (const name of signedNames) {
    const value = exchange.headers[name];
    if (value === undefined) return mismatch;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const declaredHash = headers['x-amz-content-sha256'];
  if (declaredHash !== undefined && declaredHash !== createHash('sha256').update(exchange.body).digest('hex')) return mismatch;
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(exchange.query.keys())) {
    const values = exchange.query.getAll(name);
    query[name] = values.length === 1 ? (values[0] ?? '') : values;
  }
  const signer = new SignatureV4({ credentials, region, service: 'ses', sha256: Sha256, applyChecksum: declaredHash !== undefined });
  const signed = await signer.sign(
    {
      method: exchange.method,
      protocol: 'http:',
      hostname: exchange.host.split(':')[0] ?? '',
      path: exchange.path,
      query,
      headers,
      body: new Uint8Array(exchange.body),
    },
    { signingDate, signableHeaders: new Set(signedNames) },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(signed.headers.authorization ?? ''))?.[1] ?? '';
  return expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature)) ? null : mismatch;
}

type Prepared = Omit<SesMessage, 'messageId' | 'messageIdHeader' | 'receivedAt' | 'requestIndex' | 'answered'>;

export async function startSesPeer({
  region = 'us-east-1',
  credentials = { accessKeyId: `AKIA${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(20).toString('base64') },
  port = 0,
}: { region?: string; credentials?: SesCredentials; port?: number } = {}): Promise<SesPeer> {
  const state = createPeerState<SesMessage, SesItemError>();

  const serverError = () =>
    sesError(500, 'InternalServiceErrorException', "The request couldn't be processed because an error occurred with the Amazon SES API v2.");

  const store = (prepared: Prepared, requestIndex: number, now: Date): SesMessage => {
    const messageId = sesMessageId(now);
    const message: SesMessage = {
      ...prepared,
      messageId,
      messageIdHeader: `<${messageId}@email.amazonses.com>`,
      receivedAt: now,
      requestIndex,
      answered: 'pending',
    };
    state.stored.push(message);
    return message;
  };

  /** SendEmail's body as a message to store, or the BadRequestException that refuses it. */
  const prepareSendEmail = (input: Record<string, unknown>): Prepared | PeerReply => {
    const from = typeof input.FromEmailAddress === 'string' ? input.FromEmailAddress.trim().toLowerCase() : '';
    const content = isRecord(input.Content) ? input.Content : null;
    if (!content) return sesError(400, 'BadRequestException', 'Content is required.');
    const destination = isRecord(input.Destination) ? input.Destination : {};
    let to = addressList(destination.ToAddresses);
    const cc = addressList(destination.CcAddresses);
    const bcc = addressList(destination.BccAddresses);
    let subject = '';
    let requestedMessageIdHeader: string | null = null;
    if (isRecord(content.Simple)) {
      const simple = content.Simple;
      subject = isRecord(simple.Subject) && typeof simple.Subject.Data === 'string' ? simple.Subject.Data : '';
      const body = isRecord(simple.Body) ? simple.Body : {};
      if (!isRecord(body.Text) && !isRecord(body.Html)) return sesError(400, 'BadRequestException', 'Simple content needs a Text or an Html body.');
      requestedMessageIdHeader = headerValue(simple.Headers, 'Message-ID');
    } else if (isRecord(content.Raw)) {
      const raw = readRawMessage(content.Raw.Data);
      if (!raw) return sesError(400, 'BadRequestException', 'Raw content needs base64 Data.');
      subject = raw.subject;
      requestedMessageIdHeader = raw.messageId;
      if (to.length + cc.length + bcc.length === 0) to = raw.to;
    } else if (isRecord(content.Template)) {
      const template = content.Template;
      if (typeof template.TemplateName !== 'string' && !isRecord(template.TemplateContent))
        return sesError(400, 'BadRequestException', 'Template content needs a TemplateName or TemplateContent.');
      requestedMessageIdHeader = headerValue(template.Headers, 'Message-ID');
    } else return sesError(400, 'BadRequestException', 'Content needs one of Simple, Raw or Template.');
    if (!from) return sesError(400, 'BadRequestException', 'FromEmailAddress is required.');
    if (to.length + cc.length + bcc.length === 0) return sesError(400, 'BadRequestException', 'Missing final destination.');
    if (to.length + cc.length + bcc.length > RECIPIENT_LIMIT) return sesError(400, 'BadRequestException', `Recipient count exceeds ${RECIPIENT_LIMIT}.`);
    const tags = tagsOf(input.EmailTags);
    if (typeof tags === 'string') return sesError(400, 'BadRequestException', tags);
    return { to, cc, bcc, from, subject, tags, requestedMessageIdHeader, ...sendingOf(input, tags, 'SendEmail') };
  };

  const sendEmail = async (exchange: PeerExchange, input: Record<string, unknown>, requestIndex: number) => {
    const prepared = prepareSendEmail(input);
    if ('status' in prepared) return exchange.reply(prepared);
    const current = faultFor(state.fault, requestIndex);
    if (current.kind === 'throttle') return exchange.reply(throttled(current.retryAfterSeconds));
    const refused = refusalOf(state.refusal, [...prepared.to, ...prepared.cc, ...prepared.bcc], 0)?.refusal;
    if (refused) return exchange.reply(sesError(400, 'MessageRejected', refused.error ?? `Email rejected: ${refused.status}`));
    const message = store(prepared, requestIndex, new Date());
    message.answered = await answerAccepted(
      exchange,
      current,
      { status: 200, headers: { 'x-amzn-requestid': randomUUID() }, body: { MessageId: message.messageId } },
      serverError,
    );
  };

  const sendBulkEmail = async (exchange: PeerExchange, input: Record<string, unknown>, requestIndex: number) => {
    const from = typeof input.FromEmailAddress === 'string' ? input.FromEmailAddress.trim().toLowerCase() : '';
    const template = isRecord(input.DefaultContent) && isRecord(input.DefaultContent.Template) ? input.DefaultContent.Template : null;
    const entries = input.BulkEmailEntries;
    if (!from) return exchange.reply(sesError(400, 'BadRequestException', 'FromEmailAddress is required.'));
    if (!template || (typeof template.TemplateName !== 'string' && !isRecord(template.TemplateContent)))
      return exchange.reply(sesError(400, 'BadRequestException', 'DefaultContent.Template needs a TemplateName or TemplateContent.'));
    if (!Array.isArray(entries) || entries.length === 0)
      return exchange.reply(sesError(400, 'BadRequestException', 'BulkEmailEntries must list at least one entry.'));
    if (entries.length > BULK_LIMIT)
      return exchange.reply(sesError(400, 'BadRequestException', `Too many bulk email entries: at most ${BULK_LIMIT} per call.`));
    const defaultTags = tagsOf(input.DefaultEmailTags);
    if (typeof defaultTags === 'string') return exchange.reply(sesError(400, 'BadRequestException', defaultTags));
    const templateContent = isRecord(template.TemplateContent) ? template.TemplateContent : {};
    const subject = typeof templateContent.Subject === 'string' ? templateContent.Subject : '';
    const prepared: (Prepared | string)[] = entries.map((entry) => {
      if (!isRecord(entry) || !isRecord(entry.Destination)) return 'Each entry needs a Destination.';
      const to = addressList(entry.Destination.ToAddresses);
      const cc = addressList(entry.Destination.CcAddresses);
      const bcc = addressList(entry.Destination.BccAddresses);
      if (to.length + cc.length + bcc.length === 0) return 'Missing final destination.';
      const replacement = tagsOf(entry.ReplacementTags);
      if (typeof replacement === 'string') return replacement;
      const tags = { ...defaultTags, ...replacement };
      return {
        to,
        cc,
        bcc,
        from,
        subject,
        tags,
        requestedMessageIdHeader: headerValue(entry.ReplacementHeaders, 'Message-ID'),
        ...sendingOf(input, tags, 'SendBulkEmail'),
      };
    });
    const invalid = prepared.find((entry): entry is string => typeof entry === 'string');
    if (invalid) return exchange.reply(sesError(400, 'BadRequestException', invalid));
    const current = faultFor(state.fault, requestIndex);
    if (current.kind === 'throttle') return exchange.reply(throttled(current.retryAfterSeconds));
    const now = new Date();
    const accepted: SesMessage[] = [];
    const results = prepared.map((entry, itemIndex) => {
      if (typeof entry === 'string') return { Status: 'FAILED', Error: entry };
      const refused = refusalOf(state.refusal, [...entry.to, ...entry.cc, ...entry.bcc], itemIndex)?.refusal;
      if (refused) return { Status: refused.status, Error: refused.error ?? `Entry rejected: ${refused.status}` };
      const message = store(entry, requestIndex, now);
      accepted.push(message);
      return { Status: 'SUCCESS', MessageId: message.messageId };
    });
    const answered = await answerAccepted(
      exchange,
      accepted.length > 0 ? current : { kind: 'none' },
      { status: 200, headers: { 'x-amzn-requestid': randomUUID() }, body: { BulkEmailEntryResults: results } },
      serverError,
    );
    for (const message of accepted) message.answered = answered;
  };

  const throttled = (retryAfterSeconds: number | undefined) =>
    sesError(
      429,
      'TooManyRequestsException',
      'Too many requests have been made to the operation.',
      retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) },
    );

  const server = await startHttpPeerServer({
    port,
    name: 'ses',
    handle: async (exchange) => {
      const operation =
        exchange.method === 'POST' && exchange.path === '/v2/email/outbound-emails'
          ? sendEmail
          : exchange.method === 'POST' && exchange.path === '/v2/email/outbound-bulk-emails'
            ? sendBulkEmail
            : null;
      const requestIndex = state.received;
      if (operation) state.received += 1;
      const unauthorised = await verifySignature(exchange, { credentials, region });
      if (unauthorised) return exchange.reply(unauthorised);
      // GetAccount: the account's sending state (what the transport's probe reads).
      if (exchange.method === 'GET' && exchange.path === '/v2/email/account') {
        return exchange.reply({ status: 200, body: { SendingEnabled: true, ProductionAccessEnabled: true, EnforcementStatus: 'HEALTHY' } });
      }
      if (!operation) return exchange.reply(sesError(404, 'NotFoundException', 'The resource you attempted to access does not exist.'));
      const input = parseJson(exchange.body);
      if (!isRecord(input)) return exchange.reply(sesError(400, 'SerializationException', 'The request body is not a JSON object.'));
      await operation(exchange, input, requestIndex);
    },
  });

  return { ...peerControls(state, server, 'ses'), region, credentials };
}

/**
 * The SES event-publishing record (what SNS carries as its Message) for an accepted message:
 * SES's MessageId, its own Message-ID, and the message's tags as lists, as SES publishes them.
 */
export function sesEventRecord(message: SesMessage, eventType: 'Send' | 'Delivery' = 'Delivery', at = new Date()): Record<string, unknown> {
  const tags: Record<string, string[]> = { 'ses:from-domain': [message.from.split('@')[1] ?? ''] };
  if (message.configurationSet) tags['ses:configuration-set'] = [message.configurationSet];
  for (const [name, value] of Object.entries(message.tags)) tags[name] = [value];
  const destination = [...message.to, ...message.cc, ...message.bcc];
  return {
    eventType,
    mail: {
      timestamp: message.receivedAt.toISOString(),
      source: message.from,
      messageId: message.messageId,
      destination,
      headersTruncated: false,
      headers: [
        { name: 'From', value: message.from },
        { name: 'To', value: message.to.join(', ') },
        { name: 'Subject', value: message.subject },
        { name: 'Message-ID', value: message.messageIdHeader },
      ],
      commonHeaders: { from: [message.from], to: message.to, messageId: message.messageId, subject: message.subject },
      tags,
    },
    ...(eventType === 'Delivery'
      ? {
          delivery: {
            timestamp: at.toISOString(),
            processingTimeMillis: Math.max(0, at.getTime() - message.receivedAt.getTime()),
            recipients: destination,
            smtpResponse: '250 2.6.0 Message received',
            reportingMTA: 'peer.amazonses.test',
          },
        }
      : { send: {} }),
  };
}
