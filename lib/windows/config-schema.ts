import { z } from 'zod';
import { templatesSectionSchema } from '@/lib/templates/schema';
import { obligations, ruleSchema } from './rules';

/**
 * The operator's notice configuration (`config/notice-ledger.json` by default, `NOTICE_CONFIG`
 * names another): which business events exist, which notices each one calls for, and the
 * jurisdiction rules on top of the shipped ones. Parsed once at start-up; a bad field stops
 * start-up with its path (`load-config.ts`).
 */

const name = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be lower-case letters, digits and _ (at most 64)');
const eventName = z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, 'must look like subscription.renewal');

/** A signed offset from the anchor: `-72h`, `-3d` (exactly 72 h), `0h`, `+48h`, `-30m`. */
const offsetPattern = /^([+-])?(\d{1,6})(m|h|d)$/;
const offsetUnitMs = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export function parseOffset(text: string): number | null {
  const match = offsetPattern.exec(text);
  if (!match) return null;
  const ms = Number(match[2]) * offsetUnitMs[match[3] as keyof typeof offsetUnitMs];
  return match[1] === '-' ? -ms : ms;
}

const offset = z.string().transform((text, ctx) => {
  const ms = parseOffset(text);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not an offset like -72h, -3d, 0h or +48h` });
    return z.NEVER;
  }
  return ms;
});

/**
 * The merchant's own window, relative to the event's anchor. Merchant policy is in exact hours
 * ("72 hours before the charge"), so `-3d` means 72 h whatever the clocks do.
 */
const merchantWindow = z
  .strictObject({ from: offset, to: offset })
  .refine((window) => window.from <= window.to, { message: 'must not end before it starts (from ≤ to)', path: ['to'] });

const quietHoursText = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d$/, 'must look like 21:00-08:00');

export const eventTypeSchema = z.strictObject({
  label: z.string().min(1).max(200),
  /** Identity fields in key order, each an `id` or an ISO `date`. */
  identity: z.record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be a lower-case field name'), z.enum(['id', 'date'])),
  /** What `anchorAt` is for this event, in words (the charge, the reconciliation). */
  anchor: z.string().min(1).max(100),
  /** The identity field support searches by. */
  subjectField: z.string().min(1),
  /** The identity field that is the customer's id, when one is: its notices carry it as customer_id, so a lookup by customer finds them (a producer's `customerId` wins). */
  customerField: z.string().min(1).optional(),
  /**
   * The evidence reference every notice of this event cites, formed from its identity, e.g.
   * `recon:{exception_id}`: resolving that evidence (`POST /api/v1/evidence/{ref}/resolve`)
   * suppresses them, whichever door scheduled them (lib/windows/evidence-ref.ts).
   */
  evidenceRef: z
    .string()
    .max(200)
    .regex(
      /^([\p{L}\p{N}_.:@/+-]|\{[a-z][a-z0-9_]{0,63}\})+$/u,
      'must be text of letters, digits and _ . : @ / + - with {identity_field} placeholders, e.g. recon:{exception_id}',
    )
    .optional(),
});

/**
 * The merchant's own cancel page for a notice type, e.g.
 * `https://merchant.example/account/cancel?subscription={subscription_id}`. https only, and the
 * scheme, host and port are fixed text: a placeholder (`{field}`, an identity field of the type or
 * `customer_id`, checked in load-config.ts) may appear in the path or query only, and its value is
 * percent-encoded when the link is followed. The target never comes from the request, so the
 * recipient page cannot be made an open redirect.
 */
export const cancelRedirect = z
  .string()
  .max(2_000)
  .refine((text) => /^https:\/\/[^/{}?#@]+\//.test(text), 'must start with https://host/ (no placeholder, credentials or query before the path)')
  .refine((text) => {
    try {
      const url = new URL(text.replace(/\{[a-z][a-z0-9_]{0,63}\}/g, 'x'));
      return url.protocol === 'https:' && url.username === '' && url.password === '' && !/[{}]/.test(url.href);
    } catch {
      return false;
    }
  }, 'must be an https URL whose placeholders look like {subscription_id}');

/** Placeholders of a redirect template, in order. */
export function cancelRedirectFields(template: string): string[] {
  return [...template.matchAll(/\{([a-z][a-z0-9_]{0,63})\}/g)].map((match) => match[1] ?? '');
}

/**
 * What "cancel the renewal" on the recipient page does for this type: record a cancellation
 * request (the default) or send the customer to `redirect`. `requiresCode`: the page asks for the
 * notice's one-time code first. A type without `cancel` offers no cancellation (a payment recovery).
 */
export const cancelSchema = z.strictObject({ requiresCode: z.boolean().default(false), redirect: cancelRedirect.optional() });

export const noticeTypeSchema = z
  .strictObject({
    label: z.string().min(1).max(200),
    event: eventName,
    /** The key tuple, in order. For the three original types this order is frozen by the key pin test. */
    identity: z.array(z.string().min(1)).min(1),
    /** The channel the notice goes by. */
    channel: z.enum(['email', 'sms']),
    /**
     * The channel used instead when the recipient has no address on `channel` (payment recovery:
     * by SMS when the recipient has a phone number, else by email). Chosen once, at scheduling.
     */
    fallbackChannel: z.enum(['email', 'sms']).optional(),
    /**
     * A required SMS that Twilio refuses for good for this number (21610 STOP, 21211 invalid, 21614 /
     * 21635 / 30006 landline) goes by email instead, under the same notice key, when the recipient
     * has an email address. Default: on for a required type; a courtesy text never falls back.
     */
    emailWhenSmsRefused: z.boolean().optional(),
    /** SMS: the most segments (GSM-7 153 / UCS-2 67 characters each) the rendered text may take; over it the notice fails `too_many_segments`. */
    maxSegments: z.number().int().min(1).max(10).default(3),
    category: z.enum(['required', 'courtesy']),
    /** Required: none unless the operator sets one (the rules govern). Courtesy: mandatory. */
    window: merchantWindow.optional(),
    obligation: z.enum(obligations).nullable().default(null),
    /** `inherit` the configuration's quiet hours, `off`, or a window of its own. */
    quietHours: z.union([z.literal('inherit'), z.literal('off'), quietHoursText]).default('inherit'),
    template: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,99}$/, 'must be a template id such as renewal_notice_t72'),
    /**
     * When a new revision of the event arrives (charge moved, amount changed): unsent notices of
     * the old revision are always cancelled; this says whether the new revision's notice goes out
     * `always`, only `if_not_sent` (the old one was not sent), or `never`.
     */
    correction: z.enum(['always', 'if_not_sent', 'never']),
    enabled: z.boolean().default(true),
    cancel: cancelSchema.optional(),
  })
  .refine((type) => type.fallbackChannel === undefined || type.fallbackChannel !== type.channel, {
    message: 'must differ from channel',
    path: ['fallbackChannel'],
  });

const ruleSwitchSchema = z.strictObject({ id: z.string().min(1), enabled: z.literal(false) });
export type RuleSwitch = z.infer<typeof ruleSwitchSchema>;

function isSwitch(input: unknown): boolean {
  return typeof input === 'object' && input !== null && Object.keys(input).every((key) => key === 'id' || key === 'enabled');
}

/**
 * An operator's rule entry: `{ id, enabled: false }` switches a rule off; anything else is a
 * whole rule (a new id adds it, a known id replaces it). Parsed by hand rather than as a zod
 * union so that a bad field is reported at its own path, not as "no union member matched".
 */
export const ruleEntrySchema = z.unknown().transform((input, ctx): RuleSwitch | z.infer<typeof ruleSchema> => {
  const result = isSwitch(input) ? ruleSwitchSchema.safeParse(input) : ruleSchema.safeParse(input);
  if (result.success) return result.data;
  for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  return z.NEVER;
});

export const noticeConfigSchema = z.strictObject({
  version: z.literal(1),
  quietHours: quietHoursText.nullable().default(null),
  eventTypes: z.record(eventName, eventTypeSchema),
  noticeTypes: z.record(name, noticeTypeSchema),
  rules: z.array(ruleEntrySchema).default([]),
  /** Per template id: its declared variables and sample payload; the files are under `directory` (lib/templates). */
  templates: templatesSectionSchema.optional(),
});

export type NoticeConfigInput = z.input<typeof noticeConfigSchema>;
export type ParsedNoticeConfig = z.infer<typeof noticeConfigSchema>;
export type EventTypeConfig = z.infer<typeof eventTypeSchema>;
export type NoticeTypeConfig = z.infer<typeof noticeTypeSchema>;
export type MerchantWindow = { from: number; to: number };
