import { z } from 'zod';
import { providerContract } from '@/lib/http/contract';

/**
 * The provider webhooks: each provider's documented payload as its parser reads it once the
 * request is authenticated, and the one summary every provider gets back. A provider reads only
 * the status (2xx: stop retrying); the summary is for the person reading the provider's log.
 */

/** Why one event of an authentic batch was skipped (lib/events/types.ts SkippedEvent). */
export const skipReasons = ['not_an_object', 'missing_event_id', 'invalid_event_id', 'invalid_field'] as const;
export type SkipReason = (typeof skipReasons)[number];

/** The generic webhook (README "Provider webhooks"): a signed batch of our own event shape. */
export const genericEvent = z.object({
  id: z.string().min(1).max(200),
  type: z.enum(['accepted', 'delivered', 'deferred', 'bounce', 'soft_bounce', 'complaint', 'dropped', 'other']),
  correlation: z.string().max(200).nullish(),
  messageId: z.string().max(998).nullish(),
  providerMessageId: z.string().max(200).nullish(),
  recipient: z.string().max(320).nullish(),
  occurredAt: z.iso.datetime({ offset: true }),
  bounceType: z.enum(['hard', 'soft']).nullish(),
});

export const genericWebhookBody = z.object({ events: z.array(genericEvent).min(1).max(1000) });

/** Postmark: one record per request, typed by RecordType, echoing the message's Metadata. */
const postmarkMetadata = z.record(z.string(), z.unknown()).optional();

export const postmarkDelivery = z
  .object({
    RecordType: z.literal('Delivery'),
    MessageID: z.string().min(1),
    Recipient: z.string(),
    DeliveredAt: z.iso.datetime({ offset: true }),
    Metadata: postmarkMetadata,
  })
  .loose();
export const postmarkBounceLike = z
  .object({
    RecordType: z.enum(['Bounce', 'SpamComplaint']),
    ID: z.union([z.number(), z.string().min(1)]),
    Type: z.string(),
    TypeCode: z.number().int().optional(),
    MessageID: z.string().min(1),
    Email: z.string(),
    BouncedAt: z.iso.datetime({ offset: true }),
    Metadata: postmarkMetadata,
  })
  .loose();
/**
 * A change of the message stream's suppression list. `SuppressSending: true` with
 * `SuppressionReason: ManualSuppression` and `Origin: Recipient` is the recipient unsubscribing
 * (Postmark's unsubscribe link or the List-Unsubscribe header); `false` is a reactivation. A
 * HardBounce or SpamComplaint change repeats what the Bounce / SpamComplaint record already said,
 * and is stored as `other`. MessageID is null for a suppression support made in Postmark.
 */
export const postmarkSubscriptionChange = z
  .object({
    RecordType: z.literal('SubscriptionChange'),
    MessageID: z.string().min(1).nullable().optional(),
    Recipient: z.string().min(1),
    SuppressSending: z.boolean(),
    SuppressionReason: z.string().nullable().optional(),
    Origin: z.string().nullable().optional(),
    ChangedAt: z.iso.datetime({ offset: true }),
    Metadata: postmarkMetadata,
  })
  .loose();
export const postmarkOther = z.object({ RecordType: z.string().min(1), MessageID: z.string().min(1), Metadata: postmarkMetadata }).loose();

/** The records this route reads; anything else with a RecordType and MessageID is stored as `other`. */
export const postmarkRecord = z.union([postmarkDelivery, postmarkBounceLike, postmarkSubscriptionChange, postmarkOther]);

/** SendGrid: a JSON array of events per POST. */
/** Each event is then read on its own: a malformed one is skipped, not the batch. */
export const sendgridBody = z.array(z.unknown()).min(1).max(5000);

/** Amazon SNS: the envelope SES event publishing arrives in (lib/events/sns.ts checks its signature). */
export const snsEnvelope = z.object({
  Type: z.enum(['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation']),
  MessageId: z.string().min(1).max(200),
  TopicArn: z.string().min(1).max(400),
  Subject: z.string().max(200).optional(),
  Message: z.string().max(300_000),
  Timestamp: z.iso.datetime({ offset: true }),
  SignatureVersion: z.enum(['1', '2']),
  Signature: z.string().min(1).max(4096),
  SigningCertURL: z.string().max(2048),
  SubscribeURL: z.string().max(2048).optional(),
  Token: z.string().max(2048).optional(),
  UnsubscribeURL: z.string().max(2048).optional(),
});
export type SnsEnvelope = z.infer<typeof snsEnvelope>;

/** Twilio: the status callback and the incoming-message webhook, form-encoded. */
const sid = z.string().regex(/^(SM|MM|IM)[0-9a-fA-F]{32}$/, 'must be a Twilio Message SID');

export const twilioStatusCallback = z.object({
  MessageSid: sid,
  MessageStatus: z.string().min(1).max(40),
  AccountSid: z.string().max(64).optional(),
  ErrorCode: z.string().max(10).optional(),
  MessagingServiceSid: z.string().max(64).optional(),
});

export const twilioInboundMessage = z.object({
  MessageSid: sid,
  From: z.string().min(1).max(40),
  To: z.string().max(40).optional(),
  Body: z.string().max(1600).default(''),
  OptOutType: z.string().max(20).optional(),
});

export const webhookSummary = z.object({
  received: z.number().int(),
  stored: z.number().int(),
  duplicates: z.number().int(),
  confirmed: z.number().int(),
  skippedCount: z.number().int(),
  skipped: z.array(z.object({ index: z.number().int(), eventId: z.string().nullable(), reason: z.enum(skipReasons), detail: z.string() })),
  note: z.string().optional(),
});
export type WebhookSummary = z.infer<typeof webhookSummary>;

export const genericWebhook = providerContract({ path: '/api/webhooks/generic', provider: 'generic', input: genericWebhookBody, output: webhookSummary });
export const postmarkWebhook = providerContract({ path: '/api/webhooks/postmark', provider: 'postmark', input: postmarkRecord, output: webhookSummary });
export const sendgridWebhook = providerContract({ path: '/api/webhooks/sendgrid', provider: 'sendgrid', input: sendgridBody, output: webhookSummary });
export const sesWebhook = providerContract({ path: '/api/webhooks/ses', provider: 'ses', input: snsEnvelope, output: webhookSummary });

export const twilioWebhook = providerContract({ path: '/api/webhooks/twilio', provider: 'twilio', input: twilioStatusCallback, output: webhookSummary });
export const twilioInboundWebhook = providerContract({
  path: '/api/webhooks/twilio/inbound',
  provider: 'twilio_inbound',
  input: twilioInboundMessage,
  output: webhookSummary,
});

export const providerRoutes = [genericWebhook, postmarkWebhook, sendgridWebhook, sesWebhook, twilioWebhook, twilioInboundWebhook] as const;
