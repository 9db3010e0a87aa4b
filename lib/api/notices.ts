import { z } from 'zod';
import { channels, jobStates, ledgerStates, noticeCategories } from '@/db/schema/states';
import { producerContract } from '@/lib/http/contract';
import { instant } from './fields';
import { cancelRequest, reminderJob } from './producer';

/**
 * The notice status API (`/api/v1/notices`) and cancel by business identity: what a producer
 * asks and what it is answered. Every field below is one the producer sent us or one the
 * ledger decided; the one-time code, bodies, payload, worker ids and queue ids never appear.
 */

const noticeKey = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * The ledger's own words for where a notice stands (README "For producers", notice status).
 * `accepted`: handed over to a provider whose answer is provisional (SendGrid's 202), its own
 * event for the message not yet in; `dropped`: that provider then dropped it without sending.
 * Both are `sent` in the ledger: never sent again without a person's replay.
 */
export const noticeOutcomes = ['pending', 'accepted', 'sent', 'dropped', 'outcome_unknown', 'window_missed', 'suppressed', 'failed', 'cancelled'] as const;

export const noticeStatusView = z.object({
  id: z.uuid(),
  noticeKey,
  type: z.string(),
  identity: z.record(z.string(), z.string()),
  revision: z.number().int(),
  subjectId: z.string(),
  customerId: z.string().nullable(),
  recipient: z.object({ channel: z.enum(channels), email: z.string().nullable(), phone: z.string().nullable() }),
  /** The job's state and the ledger's (null until a worker claimed it). */
  state: z.enum(jobStates),
  ledgerState: z.enum(ledgerStates).nullable(),
  outcome: z.enum(noticeOutcomes),
  /** Why it was not sent (`window_missed`, `opted_out`, …) when it was suppressed. */
  suppressionReason: z.string().nullable(),
  /** How an outcome_unknown claim was settled: `resolved by provider evidence`, `resolved by an operator: confirm_sent`, … */
  resolution: z.object({ text: z.string(), at: instant.nullable() }).nullable(),
  sentAt: instant.nullable(),
  window: z.object({
    earliest: instant,
    latest: instant,
    category: z.enum(noticeCategories),
    region: z.string().nullable(),
    ruleIds: z.array(z.string()),
    ruleSetVersion: z.string().nullable(),
    /** When the send path found the window closed, and the rule that closed it (the attempt's detail). */
    missed: z.object({ at: instant, rule: z.string() }).nullable(),
  }),
  attempts: z.array(z.object({ at: instant, outcome: z.string(), errorClass: z.string().nullable() })),
  providerMessageIds: z.array(z.string()),
  deliveryEvents: z.array(z.object({ provider: z.string(), type: z.string(), bounceType: z.string().nullable(), occurredAt: instant })),
  cancellationRequests: z.array(z.object({ source: z.string(), codeVerified: z.boolean(), requestedAt: instant })),
  preferenceChanges: z.array(z.object({ category: z.string(), from: z.string().nullable(), to: z.string(), source: z.string(), at: instant })),
  /** The business event and revision that planned it; null for a reminder scheduled directly. */
  event: z.object({ id: z.uuid(), type: z.string(), revision: z.number().int(), anchorAt: instant }).nullable(),
});
export type NoticeStatusView = z.infer<typeof noticeStatusView>;

export const getNoticeRoute = producerContract({
  method: 'GET',
  path: '/api/v1/notices/{id}',
  scope: 'notices:read',
  params: z.object({ id: z.union([z.uuid(), noticeKey], 'must be a reminder job id or a 64-hex notice key') }),
  body: z.object({}),
  bodyOptional: true,
  output: noticeStatusView,
});

export const noticeCursorPattern = /^n1\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `identity.<field>=value` query names; the rest are the filters below. */
const identityParam = /^identity\.([a-z][a-z0-9_]{0,63})$/;

export const listNoticesQuery = z.record(z.string(), z.string()).transform((query, ctx) => {
  const identity: Record<string, string> = {};
  const rest: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    const field = identityParam.exec(name);
    if (field?.[1]) identity[field[1]] = value;
    else rest[name] = value;
  }
  const parsed = listNoticeFilters.safeParse(rest);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  }
  if (Object.keys(identity).length > 0 && !parsed.data.type) {
    ctx.addIssue({ code: 'custom', message: 'identity.<field> needs type=<notice type>', path: ['type'] });
    return z.NEVER;
  }
  return { ...parsed.data, identity: Object.keys(identity).length > 0 ? identity : undefined };
});

export const listNoticeFilters = z.strictObject({
  type: z.string().min(1).max(64).optional(),
  revision: z.coerce.number().int().min(0).max(1_000_000).optional(),
  /** An email address (any case) or an E.164 number. */
  recipient: z.union([z.email().max(320), z.string().regex(/^\+[1-9]\d{6,14}$/)], 'must be an email address or an E.164 number').optional(),
  state: z.enum(jobStates).optional(),
  /** Notices scheduled at or after this instant. */
  since: instant.optional(),
  cursor: z.string().regex(noticeCursorPattern, 'must be the nextCursor of a previous page').optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

export const listNoticesRoute = producerContract({
  method: 'GET',
  path: '/api/v1/notices',
  scope: 'notices:read',
  params: z.object({}),
  body: listNoticesQuery,
  bodyOptional: true,
  output: z.object({ notices: z.array(noticeStatusView), nextCursor: z.string().nullable() }),
});

export const cancelNoticeRequest = z.strictObject({
  type: z.string().min(1).max(64),
  identity: z.record(z.string(), z.unknown()),
  /** Without it: the latest revision scheduled for this identity (README "For producers"). */
  revision: z.number().int().min(0).max(1_000_000).optional(),
  reason: cancelRequest.shape.reason,
});

export const cancelNoticeRoute = producerContract({
  method: 'POST',
  path: '/api/v1/notices/cancel',
  scope: 'reminders:write',
  params: z.object({}),
  body: cancelNoticeRequest,
  output: reminderJob,
});

export const noticeStatusRoutes = [getNoticeRoute, listNoticesRoute, cancelNoticeRoute] as const;
