import { z } from 'zod';
import { replayStates } from '@/db/schema/states';
import { consoleContract, csvFile, noInput } from '@/lib/http/contract';
import { hasUnsafeText, instant, noticeTypeName } from '@/lib/api/fields';

/** PostgreSQL text and jsonb cannot hold NUL or lone surrogates: a 400 here, not a 500 in the query. */
const text = () => z.string().refine((value) => !hasUnsafeText(value), 'must not contain NUL characters or unpaired surrogates');
const reason = text().trim().min(3, 'give a reason (at least 3 characters)').max(2000);

/**
 * An uploaded list: the browser refuses a file over 40 M characters before sending it. The server
 * streams the body and caps it by REPLAY_UPLOAD_MAX_BYTES and REPLAY_UPLOAD_MAX_ROWS (default
 * 50 MB, 200,000 rows; lib/replay/upload-body.ts); bigger lists go through the CLI.
 */
export const MAX_UPLOAD_CHARS = 40_000_000;

export const replayFilterSchema = z
  .strictObject({
    dueFrom: instant.optional(),
    dueTo: instant.optional(),
    noticeType: noticeTypeName.optional(),
    source: text().trim().min(1).max(200).optional(),
  })
  .refine((filter) => Object.values(filter).some((value) => value !== undefined), 'choose at least one of due window, notice type or source')
  .refine((filter) => !(filter.dueFrom && filter.dueTo) || new Date(filter.dueFrom) < new Date(filter.dueTo), 'the due window must start before it ends');

const csv = text().min(1, 'the file is empty').max(MAX_UPLOAD_CHARS, 'the file is too large for the console; use `npm run ledger -- replay --csv`');

export const dryRunRequest = z.union([z.strictObject({ filter: replayFilterSchema }), z.strictObject({ csv })]);
export const replayCreateRequest = z.union([z.strictObject({ filter: replayFilterSchema, reason }), z.strictObject({ csv, reason })]);

const id = z.uuid('must be a replay id');
export const replayDecideRequest = z.strictObject({ id, decision: z.enum(['approve', 'reject']), reason });
export const replayRunRequest = z.strictObject({ id, reason: reason.optional() });
export const replayCancelRequest = z.strictObject({ id, reason });
export const replayIdQuery = z.strictObject({ id });

const count = z.number().int().nonnegative();
const replayState = z.enum(replayStates);

export const dryRunCounts = z.object({
  total: count,
  newKeys: count,
  existing: z.record(z.string(), count),
  /** Of the keys the ledger would let through, those their job stops (suppressed, cancelled, failed, sent, past_window). */
  blocked: z.record(z.string(), count).optional(),
});

export const dryRunVerdict = z.object({
  kind: z.enum(['empty', 'already_delivered', 'mostly_new', 'mixed']),
  /** Keys the run would really send: absent from the ledger or released for resend, and their job not suppressed, cancelled, failed, sent or past its window. */
  wouldSend: count,
  share: z.number().nonnegative(),
  message: z.string(),
});
export type DryRunVerdict = z.infer<typeof dryRunVerdict>;

export const rowRejection = z.object({ line: z.number().int(), reason: z.string(), raw: z.string() });
export type RowRejection = z.infer<typeof rowRejection>;

export const dryRun = z.object({ counts: dryRunCounts, verdict: dryRunVerdict, elapsedMs: z.number().nonnegative() });
export type DryRun = z.infer<typeof dryRun>;
export const uploadDryRun = dryRun.extend({ accepted: count, rejections: z.array(rowRejection) });
export type UploadDryRun = z.infer<typeof uploadDryRun>;

/** A filter's dry run has no accepted rows and no rejections; an upload's has both. */
export const dryRunAnswer = dryRun.extend({ accepted: count.nullable(), rejections: z.array(rowRejection) });
export type DryRunAnswer = z.infer<typeof dryRunAnswer>;

/** `duplicates`: of `suppressed`, the wake-ups the ledger refused because the notice was already sent or claimed. */
export const replayProgress = z.object({ total: count, published: count, suppressed: count, duplicates: count, sent: count, failed: count });
export type ReplayProgress = z.infer<typeof replayProgress>;

export const replayView = z.object({
  id: z.uuid(),
  batchId: z.string(),
  state: replayState,
  filter: z.object({
    dueFrom: z.string().optional(),
    dueTo: z.string().optional(),
    noticeType: z.string().optional(),
    source: z.string().optional(),
    uploaded: z.boolean().optional(),
    /** A bulk retry of failed notices (the Failures page), waiting for or past its approval. */
    retryFailed: z
      .object({ errorClass: z.string(), from: z.string(), to: z.string(), noticeType: z.string().optional(), channel: z.string().optional() })
      .optional(),
  }),
  dryRun: dryRunCounts.nullable(),
  verdict: dryRunVerdict.nullable(),
  requestedBy: z.uuid(),
  requesterEmail: z.string().nullable(),
  requestReason: z.string(),
  deciderEmail: z.string().nullable(),
  decisionReason: z.string().nullable(),
  requestedAt: instant,
  decidedAt: instant.nullable(),
  startedAt: instant.nullable(),
  finishedAt: instant.nullable(),
  rejectedRows: count,
  progress: replayProgress,
});
export type ReplayView = z.infer<typeof replayView>;

const replayMoved = z.object({ id: z.uuid(), state: replayState });

export const listReplaysContract = consoleContract({
  method: 'GET',
  path: '/api/console/replays',
  permission: 'replay.read',
  input: noInput,
  output: z.array(replayView),
});

export const requestReplayContract = consoleContract({
  method: 'POST',
  path: '/api/console/replays',
  permission: 'replay.request',
  input: replayCreateRequest,
  output: z.object({ id: z.uuid(), batchId: z.string(), dryRun: z.union([uploadDryRun, dryRun]) }),
  status: 201,
  streamsUpload: true,
});

/** Counts what a replay would mint; changes nothing. */
export const dryRunReplayContract = consoleContract({
  method: 'POST',
  path: '/api/console/replays/dry-run',
  permission: 'replay.request',
  input: dryRunRequest,
  output: dryRunAnswer,
  streamsUpload: true,
});

/** Approve or reject: managers only, never the requester (four-eyes, also a database check). */
export const decideReplayContract = consoleContract({
  method: 'POST',
  path: '/api/console/replays/decide',
  permission: 'replay.approve',
  input: replayDecideRequest,
  output: replayMoved,
});

/** Starts an approved replay; the workers publish it, paced per domain. */
export const runReplayContract = consoleContract({
  method: 'POST',
  path: '/api/console/replays/run',
  permission: 'replay.request',
  input: replayRunRequest,
  output: replayMoved.extend({ total: count }),
  status: 202,
});

export const cancelReplayContract = consoleContract({
  method: 'POST',
  path: '/api/console/replays/cancel',
  permission: 'replay.request',
  input: replayCancelRequest,
  output: replayMoved,
});

/** One replay with live progress (the page polls this while it runs). */
export const replayStatusContract = consoleContract({
  method: 'GET',
  path: '/api/console/replays/status',
  permission: 'replay.read',
  input: replayIdQuery,
  output: replayView,
});

/** The uploaded rows a replay refused, and why, as CSV. */
export const rejectedRowsContract = consoleContract({
  method: 'GET',
  path: '/api/console/replays/rejected',
  permission: 'replay.read',
  input: replayIdQuery,
  output: csvFile,
  format: 'csv',
});
