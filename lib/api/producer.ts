import { z } from 'zod';
import { cancellationSources, jobStates } from '@/db/schema/states';
import { producerContract } from '@/lib/http/contract';
import {
  compactPayload,
  contractSchema,
  instant,
  isTimeZone,
  localeSchema,
  recipientEmail,
  recipientPhone,
  refId,
  regionSchema,
  revisionSchema,
  text,
  utcInstant,
} from './fields';

/**
 * The producer API (`/api/v1`): each route's contract — path parameters, body, answer. How a
 * lib/ result reads in it is lib/planning/answers.ts. README "For producers" documents every status.
 */

/** A reminder (`POST /api/v1/reminders`): the notice fact, its recipient, its times and template data. */
export const scheduleRequest = z
  .strictObject({
    type: z.string().min(1).max(64),
    identity: z.record(z.string(), z.string()),
    revision: revisionSchema.default(0),
    recipient: z.strictObject({
      /** Optional for a notice that goes by SMS (a phone given); a type with no channel the recipient has an address on is a 422 `no_channel`. */
      email: recipientEmail,
      timeZone: z.string().max(64).refine(isTimeZone, 'must be an IANA time zone such as Europe/Berlin').default('UTC'),
      /** BCP 47: the template locale and the date and number formats; without it, the fallback locale. */
      locale: localeSchema.optional(),
      /** Any written form; normalised to E.164 at scheduling (lib/sms/phone.ts), 422 `invalid_phone` when it is no number. */
      phone: recipientPhone,
    }),
    dueAt: utcInstant,
    /** Required unless `anchorAt` is given; then it defaults to the window's latest instant. */
    deadlineAt: utcInstant.optional(),
    /** The instant the notice is about (the charge): with it the window is computed and dueAt checked against it. */
    anchorAt: utcInstant.optional(),
    /** The recipient's region (ISO 3166-2 `US-CA` or a country `FR`): which jurisdiction rules apply. */
    region: regionSchema.optional(),
    /** The contract facts the rules read (term, trial, price change, payment network), with anchorAt. */
    contract: contractSchema.optional(),
    payload: compactPayload.default({}),
    evidenceRef: refId.optional(),
    customerId: refId.optional(),
    source: z.string().regex(/^[a-z0-9][a-z0-9_.:-]{0,99}$/i, 'must be a short name such as nightly-reconciliation'),
    batchId: refId.optional(),
  })
  // zod 4 runs object refinements even when a field failed, so check the types first.
  .refine((request) => !(request.deadlineAt instanceof Date && request.dueAt instanceof Date) || request.deadlineAt.getTime() >= request.dueAt.getTime(), {
    message: 'must not be before dueAt',
    path: ['deadlineAt'],
  })
  .refine((request) => request.deadlineAt !== undefined || request.anchorAt !== undefined, {
    message: "is required unless anchorAt is given (then it defaults to the window's latest instant)",
    path: ['deadlineAt'],
  })
  .refine((request) => request.region === undefined || request.anchorAt !== undefined, {
    message: 'needs anchorAt: the rules of a region are windows around an anchor',
    path: ['region'],
  })
  .refine((request) => request.contract === undefined || request.anchorAt !== undefined, {
    message: 'needs anchorAt: the rules read the contract around an anchor',
    path: ['contract'],
  });

export type ScheduleRequest = z.infer<typeof scheduleRequest>;

