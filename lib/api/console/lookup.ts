import { z } from 'zod';
import { channels, jobStates, ledgerStates, noticeCategories } from '@/db/schema/states';
import { consoleContract } from '@/lib/http/contract';
import { instant, text } from '@/lib/api/fields';

export const lookupQuery = z.object({ q: text().trim().min(1, 'type something to search for').max(320) });

const jobState = z.enum(jobStates);
const ledgerState = z.enum(ledgerStates);

export const noticeMatch = z.object({
  noticeKey: z.string(),
  noticeType: z.string(),
  subjectId: z.string().nullable(),
  customerId: z.string().nullable(),
  recipientEmail: z.string().nullable(),
  dueAt: instant.nullable(),
  jobState: jobState.nullable(),
  ledgerState: ledgerState.nullable(),
});

export const keyDerivation = z.object({
  noticeType: z.string(),
  fields: z.array(z.object({ name: z.string(), value: z.string() })),
  revision: z.number().int(),
  canonical: z.string().nullable(),
  /** True when the key recomputed with this server's secret equals the stored key. */
  verified: z.boolean().nullable(),
});
export type KeyDerivation = z.infer<typeof keyDerivation>;

export const timelineTone = z.enum(['neutral', 'good', 'warn', 'bad']);
export type TimelineTone = z.infer<typeof timelineTone>;

export const timelineEntry = z.object({
  at: instant,
  /**
   * `recipient`: an opt-out or opt-in by any source, or a change made for the recipient; `customer`: the customer's request from the notice's link;
   * `message`: what the customer received, a sent notice's re-render (GET /api/console/lookup/received, on demand).
   */
  kind: z.enum(['scheduled', 'attempt', 'claim', 'provider', 'suppression', 'operator', 'evidence', 'ledger', 'recipient', 'customer', 'message']),
  title: z.string(),
  facts: z.array(z.object({ label: z.string(), value: z.string() })),
  tone: timelineTone,
});
export type TimelineEntry = z.infer<typeof timelineEntry>;

/** Why the window held a notice back or closed on it, one entry per attempt that said so. */
export const windowEvent = z.object({
  at: instant,
  kind: z.enum(['deferred_early', 'deferred_quiet_hours', 'window_missed', 'quiet_hours_overridden']),
  text: z.string(),
});

/** The notice's send window [earliest, latest], in the recipient's zone and UTC, and what set it. */
export const noticeWindow = z.object({
  earliest: instant,
  latest: instant,
  timeZone: z.string(),
  earliestLocal: z.string(),
  latestLocal: z.string(),
  category: z.enum(noticeCategories),
  region: z.string().nullable(),
  /** `id@version` of every rule that bounded it; empty when the producer gave due and deadline itself. */
  ruleIds: z.array(z.string()),
  ruleSetVersion: z.string().nullable(),
  event: z.object({ id: z.string(), type: z.string(), revision: z.number().int(), anchorAt: instant, anchorLocal: z.string(), source: z.string() }).nullable(),
  /** One sentence: which rules (or the producer) set the window. */
  setBy: z.string(),
  events: z.array(windowEvent),
  /** One sentence: where the notice stands against its window (sent inside it, deferred, missed, open). */
  status: z.string(),
});
export type NoticeWindow = z.infer<typeof noticeWindow>;

export const noticeView = z.object({
  noticeKey: z.string(),
  correlation: z.string(),
  messageId: z.string(),
  noticeType: z.string(),
  label: z.string(),
  subjectId: z.string().nullable(),
  customerId: z.string().nullable(),
  recipientEmail: z.string().nullable(),
  /** How it goes out (email or sms) and, for sms, the E.164 number. */
  channel: z.enum(channels).nullable(),
  recipientPhone: z.string().nullable(),
  dueAt: instant.nullable(),
  deadlineAt: instant.nullable(),
  window: noticeWindow.nullable(),
  jobState: jobState.nullable(),
  ledgerState: ledgerState.nullable(),
  attempts: z.number().int().nonnegative(),
  source: z.string().nullable(),
  batchId: z.string().nullable(),
  sentAt: instant.nullable(),
  providerMessageId: z.string().nullable(),
  verdict: z.string(),
  duplicatesSuppressed: z.number().int().nonnegative(),
  derivation: keyDerivation,
  timeline: z.array(timelineEntry),
});
export type NoticeView = z.infer<typeof noticeView>;

export const lookupResult = z.object({ describe: z.string(), matches: z.array(noticeMatch), notices: z.array(noticeView), truncated: z.boolean() });
export type LookupResult = z.infer<typeof lookupResult>;

export const lookupNoticesContract = consoleContract({
  method: 'GET',
  path: '/api/console/lookup',
  permission: 'lookup.read',
  input: lookupQuery,
  output: lookupResult,
});
