import { z } from 'zod';
import { genericEvent, genericWebhookBody } from '@/lib/api/webhooks';
import { correlationFromMessageId } from '@/lib/ledger/notice-key';
import { GENERIC_SIGNATURE_HEADER, GENERIC_TIMESTAMP_HEADER, verifyGenericSignature } from '@/lib/events/generic-signature';
import { normaliseCorrelation, normaliseRecipient, parseJson, reject, type NormalizedEvent, type ParsedWebhook } from '@/lib/events/types';

export function parseGenericWebhook({
  headers,
  body,
  secret,
  now = new Date(),
}: {
  headers: Headers;
  body: Buffer;
  secret: string | undefined;
  now?: Date;
}): ParsedWebhook {
  if (!secret) return reject('not_configured', 'generic webhook is not configured (WEBHOOK_SECRET)');
  const text = body.toString('utf8');
  const check = verifyGenericSignature({
    secret,
    body: text,
    timestampHeader: headers.get(GENERIC_TIMESTAMP_HEADER),
    signatureHeader: headers.get(GENERIC_SIGNATURE_HEADER),
    now,
  });
  if (!check.ok) return reject('unauthenticated', `signature ${check.reason}`);
  const json = parseJson(text);
  if (!json.ok) return reject('invalid_input', 'body is not JSON');
  const parsed = genericWebhookBody.safeParse(json.value);
  if (!parsed.success) return reject('invalid_input', `body does not match the generic event schema: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return { ok: true, events: parsed.data.events.map((event) => normaliseGenericEvent(event)), skipped: [] };
}

function normaliseGenericEvent(event: z.infer<typeof genericEvent>): NormalizedEvent {
  const messageId = event.messageId ?? null;
  const bounceType = event.type === 'bounce' ? (event.bounceType ?? 'hard') : event.type === 'soft_bounce' ? 'soft' : null;
  return {
    provider: 'generic',
    eventId: event.id,
    type: event.type === 'bounce' && bounceType === 'soft' ? 'soft_bounce' : event.type,
    rawType: event.type,
    correlationId: normaliseCorrelation(event.correlation) ?? (messageId ? correlationFromMessageId(messageId) : null),
    messageId,
    providerMessageId: event.providerMessageId ?? null,
    recipient: normaliseRecipient(event.recipient),
    bounceType,
    occurredAt: new Date(event.occurredAt),
    details: { ...event },
  };
}