/** A business event (`POST /api/v1/events`): the notices it calls for are planned from it (lib/planning/receive-event.ts). */
export const eventRequest = z.strictObject({
  type: z.string().min(1).max(100),
  /** The event type's identity fields (configuration `eventTypes.<type>.identity`), checked after the type is known. */
  identity: z.record(z.string().max(64), z.unknown()),
  revision: revisionSchema.default(0),
  /** The instant the event is about: the charge, the reconciliation. */
  anchorAt: utcInstant,
  recipient: z.strictObject({
    /** Optional when the notices go by SMS and a phone is given; a notice with no address on its type's channels is unplanned `no_address_for_channel`. */
    email: recipientEmail,
    /** Any written form; normalised to E.164 before anything is stored (lib/sms/phone.ts), 422 `invalid_phone` when it is no number. */
    phone: recipientPhone,
    /** ISO 3166-2 (`US-CA`) or a country code (`FR`): which jurisdiction rules apply. */
    region: regionSchema,
    timeZone: z.string().max(64).refine(isTimeZone, 'must be an IANA time zone such as America/Los_Angeles'),
    /** BCP 47, canonicalised: the template locale and the date and number formats of every notice planned from it. */
    locale: z
      .string()
      .max(35)
      .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a BCP 47 language tag such as en-US')
      .pipe(localeSchema),
  }),
  contract: contractSchema.default({}),
  /** The customer the event is about; absent, the event type's customerField (an identity field), if it declares one. */
  customerId: refId.optional(),
  payload: compactPayload.default({}),
  /**
   * The evidence every notice planned from the event cites (the reconciliation exception):
   * resolving it suppresses them. Absent: the event type's `evidenceRef` template, when it has one.
   */
  evidenceRef: refId.optional(),
  source: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_.:-]{0,99}$/i, 'must be a short name such as billing')
    .default('events-api'),
});

export type EventRequest = z.infer<typeof eventRequest>;

/**
 * The `{id}` of `/api/v1/reminders/{id}/cancel`. Checked here: a string the query layer's
 * shape check lets through but PostgreSQL cannot cast to uuid (36 dashes, say) was a 500.
 */
export const cancelParams = z.object({ id: z.uuid('must be a reminder job id as returned by POST /api/v1/reminders') });

export const cancelRequest = z.strictObject({ reason: text().trim().min(1).max(500).optional() });

export const evidenceRef = refId;

export const openEvidenceRequest = z.strictObject({
  kind: z.string().regex(/^[a-z0-9][a-z0-9_.:-]{0,63}$/i, 'must be a short name such as reconciliation_exception'),
  summary: text().trim().min(1).max(500).optional(),
  details: compactPayload.default({}),
});
export type OpenEvidenceRequest = z.infer<typeof openEvidenceRequest>;

export const resolveEvidenceRequest = z.strictObject({
  kind: openEvidenceRequest.shape.kind.optional(),
  reason: text().trim().min(1).max(500).optional(),
});
export type ResolveEvidenceRequest = z.infer<typeof resolveEvidenceRequest>;

export const reminderJob = z.object({
  id: z.uuid(),
  noticeKey: z.string().regex(/^[0-9a-f]{64}$/),
  type: z.string(),
  revision: z.number().int(),
  state: z.enum(jobStates),
  dueAt: instant,
  deadlineAt: instant,
  source: z.string(),
});

export const evidenceView = z.object({ ref: z.string(), kind: z.string(), state: z.string(), openedAt: instant, resolvedAt: instant.nullable() });

/** A notice's allowed window: it may go out from `earliest` to `latest`, both included. */
export const windowView = z.object({ earliest: instant, latest: instant });

export const scheduleReminder = producerContract({
  method: 'POST',
  path: '/api/v1/reminders',
  scope: 'reminders:write',
  params: z.object({}),
  body: scheduleRequest,
  output: reminderJob.extend({
    created: z.boolean(),
    /** Present when the request had `anchorAt`: the computed window and the rules that set it. */
    window: windowView.extend({ ruleIds: z.array(z.string()), ruleSetVersion: z.string().nullable() }).optional(),
  }),
});

export const plannedNoticeView = z.object({
  noticeType: z.string(),
  category: z.enum(['required', 'courtesy']),
  noticeKey: z.string().regex(/^[0-9a-f]{64}$/),
  jobId: z.uuid(),
  dueAt: instant,
  window: windowView,
  ruleIds: z.array(z.string()),
});

export const unplannedNoticeView = z.object({
  noticeType: z.string(),
  category: z.enum(['required', 'courtesy']),
  reason: z.string(),
  ruleIds: z.array(z.string()),
});

/** A business event in, the notices it calls for out (lib/planning/receive-event.ts). */
export const postEventRoute = producerContract({
  method: 'POST',
  path: '/api/v1/events',
  scope: 'events:write',
  params: z.object({}),
  body: eventRequest,
  output: z.object({
    eventId: z.uuid(),
    type: z.string(),
    revision: z.number().int(),
    ruleSetVersion: z.string(),
    created: z.boolean(),
    planned: z.array(plannedNoticeView),
    unplanned: z.array(unplannedNoticeView),
  }),
});

