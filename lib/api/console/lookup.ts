import { z } from 'zod';
import { jobStates, ledgerStates } from '@/db/schema/states';
import { consoleContract } from '@/lib/http/contract';
import { instant, text } from './fields';

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
  kind: z.enum(['scheduled', 'attempt', 'claim', 'provider', 'suppression', 'operator', 'evidence', 'ledger']),
  title: z.string(),
  facts: z.array(z.object({ label: z.string(), value: z.string() })),
  tone: timelineTone,
});
export type TimelineEntry = z.infer<typeof timelineEntry>;

export const noticeView = z.object({
  noticeKey: z.string(),
  correlation: z.string(),
  messageId: z.string(),
  noticeType: z.string(),
  label: z.string(),
  subjectId: z.string().nullable(),
  customerId: z.string().nullable(),
  recipientEmail: z.string().nullable(),
  dueAt: instant.nullable(),
  deadlineAt: instant.nullable(),
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
