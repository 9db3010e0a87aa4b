import { z } from 'zod';
import { correlationFromMessageId } from '@/lib/ledger/notice-key';
import type { SnsEnvelope } from '@/lib/api/webhooks';
import { isTrustedSnsUrl, verifySnsMessage, type SnsKeyResolver } from '@/lib/events/sns';
import {
  CORRELATION_HEADER,
  CORRELATION_TAG,
  normaliseCorrelation,
  normaliseRecipient,
  parseJson,
  reject,
  type NormalizedEvent,
  type ParsedWebhook,
} from '@/lib/events/types';
import type { ProviderEventType } from '@/db/schema/states';

/**
 * SES event publishing (configuration set → SNS topic → HTTPS subscription), and the older
 * identity notifications (`notificationType` instead of `eventType`). SES rewrites Message-ID,
 * so the correlation comes from the message tag, else from our X-Notice-Correlation header
 * when SES included the original headers.
 */

const recipientList = z.array(z.object({ emailAddress: z.string() }).loose());

const topicPreferences = z
  .object({
    unsubscribeAll: z.boolean().optional(),
    topicSubscriptionStatus: z.array(z.object({ topicName: z.string(), subscriptionStatus: z.string() }).loose()).optional(),
  })
  .loose();

/**
 * Opted out when the new preferences unsubscribe from all or from any topic (our notices are
 * one list to the recipient); back in when they left "unsubscribe all" with no topic opted out;
 * anything else (a topic opted into, nothing changed) says nothing about our courtesy notices.
 */
function subscriptionChangeOf(subscription: {
  newTopicPreferences?: z.infer<typeof topicPreferences>;
  oldTopicPreferences?: z.infer<typeof topicPreferences>;
}) {
  const next = subscription.newTopicPreferences ?? {};
  const optedOutOfTopic = (next.topicSubscriptionStatus ?? []).some((topic) => topic.subscriptionStatus.toLowerCase() === 'optout');
  if (next.unsubscribeAll === true || optedOutOfTopic) return 'unsubscribe' as const;
  if (next.unsubscribeAll === false && subscription.oldTopicPreferences?.unsubscribeAll === true) return 'resubscribe' as const;
  return 'other' as const;
}

const sesMail = z
  .object({
    messageId: z.string().min(1),
    timestamp: z.iso.datetime({ offset: true }),
    destination: z.array(z.string()).default([]),
    tags: z.record(z.string(), z.array(z.string())).optional(),
    headers: z.array(z.object({ name: z.string(), value: z.string() })).optional(),
    commonHeaders: z.object({ messageId: z.string().optional() }).loose().optional(),
  })
  .loose();

const sesEvent = z
  .object({
    eventType: z.string().optional(),
    notificationType: z.string().optional(),
    mail: sesMail,
    bounce: z
      .object({
        bounceType: z.string(),
        bounceSubType: z.string().optional(),
        bouncedRecipients: recipientList,
        timestamp: z.iso.datetime({ offset: true }),
        feedbackId: z.string(),
      })
      .loose()
      .optional(),
    complaint: z
      .object({
        complainedRecipients: recipientList,
        timestamp: z.iso.datetime({ offset: true }),
        feedbackId: z.string(),
        complaintFeedbackType: z.string().optional(),
      })
      .loose()
      .optional(),
    delivery: z
      .object({ recipients: z.array(z.string()), timestamp: z.iso.datetime({ offset: true }) })
      .loose()
      .optional(),
    // Event publishing's `Subscription` type: a change through SES's list management (the
    // List-Unsubscribe header SES adds, or its subscription page) for mail sent with a contact list.
    subscription: z
      .object({
        timestamp: z.iso.datetime({ offset: true }),
        source: z.string().optional(),
        newTopicPreferences: topicPreferences.optional(),
        oldTopicPreferences: topicPreferences.optional(),
      })
      .loose()
      .optional(),
    deliveryDelay: z
      .object({ delayedRecipients: recipientList, timestamp: z.iso.datetime({ offset: true }), delayType: z.string().optional() })
      .loose()
      .optional(),
  })
  .loose()
  .refine((event) => event.eventType !== undefined || event.notificationType !== undefined, 'eventType or notificationType is required');