export const cancelReminderRoute = producerContract({
  method: 'POST',
  path: '/api/v1/reminders/{id}/cancel',
  scope: 'reminders:write',
  params: cancelParams,
  body: cancelRequest,
  bodyOptional: true,
  output: reminderJob,
});

export const openEvidenceRoute = producerContract({
  method: 'PUT',
  path: '/api/v1/evidence/{ref}',
  scope: 'evidence:write',
  params: z.strictObject({ ref: evidenceRef }),
  body: openEvidenceRequest,
  output: evidenceView.extend({ created: z.boolean() }),
});

export const resolveEvidenceRoute = producerContract({
  method: 'POST',
  path: '/api/v1/evidence/{ref}/resolve',
  scope: 'evidence:write',
  params: z.strictObject({ ref: evidenceRef }),
  body: resolveEvidenceRequest,
  bodyOptional: true,
  output: evidenceView.extend({ alreadyResolved: z.boolean(), suppressedJobIds: z.array(z.uuid()) }),
});

/** A page of the customers' cancellation requests (lib/recipient/actions.ts), oldest first. */
export const cancellationRequestView = z.object({
  id: z.string(),
  noticeKey: z.string().regex(/^[0-9a-f]{64}$/),
  jobId: z.uuid(),
  type: z.string(),
  identity: z.record(z.string(), z.string()),
  subjectId: z.string(),
  customerId: z.string().nullable(),
  source: z.enum(cancellationSources),
  codeVerified: z.boolean(),
  requestedAt: instant,
});

/** `c1.<id>`: a page's `nextCursor`. */
export const cursorPattern = /^c1\.(\d{1,18})$/;

export const listCancellationRequestsRoute = producerContract({
  method: 'GET',
  path: '/api/v1/cancellation-requests',
  scope: 'notices:read',
  params: z.object({}),
  body: z.strictObject({
    /** Only requests made at or after this instant. */
    since: instant.optional(),
    /** `nextCursor` of the previous page. */
    cursor: z.string().regex(cursorPattern, 'must be the nextCursor of a previous page').optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  }),
  bodyOptional: true,
  output: z.object({ requests: z.array(cancellationRequestView), nextCursor: z.string().nullable() }),
});

/**
 * Batch scheduling (`POST /api/v1/reminders/batch`, `/api/v1/events/batch`): up to
 * BATCH_MAX_ITEMS single requests in `items`, each answered in `results` (same order, its
 * `index`) with the status and body its single route would have answered. More items is a 413
 * `batch_too_large` that writes nothing.
 */
export const BATCH_MAX_ITEMS = 1000;

/** A batch's body: 1 000 items of a few hundred bytes each, with room (a single item keeps its own 64 KiB limit). */
export const BATCH_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** What a producer route answers when it refuses: `error` is the code (`notice_conflict`, `invalid_request`), `details` its detail. */
export const producerErrorBody = z.object({ error: z.string(), details: z.unknown() });

export const batchRequest = z.strictObject({
  /** Each item is checked as its single route checks its body; one that fails is answered in its result. */
  items: z.array(z.unknown()),
});

function batchOutput<O extends z.ZodType>(itemOutput: O) {
  return z.object({
    results: z.array(
      z.object({
        index: z.number().int().min(0),
        status: z.number().int(),
        body: z.union([itemOutput, producerErrorBody]),
      }),
    ),
  });
}

export const scheduleRemindersBatch = producerContract({
  method: 'POST',
  path: '/api/v1/reminders/batch',
  scope: 'reminders:write',
  params: z.object({}),
  body: batchRequest,
  bodyLimitBytes: BATCH_BODY_LIMIT_BYTES,
  output: batchOutput(scheduleReminder.output),
});

export const postEventsBatch = producerContract({
  method: 'POST',
  path: '/api/v1/events/batch',
  scope: 'events:write',
  params: z.object({}),
  body: batchRequest,
  bodyLimitBytes: BATCH_BODY_LIMIT_BYTES,
  output: batchOutput(postEventRoute.output),
});

export const producerRoutes = [
  scheduleReminder,
  scheduleRemindersBatch,
  postEventsBatch,
  cancelReminderRoute,
  openEvidenceRoute,
  resolveEvidenceRoute,
  postEventRoute,
  listCancellationRequestsRoute,
] as const;
