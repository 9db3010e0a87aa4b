import { z } from 'zod';

/**
 * The field vocabulary the contracts share: the producer API's, the console's, the queue
 * payload's. One definition each; a contract builds its requests and answers from these.
 */

/** PostgreSQL text cannot hold NUL: refused here as a 400, it would otherwise fail the query as a 500. */
export const text = () => z.string().regex(/^[^\0]*$/, 'must not contain NUL characters');

/** Why a person did something: every console mutation takes one, and it goes to the audit log. */
export const reason = () => text().trim().min(3, 'say why, in a few words').max(500);

/**
 * A keyset cursor as PostgreSQL prints a timestamptz ("2026-11-29 02:07:30.123456+00").
 * Checked field by field: Feb 30 or hour 25 would pass a shape regex and fail the cast in SQL.
 */
export const cursorTimestamp = z
  .string()
  .max(40)
  .regex(
    /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[ T]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-](0\d|1[0-5])(:?[0-5]\d)?)?$/,
    'must be a timestamp',
  )
  .refine((value) => {
    const [year, month, day] = value.slice(0, 10).split('-').map(Number);
    return new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, day ?? 1)).getUTCDate() === day;
  }, 'must be a timestamp');

/** An instant as an answer writes it (ISO 8601 with an offset). */
export const instant = z.iso.datetime({ offset: true });

/** An absolute UTC instant written with `Z`; offsets are refused so nobody's local time leaks in. */
export const utcInstant = z.iso
  .datetime({ offset: false, local: false, error: 'must be an ISO 8601 UTC instant ending in Z, e.g. 2026-03-01T09:00:00Z' })
  .transform((text) => new Date(text));

/**
 * A producer's reference (evidence, customer, batch). It is also a URL path segment
 * (`/api/v1/evidence/{ref}`), so it may not be dots only: every HTTP client removes `.` and `..`
 * segments (RFC 3986 §5.2.4) and such a ref could be stored but never addressed.
 */
export const refId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\p{L}\p{N}_.:@/+-]*[\p{L}\p{N}_:@/+-][\p{L}\p{N}_.:@/+-]*$/u, 'may contain letters, digits and _ . : @ / + - only, and not dots only');

/** Whether `name` is an IANA time zone this runtime knows (`Europe/Berlin`). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Whether `tag` is a well-formed BCP 47 language tag; returns its canonical form or null. */
export function canonicalLocale(tag: string): string | null {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    return canonical ?? null;
  } catch {
    return null;
  }
}

/** A BCP 47 tag (`en`, `de-AT`, `fr-CA`), canonicalised (`de-at` → `de-AT`). */
export const localeSchema = z
  .string()
  .max(35)
  .transform((tag, ctx) => {
    const canonical = canonicalLocale(tag);
    if (canonical === null) {
      ctx.addIssue({ code: 'custom', message: 'must be a BCP 47 language tag such as en-US or de' });
      return z.NEVER;
    }
    return canonical;
  });

/** A notice fact's revision: a corrected notice is a new notice with a higher one. */
export const revisionSchema = z.number().int().min(0).max(1_000_000);

/** ISO 3166-1 alpha-2 (`FR`), ISO 3166-2 (`US-CA`), or `*` for a card-network rule that applies everywhere. */
export const jurisdictionSchema = z.string().regex(/^(\*|[A-Z]{2}(-[A-Z0-9]{1,3})?)$/, 'must be a country (FR), a subdivision (US-CA) or *');

/** The recipient's region (ISO 3166-2 `US-CA` or a country `FR`): which jurisdiction rules apply. */
export const regionSchema = z
  .string()
  .regex(/^[A-Z]{2}(-[A-Z0-9]{1,3})?$/, 'must be a country (FR) or a subdivision (US-CA) in ISO 3166 upper case')
  .pipe(jurisdictionSchema);

