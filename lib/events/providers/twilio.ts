import twilio from 'twilio';
import type { ProviderEventType } from '@/db/schema/states';
import { twilioInboundMessage, twilioStatusCallback } from '@/lib/api/webhooks';
import { normaliseCorrelation, reject, type NormalizedEvent, type ParsedWebhook } from '@/lib/events/types';

/**
 * Twilio's webhooks (Programmable Messaging): the status callback each message names in its
 * `StatusCallback` (ours carries the notice's correlation as `?c=`), and the incoming-message
 * webhook of our sender number (the STOP / START keywords). Both are form-encoded POSTs signed
 * with `X-Twilio-Signature` over the URL Twilio called and the sorted POST parameters; the URL is
 * rebuilt from PUBLIC_BASE_URL (never from the request's Host header) and checked with Twilio's
 * own validator. Nothing of the message body or the phone numbers is kept in the event's details.
 */

/** Twilio's default opt-out and opt-in keywords (Advanced Opt-Out off or on: the same words). */
export const stopKeywords = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'] as const;
export const startKeywords = ['START', 'UNSTOP'] as const;

export function keywordOf(body: string, optOutType?: string): 'stop' | 'start' | null {
  const type = optOutType?.trim().toUpperCase();
  if (type === 'STOP') return 'stop';
  if (type === 'START') return 'start';
  const word = body.trim().toUpperCase();
  if ((stopKeywords as readonly string[]).includes(word)) return 'stop';
  if ((startKeywords as readonly string[]).includes(word)) return 'start';
  return null;
}

/**
 * A Twilio status as a provider event: queued…sent prove that Twilio created the message
 * (`accepted`: a claim stuck after a lost answer is confirmed sent by it); `undelivered` came
 * after hand-over too (a carrier failure, no suppression of an email address); `failed` and
 * `canceled` say Twilio never sent it, which proves nothing a claim could be confirmed by.
 */
export function eventTypeOfStatus(status: string): ProviderEventType {
  switch (status) {
    case 'accepted':
    case 'scheduled':
    case 'queued':
    case 'sending':
    case 'sent':
      return 'accepted';
    case 'delivered':
    case 'read':
      return 'delivered';
    case 'undelivered':
      return 'soft_bounce';
    case 'failed':
    case 'canceled':
      return 'dropped';
    default:
      return 'other';
  }
}

export type TwilioWebhookParams = {
  headers: Headers;
  body: Buffer;
  /** The path and query the request arrived on (`/api/webhooks/twilio?c=…`). */
  pathAndQuery: string;
  authToken: string | undefined;
  publicBaseUrl: string;
  now?: Date;
};

function verified({
  headers,
  body,
  pathAndQuery,
  authToken,
  publicBaseUrl,
}: TwilioWebhookParams): { ok: true; params: Record<string, string> } | { ok: false; parsed: ParsedWebhook } {
  if (!authToken || !publicBaseUrl)
    return { ok: false, parsed: reject('not_configured', 'Twilio webhooks are not configured (TWILIO_AUTH_TOKEN, PUBLIC_BASE_URL)') };
  const signature = headers.get('x-twilio-signature');
  if (!signature) return { ok: false, parsed: reject('forbidden', 'X-Twilio-Signature is missing') };
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) params[name] = value;
  const url = new URL(pathAndQuery, publicBaseUrl).href;
  if (!twilio.validateRequest(authToken, signature, url, params)) return { ok: false, parsed: reject('forbidden', 'X-Twilio-Signature does not match') };
  return { ok: true, params };
}

export function parseTwilioStatusCallback(input: TwilioWebhookParams): ParsedWebhook {
  const check = verified(input);
  if (!check.ok) return check.parsed;
  const parsed = twilioStatusCallback.safeParse(check.params);
  if (!parsed.success)
    return reject(
      'invalid_input',
      `not a Twilio status callback: ${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? ''}`.trim(),
    );
  const callback = parsed.data;
  const status = callback.MessageStatus.toLowerCase();
  const correlation = normaliseCorrelation(new URL(input.pathAndQuery, input.publicBaseUrl).searchParams.get('c'));
  const event: NormalizedEvent = {
    provider: 'twilio',
    // Twilio gives a status callback no id of its own: the message and the status it reports are one event.
    eventId: `${callback.MessageSid}:${status}`,
    type: eventTypeOfStatus(status),
    rawType: status,
    correlationId: correlation,
    messageId: null,
    providerMessageId: callback.MessageSid,
    recipient: null,
    bounceType: status === 'undelivered' ? 'soft' : null,
    occurredAt: input.now ?? new Date(),
    details: {
      MessageStatus: status,
      ...(callback.ErrorCode ? { ErrorCode: callback.ErrorCode } : {}),
      ...(callback.MessagingServiceSid ? { MessagingServiceSid: callback.MessagingServiceSid } : {}),
    },
  };
  return { ok: true, events: [event], skipped: [] };
}

export function parseTwilioInbound(input: TwilioWebhookParams): ParsedWebhook {
  const check = verified(input);
  if (!check.ok) return check.parsed;
  const parsed = twilioInboundMessage.safeParse(check.params);
  if (!parsed.success)
    return reject(
      'invalid_input',
      `not a Twilio incoming message: ${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? ''}`.trim(),
    );
  const message = parsed.data;
  const keyword = keywordOf(message.Body, message.OptOutType);
  const event: NormalizedEvent = {
    provider: 'twilio',
    eventId: `inbound:${message.MessageSid}`,
    type: 'other',
    rawType: keyword ? `inbound_${keyword}` : 'inbound',
    correlationId: null,
    messageId: null,
    providerMessageId: message.MessageSid,
    // The sender of a keyword is whose SMS preference it changes; a message that is none keeps no number.
    recipient: keyword ? message.From.trim() : null,
    bounceType: null,
    occurredAt: input.now ?? new Date(),
    details: keyword ? { keyword } : {},
  };
  return { ok: true, events: [event], skipped: [] };
}
