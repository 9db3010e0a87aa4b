import { z } from 'zod';
import { consoleContract } from '@/lib/http/contract';
import { cursorTimestamp, instant, noticeTypeName, reason, text } from '@/lib/api/fields';

const noticeKeyHex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a 64-character notice key');
const quarantineAction = z.enum(['confirm_sent', 'release', 'suppress']);
export type QuarantineAction = z.infer<typeof quarantineAction>;

export const quarantineFilter = z.strictObject({
  olderThanMinutes: z.coerce.number().int().min(0).max(525_600).optional(),
  recipientDomain: text()
    .trim()
    .toLowerCase()
    .max(253)
    .regex(/^[a-z0-9.-]*$/, 'must be a domain')
    .optional(),
  noticeType: noticeTypeName.optional(),
});

export const quarantineListQuery = quarantineFilter.extend({
  afterClaimedAt: cursorTimestamp.optional(),
  afterKey: noticeKeyHex.optional(),
});

export const quarantineSelection = z.union([z.strictObject({ keys: z.array(noticeKeyHex).min(1).max(5_000) }), z.strictObject({ filter: quarantineFilter })]);

export type QuarantineSelection = z.infer<typeof quarantineSelection>;

export const quarantineCountRequest = z.strictObject({ selection: quarantineSelection });

export const quarantineResolveRequest = z.strictObject({ action: quarantineAction, selection: quarantineSelection, reason: reason() });

export const evidenceEvent = z.object({
  eventType: z.string(),
  rawType: z.string().optional(),
  occurredAt: z.string(),
  provider: z.string(),
  providerMessageId: z.string().nullable(),
  matchedBy: z.enum(['notice_key', 'correlation', 'provider_id']),
});

/** What the provider reconciler last heard about the claim (Postmark, SendGrid); null when it never asked. */
export const providerLookupView = z.object({
  provider: z.string(),
  outcome: z.enum(['not_found', 'lookup_failed', 'gave_up', 'found']),
  checks: z.number().int().nonnegative(),
  lastCheckedAt: z.string(),
  detail: z.string().nullable(),
});

export const quarantineRow = z.object({
  noticeKey: z.string(),
  noticeType: z.string(),
  claimedAt: instant,
  claimedBy: z.string().nullable(),
  ageMs: z.number(),
  recipientDomain: z.string().nullable(),
  subjectId: z.string().nullable(),
  dueAt: instant.nullable(),
  deadlineAt: instant.nullable(),
  /** Milliseconds until the deadline; negative once it has passed. */
  deadlineInMs: z.number().nullable(),
  providerMessageId: z.string().nullable(),
  evidence: z.array(evidenceEvent),
  providerLookup: providerLookupView.nullable(),
  /** What the evidence suggests, for the on-call reading it at 2 a.m. */
  suggestion: quarantineAction,
  suggestionWhy: z.string(),
});
export type QuarantineRowView = z.infer<typeof quarantineRow>;

export const quarantinePage = z.object({
  generatedAt: instant,
  quarantineAfterMs: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  rows: z.array(quarantineRow),
  next: z.object({ afterClaimedAt: z.string(), afterKey: z.string() }).nullable(),
});
export type QuarantinePage = z.infer<typeof quarantinePage>;

export const resolveOutcome = z.object({ action: quarantineAction, resolved: z.array(z.string()), skipped: z.number().int().nonnegative() });
export type ResolveOutcome = z.infer<typeof resolveOutcome>;

export const listQuarantine = consoleContract({
  method: 'GET',
  path: '/api/console/quarantine',
  permission: 'quarantine.read',
  input: quarantineListQuery,
  output: quarantinePage,
});

/** The count shown before a bulk action is confirmed; reading it needs the right to act. */
export const countQuarantine = consoleContract({
  method: 'POST',
  path: '/api/console/quarantine/count',
  permission: 'quarantine.resolve',
  input: quarantineCountRequest,
  output: z.object({ count: z.number().int().nonnegative() }),
});

export const resolveQuarantineContract = consoleContract({
  method: 'POST',
  path: '/api/console/quarantine/resolve',
  permission: 'quarantine.resolve',
  input: quarantineResolveRequest,
  output: resolveOutcome,
});
