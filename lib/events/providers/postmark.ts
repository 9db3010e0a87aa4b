import { createHash, timingSafeEqual } from 'node:crypto';
import { postmarkBounceLike, postmarkDelivery, postmarkOther, postmarkSubscriptionChange } from '@/lib/api/webhooks';
import { CORRELATION_TAG, normaliseCorrelation, normaliseRecipient, parseJson, reject, type NormalizedEvent, type ParsedWebhook } from '@/lib/events/types';

/**
 * Postmark webhooks carry no signature: the documented protection is HTTP Basic credentials
 * embedded in the webhook URL (https://user:pass@host/...). Postmark sends one record per
 * request, typed by RecordType, and echoes the message's Metadata on every record.
 * There is no timestamp to bound a replay; replays are absorbed by the idempotent event id.
 */

const unsubscribeReasons = new Set(['ManualSuppression']);

const hardBounceTypes = new Set(['HardBounce', 'BadEmailAddress']);

function credentialsMatch(header: string | null, user: string, password: string): boolean {
  if (!header?.startsWith('Basic ')) return false;
  const given = Buffer.from(header.slice(6).trim(), 'base64');
  const expected = Buffer.from(`${user}:${password}`, 'utf8');
  // Compare digests so the comparison time does not depend on the credentials' length either.
  const digest = (value: Buffer) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * The correlation in a record's Metadata. Sent through the Email API its key is ours exactly; sent
 * through Postmark's SMTP server it is the rest of an `X-PM-Metadata-<key>` header's name, and
 * nodemailer capitalises every header name's words (`X-Pm-Metadata-Notice_correlation`): the key is
 * matched without regard to case, an exact match first.
 */
function correlationIn(metadata: Record<string, unknown> | undefined): unknown {
  if (!metadata) return undefined;
  if (Object.hasOwn(metadata, CORRELATION_TAG)) return metadata[CORRELATION_TAG];
  const key = Object.keys(metadata).find((name) => name.toLowerCase() === CORRELATION_TAG);
  return key === undefined ? undefined : metadata[key];
}

export function parsePostmarkWebhook({
  headers,
  body,
  user,
  password,
}: {
  headers: Headers;
  body: Buffer;
  user: string | undefined;
  password: string | undefined;
}): ParsedWebhook {
  if (!user || !password) return reject('not_configured', 'postmark webhook is not configured (POSTMARK_WEBHOOK_USER/PASSWORD)');
  if (!credentialsMatch(headers.get('authorization'), user, password))
    return reject('unauthenticated', 'bad or missing Basic credentials', { 'www-authenticate': 'Basic realm="notice-ledger webhooks"' });
  const json = parseJson(body.toString('utf8'));
  if (!json.ok) return reject('invalid_input', 'body is not JSON');
  const record = json.value;
  const deliveryRecord = postmarkDelivery.safeParse(record);
  if (deliveryRecord.success) {
    const d = deliveryRecord.data;
    return {
      ok: true,
      skipped: [],
      events: [
        base({
          record: d,
          // Postmark gives deliveries no id of their own; one delivery per message and recipient.
          eventId: `delivery:${d.MessageID}:${d.Recipient.toLowerCase()}`,
          type: 'delivered',
          recipient: d.Recipient,
          occurredAt: d.DeliveredAt,
        }),
      ],
    };
  }
  const bounceRecord = postmarkBounceLike.safeParse(record);
  if (bounceRecord.success) {
    const b = bounceRecord.data;
    const complaint = b.RecordType === 'SpamComplaint';
    const hard = hardBounceTypes.has(b.Type);
    return {
      ok: true,
      skipped: [],
      events: [
        base({
          record: b,
          eventId: `${complaint ? 'complaint' : 'bounce'}:${rawRecordId(body) ?? String(b.ID)}`,
          type: complaint ? 'complaint' : hard ? 'bounce' : 'soft_bounce',
          recipient: b.Email,
          occurredAt: b.BouncedAt,
          bounceType: complaint ? null : b.Type,
        }),
      ],
    };
  }
  const changeRecord = postmarkSubscriptionChange.safeParse(record);
  if (changeRecord.success) {
    const c = changeRecord.data;
    const byRecipient = !c.SuppressionReason || unsubscribeReasons.has(c.SuppressionReason);
    return {
      ok: true,
      skipped: [],
      events: [
        base({
          record: { ...c, MessageID: c.MessageID ?? '' },
          // No id of its own: the record's content names it, so a redelivery lands on the same event.
          eventId: `subscription_change:${createHash('sha256').update(body).digest('hex').slice(0, 32)}`,
          type: byRecipient ? (c.SuppressSending ? 'unsubscribe' : 'resubscribe') : 'other',
          recipient: c.Recipient,
          occurredAt: c.ChangedAt,
        }),
      ],
    };
  }
  const otherRecord = postmarkOther.safeParse(record);
  if (!otherRecord.success || ['Delivery', 'Bounce', 'SpamComplaint'].includes(otherRecord.data.RecordType)) {
    return reject('invalid_input', 'body is not a Postmark Delivery, Bounce or SpamComplaint record');
  }
  const o = otherRecord.data;
  const digest = createHash('sha256').update(body).digest('hex').slice(0, 32);
  const when = typeof o.ReceivedAt === 'string' ? o.ReceivedAt : typeof o.ChangedAt === 'string' ? o.ChangedAt : null;
  return {
    ok: true,
    skipped: [],
    events: [
      base({
        record: o,
        eventId: `${o.RecordType.toLowerCase()}:${digest}`,
        type: 'other',
        recipient: typeof o.Recipient === 'string' ? o.Recipient : null,
        occurredAt: when ?? new Date().toISOString(),
      }),
    ],
  };
}

/** Postmark's bounce IDs exceed 2^53; JSON.parse would round two of them to one number. */
function rawRecordId(body: Buffer): string | null {
  return /"ID"\s*:\s*"?(\d{1,30})"?/.exec(body.toString('utf8'))?.[1] ?? null;
}

function base({
  record,
  eventId,
  type,
  recipient,
  occurredAt,
  bounceType = null,
}: {
  record: { RecordType: string; MessageID: string; Metadata?: Record<string, unknown> } & Record<string, unknown>;
  eventId: string;
  type: NormalizedEvent['type'];
  recipient: string | null;
  occurredAt: string;
  bounceType?: string | null;
}): NormalizedEvent {
  const { Content: _content, Subject: _subject, Details: _details, ...kept } = record;
  const occurred = new Date(occurredAt);
  return {
    provider: 'postmark',
    eventId,
    type,
    rawType: record.RecordType,
    correlationId: normaliseCorrelation(correlationIn(record.Metadata)),
    messageId: null,
    providerMessageId: record.MessageID || null,
    recipient: normaliseRecipient(recipient),
    bounceType,
    occurredAt: Number.isNaN(occurred.getTime()) ? new Date() : occurred,
    details: kept,
  };
}
