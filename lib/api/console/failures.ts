import { z } from 'zod';
import { consoleContract } from '@/lib/http/contract';
import { cursorTimestamp, instant, noticeTypeName, reason, text } from '@/lib/api/fields';

/** The Failures page: notices that failed, are retrying, are deferred or missed their window; a person's retry, one or in bulk. */

export const failureKinds = ['failed', 'retrying', 'deferred', 'window_missed'] as const;
const channel = z.enum(['email', 'sms']);
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a job id');
/** An error class as the send path records it: smtp_451, connect_failed, twilio_21610, render_failed. */
const errorClass = text()
  .trim()
  .max(64)
  .regex(/^[a-z0-9_.:-]+$/i, 'must be an error class such as smtp_451 or connect_failed');

const range = {
  from: instant.optional(),
  to: instant.optional(),
};
const orderedRange = (value: { from?: string; to?: string }) => !(value.from && value.to) || new Date(value.from) < new Date(value.to);

/** What selects failures: the page's filter, the bulk retry's, and the list query before its cursor. */
const filterFields = {
  kind: z.enum(failureKinds).optional(),
  noticeType: noticeTypeName.optional(),
  channel: channel.optional(),
  errorClass: errorClass.optional(),
  ...range,
};

export const failuresFilter = z.strictObject(filterFields).refine(orderedRange, 'the time range must start before it ends');

export const failuresQuery = z
  .strictObject({
    ...filterFields,
    afterAt: cursorTimestamp.optional(),
    afterId: uuid.optional(),
  })
  .refine(orderedRange, 'the time range must start before it ends');
export type FailuresQuery = z.infer<typeof failuresQuery>;

export const failureRow = z.object({
  id: z.string(),
  noticeKey: z.string(),
  noticeType: z.string(),
  label: z.string(),
  category: z.string(),
  channel: z.string(),
  subjectId: z.string(),
  kind: z.enum(failureKinds),
  attempts: z.number().int().nonnegative(),
  lastErrorClass: z.string().nullable(),
  /** The reason, in words (lib/console/words.ts). */
  reason: z.string(),
  windowLatest: instant,
  nextAttemptAt: instant.nullable(),
  updatedAt: instant,
  /** A failed notice whose window is still open: a person may retry it. */
  retryable: z.boolean(),
});
export type FailureView = z.infer<typeof failureRow>;

export const failuresPage = z.object({
  generatedAt: instant,
  rows: z.array(failureRow),
  next: z.object({ afterAt: z.string(), afterId: z.string() }).nullable(),
  /** BULK_RETRY_APPROVAL_ABOVE: a bulk retry of more notices waits for a second person. */
  approvalAbove: z.number().int().nonnegative(),
});
export type FailuresPage = z.infer<typeof failuresPage>;

export const retryRequest = z.strictObject({ id: uuid, reason: reason() });
export const retryOutcome = z.object({ id: z.string(), state: z.literal('pending'), nextAttemptAt: instant });
export type RetryOutcome = z.infer<typeof retryOutcome>;

/** A bulk retry: failed notices by error class and time range (both required: an outage has both), at once below the threshold, else by approval. */
export const bulkRetryFilter = z
  .strictObject({
    errorClass,
    from: instant,
    to: instant,
    noticeType: noticeTypeName.optional(),
    channel: channel.optional(),
  })
  .refine(orderedRange, 'the time range must start before it ends');

export const bulkRetryRequest = z.strictObject({ filter: bulkRetryFilter, reason: reason(), preview: z.boolean().optional() });

export const bulkRetryOutcome = z.discriminatedUnion('state', [
  z.object({ state: z.literal('preview'), matched: z.number().int().nonnegative(), approvalAbove: z.number().int().nonnegative(), needsApproval: z.boolean() }),
  z.object({ state: z.literal('retried'), matched: z.number().int().nonnegative(), retried: z.number().int().nonnegative() }),
  z.object({ state: z.literal('awaiting_approval'), matched: z.number().int().nonnegative(), replayId: z.string(), batchId: z.string() }),
]);
export type BulkRetryOutcome = z.infer<typeof bulkRetryOutcome>;

export const listFailuresContract = consoleContract({
  method: 'GET',
  path: '/api/console/failures',
  permission: 'failures.read',
  input: failuresQuery,
  output: failuresPage,
});

export const retryFailureContract = consoleContract({
  method: 'POST',
  path: '/api/console/failures/retry',
  permission: 'failures.retry',
  input: retryRequest,
  output: retryOutcome,
});

export const bulkRetryContract = consoleContract({
  method: 'POST',
  path: '/api/console/failures/bulk-retry',
  permission: 'failures.retry',
  input: bulkRetryRequest,
  output: bulkRetryOutcome,
});
