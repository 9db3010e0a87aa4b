import { handOverEventTypes, type ProviderEventType } from '@/db/schema/states';
import type { WebhookProvider } from '@/lib/api/fields';
import type { SkipReason } from '@/lib/api/webhooks';
import type { Refusal, RefusalKind } from '@/lib/http/refusal';

/**
 * The name of the metadata field every send sets to the notice's correlation (first 32 hex of
 * the notice key): SES message tag, Postmark `Metadata`, SendGrid `custom_args`. SES replaces
 * any Message-ID we set, so for SES this tag and the provider message id are the only links.
 */
export const CORRELATION_TAG = 'notice_correlation';
export const CORRELATION_HEADER = 'X-Notice-Correlation';

/** One provider event, whatever provider sent it. */
export type NormalizedEvent = {
  provider: WebhookProvider;
  /** Unique per provider; the idempotency key together with `provider`. */
  eventId: string;
  type: ProviderEventType;
  rawType: string;
  correlationId: string | null;
  /** Our Message-ID when the provider echoes it (SMTP relays); SES does not. */
  messageId: string | null;
  providerMessageId: string | null;
  /** Lower-cased. */
  recipient: string | null;
  bounceType: string | null;
  occurredAt: Date;
  /** The event without message content or foreign headers. */
  details: Record<string, unknown>;
};

/**
 * One event of an authentic batch that cannot be stored, named by its position and (when it
 * has a usable one) its provider event id, never by its content: `detail` names the field and
 * the rule it broke. Its siblings are stored; refusing the batch would only make the provider
 * retry it unchanged.
 */
export type SkippedEvent = { index: number; eventId: string | null; reason: SkipReason; detail: string };

export type ParsedWebhook = { ok: true; events: NormalizedEvent[]; skipped: SkippedEvent[]; note?: string } | { ok: false; refusal: Refusal };

/** The provider's request is refused (lib/http/refusal.ts decides its status) and nothing is stored. */
export function reject(kind: RefusalKind, message: string, headers?: Record<string, string>): ParsedWebhook {
  return { ok: false, refusal: { kind, message, ...(headers ? { headers } : {}) } };
}

const correlationPattern = /^[0-9a-f]{32}$/;

/** A correlation we could have minted, else null (anything else cannot link to a ledger row). */
export function normaliseCorrelation(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim().toLowerCase();
  return correlationPattern.test(trimmed) ? trimmed : null;
}

export function normaliseRecipient(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim().toLowerCase();
  return trimmed.length > 0 && trimmed.length <= 320 ? trimmed : null;
}

/**
 * Events that prove the provider took the message from us: safe grounds to confirm a claim as
 * sent. A bounce, a deferral or a complaint all come after the provider accepted the message
 * (a relay that refuses it outright answers the worker's SMTP session instead); `dropped`
 * (SendGrid: never sent) and unknown types prove nothing.
 */
export function provesHandOver(type: ProviderEventType): boolean {
  return (handOverEventTypes as readonly ProviderEventType[]).includes(type);
}

/** What an event means for the recipient's address, if anything. */
export function suppressionFor(event: Pick<NormalizedEvent, 'type' | 'recipient'>): 'hard_bounce' | 'complaint' | null {
  if (!event.recipient) return null;
  if (event.type === 'bounce') return 'hard_bounce';
  if (event.type === 'complaint') return 'complaint';
  return null;
}

// A NUL, or a UTF-16 half without its partner, cannot be stored in PostgreSQL text or jsonb.
const unstorable = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function storableValue(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(unstorable, '\uFFFD');
  if (Array.isArray(value)) return value.map(storableValue);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [storableValue(key), storableValue(inner)]));
  }
  return value;
}

/**
 * An authentic event may still carry characters PostgreSQL refuses; they become U+FFFD so the
 * event is stored (and its siblings in the batch too) instead of failing the POST as a 5xx that
 * the provider would retry for days. Deterministic, so a retried event keeps its id.
 */
export function storableEvent(event: NormalizedEvent): NormalizedEvent {
  return { ...event, ...(storableValue({ ...event, occurredAt: null }) as Omit<NormalizedEvent, 'occurredAt'>), occurredAt: event.occurredAt };
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