type SesEvent = z.infer<typeof sesEvent>;

export type SubscriptionConfirmer = (subscribeUrl: string) => Promise<void>;

export const confirmSnsSubscription: SubscriptionConfirmer = async (subscribeUrl) => {
  const response = await fetch(subscribeUrl, { redirect: 'error', signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`subscription confirmation answered ${response.status}`);
};

export async function parseSesWebhook({
  body,
  resolveKey,
  allowedTopics,
  confirmSubscription = confirmSnsSubscription,
  now = new Date(),
}: {
  body: Buffer;
  resolveKey: SnsKeyResolver;
  allowedTopics: string[];
  confirmSubscription?: SubscriptionConfirmer;
  now?: Date;
}): Promise<ParsedWebhook> {
  const json = parseJson(body.toString('utf8'));
  if (!json.ok) return reject('invalid_input', 'body is not JSON');
  const verified = await verifySnsMessage({ value: json.value, resolveKey, allowedTopics, now });
  if (!verified.ok) return { ok: false, refusal: verified.refusal };
  const envelope = verified.message;
  if (envelope.Type !== 'Notification') return handleSubscriptionMessage({ envelope, host: verified.host, confirmSubscription });
  const inner = parseJson(envelope.Message);
  if (!inner.ok) return reject('invalid_input', 'SNS Message is not JSON');
  const parsed = sesEvent.safeParse(inner.value);
  if (!parsed.success) return reject('invalid_input', `SNS Message is not an SES event: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return { ok: true, events: normaliseSesEvent({ event: parsed.data, envelope }), skipped: [] };
}

/** Reached only for a listed topic (verifySnsMessage), so an attacker's topic is never subscribed. */
async function handleSubscriptionMessage({
  envelope,
  host,
  confirmSubscription,
}: {
  envelope: SnsEnvelope;
  /** The topic's SNS host: the SubscribeURL must be on it. */
  host: string;
  confirmSubscription: SubscriptionConfirmer;
}): Promise<ParsedWebhook> {
  if (envelope.Type === 'UnsubscribeConfirmation') return { ok: true, events: [], skipped: [], note: 'unsubscribe confirmation ignored' };
  if (!envelope.SubscribeURL || !isTrustedSnsUrl(envelope.SubscribeURL, { pem: false, host }))
    return reject('invalid_input', "SubscribeURL is not an https URL on the topic's SNS host");
  try {
    await confirmSubscription(envelope.SubscribeURL);
  } catch {
    return reject('not_configured', 'could not confirm the SNS subscription; SNS will retry');
  }
  return { ok: true, events: [], skipped: [], note: 'subscription confirmed' };
}

function correlationOfMail(mail: SesEvent['mail']): { correlation: string | null; messageId: string | null } {
  const tagged = normaliseCorrelation(mail.tags?.[CORRELATION_TAG]?.[0]);
  const header = mail.headers?.find((h) => h.name.toLowerCase() === CORRELATION_HEADER.toLowerCase());
  const messageIdHeader = mail.headers?.find((h) => h.name.toLowerCase() === 'message-id')?.value ?? null;
  const fromMessageId = messageIdHeader ? correlationFromMessageId(messageIdHeader) : null;
  return { correlation: tagged ?? normaliseCorrelation(header?.value) ?? fromMessageId, messageId: messageIdHeader };
}

/** Everything but the message headers (they may carry personal data) and content. */
function compactDetails(event: SesEvent, envelope: SnsEnvelope): Record<string, unknown> {
  const { mail, ...rest } = event;
  const { headers: _headers, commonHeaders: _common, ...mailRest } = mail;
  return { ...rest, mail: mailRest, sns: { messageId: envelope.MessageId, topicArn: envelope.TopicArn, timestamp: envelope.Timestamp } };
}

function normaliseSesEvent({ event, envelope }: { event: SesEvent; envelope: SnsEnvelope }): NormalizedEvent[] {
  const rawType = event.eventType ?? event.notificationType ?? 'unknown';
  const { correlation, messageId } = correlationOfMail(event.mail);
  const details = compactDetails(event, envelope);
  const sesId = event.mail.messageId;
  const make = ({
    eventId,
    type,
    recipient,
    occurredAt,
    bounceType = null,
  }: {
    eventId: string;
    type: ProviderEventType;
    recipient: string | null;
    occurredAt: string;
    bounceType?: string | null;
  }): NormalizedEvent => ({
    provider: 'ses',
    eventId,
    type,
    rawType,
    correlationId: correlation,
    messageId,
    providerMessageId: sesId,
    recipient: normaliseRecipient(recipient),
    bounceType,
    occurredAt: new Date(occurredAt),
    details,
  });
  // Event ids come from SES's own content, not the SNS envelope, so SES re-publishing an
  // event (a new SNS MessageId) still lands on the same (provider, event_id).
  switch (rawType) {
    case 'Send':
      return event.mail.destination.map((recipient) =>
        make({ eventId: `${sesId}:send:${recipient.toLowerCase()}`, type: 'accepted', recipient, occurredAt: event.mail.timestamp }),
      );
    case 'Delivery': {
      const delivery = event.delivery;
      if (!delivery) return [];
      return delivery.recipients.map((recipient) =>
        make({ eventId: `${sesId}:delivery:${recipient.toLowerCase()}`, type: 'delivered', recipient, occurredAt: delivery.timestamp }),
      );
    }
    case 'Bounce': {
      const bounce = event.bounce;
      if (!bounce) return [];
      const hard = bounce.bounceType === 'Permanent';
      return bounce.bouncedRecipients.map((r) =>
        make({
          eventId: `${bounce.feedbackId}:${r.emailAddress.toLowerCase()}`,
          type: hard ? 'bounce' : 'soft_bounce',
          recipient: r.emailAddress,
          occurredAt: bounce.timestamp,
          bounceType: `${bounce.bounceType}${bounce.bounceSubType ? `/${bounce.bounceSubType}` : ''}`,
        }),
      );
    }
    case 'Complaint': {
      const complaint = event.complaint;
      if (!complaint) return [];
      return complaint.complainedRecipients.map((r) =>
        make({
          eventId: `${complaint.feedbackId}:${r.emailAddress.toLowerCase()}`,
          type: 'complaint',
          recipient: r.emailAddress,
          occurredAt: complaint.timestamp,
        }),
      );
    }
    case 'DeliveryDelay': {
      const delay = event.deliveryDelay;
      if (!delay) return [];
      return delay.delayedRecipients.map((r) =>
        make({
          eventId: `${sesId}:delay:${delay.timestamp}:${r.emailAddress.toLowerCase()}`,
          type: 'deferred',
          recipient: r.emailAddress,
          occurredAt: delay.timestamp,
        }),
      );
    }
    case 'Subscription': {
      const subscription = event.subscription;
      if (!subscription) return [];
      const type = subscriptionChangeOf(subscription);
      return event.mail.destination.map((recipient) =>
        make({
          eventId: `${sesId}:subscription:${subscription.timestamp}:${recipient.toLowerCase()}`,
          type,
          recipient,
          occurredAt: subscription.timestamp,
        }),
      );
    }
    case 'Reject':
    case 'Rendering Failure':
      return [
        make({
          eventId: `${sesId}:${rawType.toLowerCase().replace(/\s+/g, '_')}`,
          type: 'dropped',
          recipient: event.mail.destination[0] ?? null,
          occurredAt: event.mail.timestamp,
        }),
      ];
    default:
      return [make({ eventId: `sns:${envelope.MessageId}`, type: 'other', recipient: event.mail.destination[0] ?? null, occurredAt: envelope.Timestamp })];
  }
}
