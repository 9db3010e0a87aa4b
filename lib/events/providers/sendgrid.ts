import { createPublicKey, createVerify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import {
  CORRELATION_TAG,
  normaliseCorrelation,
  normaliseRecipient,
  parseJson,
  reject,
  type NormalizedEvent,
  type ParsedWebhook,
  type SkippedEvent,
} from '@/lib/events/types';
import type { ProviderEventType } from '@/db/schema/states';
import { sendgridBody } from '@/lib/api/webhooks';

/**
 * SendGrid Event Webhook: a JSON array of events per POST; custom_args come back as top-level
 * fields. The Signed Event Webhook puts an ECDSA (P-256, SHA-256) signature over
 * `timestamp + rawBody` in X-Twilio-Email-Event-Webhook-Signature (base64 DER), the timestamp
 * in X-Twilio-Email-Event-Webhook-Timestamp; the public key is shown in SendGrid's settings
 * as base64 DER (SubjectPublicKeyInfo) — PEM is accepted too.
 */

export const SENDGRID_SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const SENDGRID_TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';
const TOLERANCE_SECONDS = 300;

const sendgridEvent = z
  .object({
    email: z.string().min(1),
    timestamp: z.number().int().nonnegative(),
    event: z.string().min(1),
    sg_event_id: z.string().min(1).max(200),
    sg_message_id: z.string().max(400).optional(),
    type: z.string().optional(),
    [CORRELATION_TAG]: z.string().optional(),
  })
  .loose();
// The batch is checked as a whole, each event on its own: one malformed event must not refuse
// its siblings, or SendGrid retries the same batch (on any non-2xx, for up to 24 hours).
// SendGrid documents sg_event_id as base64url, at most 100 characters: only such a value is
// echoed back to name a skipped event, so a response or log line never repeats a hostile one.
const echoableEventId = /^[A-Za-z0-9+/=_-]{1,100}$/;

export function sendgridPublicKey(text: string): KeyObject {
  const trimmed = text.trim();
  if (trimmed.startsWith('-----BEGIN')) return createPublicKey(trimmed);
  return createPublicKey({ key: Buffer.from(trimmed, 'base64'), format: 'der', type: 'spki' });
}

const typeOf: Record<string, ProviderEventType> = {
  processed: 'accepted',
  delivered: 'delivered',
  deferred: 'deferred',
  dropped: 'dropped',
  spamreport: 'complaint',
  // Subscription tracking: the global unsubscribe and an unsubscribe group both opt the recipient
  // out of courtesy notices (we send no group of our own: any group is our mail); a group
  // resubscribe opts them back in.
  unsubscribe: 'unsubscribe',
  group_unsubscribe: 'unsubscribe',
  group_resubscribe: 'resubscribe',
};

export function parseSendgridWebhook({
  headers,
  body,
  publicKey,
  now = new Date(),
}: {
  headers: Headers;
  body: Buffer;
  publicKey: string | undefined;
  now?: Date;
}): ParsedWebhook {
  if (!publicKey) return reject('not_configured', 'sendgrid webhook is not configured (SENDGRID_WEBHOOK_PUBLIC_KEY)');
  const signature = headers.get(SENDGRID_SIGNATURE_HEADER);
  const timestamp = headers.get(SENDGRID_TIMESTAMP_HEADER);
  if (!signature || !timestamp) return reject('unauthenticated', 'signature headers missing');
  if (!/^\d{1,12}$/.test(timestamp)) return reject('unauthenticated', 'malformed timestamp');
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return reject('unauthenticated', 'timestamp outside the replay window');
  let key: KeyObject;
  try {
    key = sendgridPublicKey(publicKey);
  } catch {
    return reject('not_configured', 'SENDGRID_WEBHOOK_PUBLIC_KEY is not a valid public key');
  }
  const verifier = createVerify('sha256');
  verifier.update(Buffer.concat([Buffer.from(timestamp, 'utf8'), body]));
  let valid = false;
  try {
    valid = verifier.verify(key, signature, 'base64');
  } catch {
    valid = false;
  }
  if (!valid) return reject('unauthenticated', 'signature mismatch');
  const json = parseJson(body.toString('utf8'));
  if (!json.ok) return reject('invalid_input', 'body is not JSON');
  const parsed = sendgridBody.safeParse(json.value);
  if (!parsed.success) return reject('invalid_input', `body is not a SendGrid event array: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const events: NormalizedEvent[] = [];
  const skipped: SkippedEvent[] = [];
  parsed.data.forEach((candidate, index) => {
    const event = sendgridEvent.safeParse(candidate);
    if (event.success) events.push(normaliseSendgridEvent(event.data));
    else skipped.push(describeSkippedEvent({ candidate, index, issues: event.error.issues }));
  });
  return { ok: true, events, skipped };
}

function describeSkippedEvent({ candidate, index, issues }: { candidate: unknown; index: number; issues: z.core.$ZodIssue[] }): SkippedEvent {
  if (typeof candidate !== 'object' || candidate === null || Array.isArray(candidate))
    return { index, eventId: null, reason: 'not_an_object', detail: 'event is not a JSON object' };
  const id: unknown = (candidate as Record<string, unknown>).sg_event_id;
  const eventId = typeof id === 'string' && echoableEventId.test(id) ? id : null;
  const idIssue = issues.find((issue) => issue.path[0] === 'sg_event_id');
  const issue = idIssue ?? issues[0];
  // zod's messages name the rule and the expected type, never the value that broke it.
  const detail = issue ? `${issue.path.map(String).join('.') || 'event'}: ${issue.message}` : 'invalid';
  const reason = idIssue ? (id === undefined ? 'missing_event_id' : 'invalid_event_id') : 'invalid_field';
  return { index, eventId, reason, detail };
}

function normaliseSendgridEvent(event: z.infer<typeof sendgridEvent>): NormalizedEvent {
  // "blocked" is SendGrid's temporary bounce; "bounce" is the permanent one.
  const type: ProviderEventType = event.event === 'bounce' ? (event.type === 'blocked' ? 'soft_bounce' : 'bounce') : (typeOf[event.event] ?? 'other');
  // sg_message_id is "<X-Message-Id from the send response>.filter…" (or ".recvd-…").
  const providerMessageId = event.sg_message_id ? event.sg_message_id.replace(/\.(filter|recvd)[\s\S]*$/, '') : null;
  return {
    provider: 'sendgrid',
    eventId: event.sg_event_id,
    type,
    rawType: event.event,
    correlationId: normaliseCorrelation(event[CORRELATION_TAG]),
    messageId: null,
    providerMessageId: providerMessageId || null,
    recipient: normaliseRecipient(event.email),
    bounceType: event.event === 'bounce' ? (event.type ?? 'bounce') : null,
    occurredAt: new Date(event.timestamp * 1000),
    details: { ...event },
  };
}