/** The contract facts a producer sends with an event; every field is optional. */
export const contractSchema = z.strictObject({
  /** Length of the (initial) term in months: 1 for monthly, 12 for annual. */
  termMonths: z.number().int().min(0).max(1200).optional(),
  /**
   * How often the recurring charge is made, in months (1 monthly, 12 yearly), when it differs from
   * the term (an annual term billed monthly). Rules read `termMonths` when it is absent: a plan
   * billed once per term (see `contractNumber`).
   */
  billingIntervalMonths: z.number().int().min(1).max(1200).optional(),
  /** Free trial length in days, when this charge is the first after a trial. */
  trialDays: z.number().int().min(0).max(3650).optional(),
  /** Promotional (discounted) price period in days, when this charge ends one. */
  promoDays: z.number().int().min(0).max(3650).optional(),
  /** Present when the price changes; effective at the charge unless `effectiveAt` says otherwise. */
  priceChange: z.strictObject({ effectiveAt: z.iso.datetime({ offset: false }).optional() }).optional(),
  paymentNetwork: z.enum(['visa', 'mastercard', 'amex', 'rupay', 'upi', 'other']).optional(),
  /** The last instant the consumer may cancel before renewing; the charge when absent. */
  cancellationDeadlineAt: z.iso.datetime({ offset: false }).optional(),
  /** When the trial or promotional price ends; the charge when absent. */
  trialEndsAt: z.iso.datetime({ offset: false }).optional(),
});

/** The recipient's address, lower-cased; optional for a notice that goes by SMS. */
export const recipientEmail = z
  .email()
  .max(254)
  .transform((email) => email.toLowerCase())
  .optional();

/** Any written form; normalised to E.164 before anything is stored (lib/sms/phone.ts). */
export const recipientPhone = text().max(40).optional();

/** Fields that would put a message body or card data into the job row. */
const forbiddenPayloadKey = /^(body|html|text|subject|card_?number|pan|cvc|cvv|one_?time_?code|otp|password)$/i;
const PAYLOAD_MAX_BYTES = 4_096;

function payloadKeys(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) payloadKeys(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      into.push(key);
      payloadKeys(inner, into);
    }
  }
  return into;
}

// PostgreSQL refuses NUL in text and jsonb, and an unpaired UTF-16 surrogate in jsonb: refused
// here as a 400 naming the field rather than failing the insert as a 500.
const unstorable = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** NUL or an unpaired surrogate: PostgreSQL text and jsonb cannot hold them. */
export function hasUnsafeText(value: string): boolean {
  return unstorable.test(value);
}

/** True when any key or string in a JSON value could not be stored in PostgreSQL jsonb. */
export function hasUnstorableText(value: unknown): boolean {
  return payloadStrings(value).some(hasUnsafeText);
}

function payloadStrings(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) payloadStrings(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      into.push(key);
      payloadStrings(inner, into);
    }
  }
  return into;
}

/** Template data on a job: small, and never a message body, a code or card data. */
export const compactPayload = z.record(z.string(), z.unknown()).superRefine((payload, ctx) => {
  const bytes = Buffer.byteLength(JSON.stringify(payload), 'utf8');
  if (bytes > PAYLOAD_MAX_BYTES)
    ctx.addIssue({ code: 'custom', message: `is ${bytes} bytes; template data must stay under ${PAYLOAD_MAX_BYTES} (store the rest and send a reference)` });
  const bad = payloadKeys(payload).filter((key) => forbiddenPayloadKey.test(key));
  if (bad.length > 0) ctx.addIssue({ code: 'custom', message: `may not carry message bodies, codes or card data (field ${bad[0]})` });
  if (hasUnstorableText(payload)) ctx.addIssue({ code: 'custom', message: 'may not contain NUL or unpaired surrogate characters' });
});

/**
 * The configured notice type names (NOTICE_CONFIG), which only the server can read. The server's
 * console route builder and pages hand them over (lib/http/console-route.ts); a contract parsed in
 * the browser checks a type's shape only, and the server answers for the rest.
 */
let configuredNoticeTypes: () => readonly string[] = () => [];

export function checkNoticeTypesAgainst(names: () => readonly string[]): void {
  configuredNoticeTypes = names;
}

/** A notice type in a filter: one of the configured names, refused with zod's own enum wording. */
export const noticeTypeName = text()
  .max(64)
  .superRefine((value, ctx) => {
    const names = configuredNoticeTypes();
    if (names.length > 0 && !names.includes(value)) ctx.addIssue({ code: 'invalid_value', values: [...names], input: value });
  });

/** The webhook routes we receive. `twilio`: status callbacks; `twilio_inbound`: incoming messages (keywords). Both store their events as provider `twilio`. */
export const webhookProviders = ['ses', 'postmark', 'sendgrid', 'generic', 'twilio', 'twilio_inbound'] as const;
export type WebhookProvider = (typeof webhookProviders)[number];
