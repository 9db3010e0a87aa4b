import { z } from 'zod';
import { noticeTypeNames } from '../ledger/notice-types';
import { hasUnsafeText } from './csv';

/** The replay and report routes' request schemas, shared by the handlers and the forms. */

/** PostgreSQL text and jsonb cannot hold NUL or lone surrogates: a 400 here, not a 500 in the query. */
const text = () => z.string().refine((value) => !hasUnsafeText(value), 'must not contain NUL characters or unpaired surrogates');
const reason = text().trim().min(3, 'give a reason (at least 3 characters)').max(2000);
const isoTime = z.iso.datetime({ offset: true });

/** An uploaded list: up to 200,000 rows through the console (about 40 MB); bigger lists go through the CLI. */
export const MAX_UPLOAD_CHARS = 40_000_000;

export const replayFilterSchema = z
  .strictObject({
    dueFrom: isoTime.optional(),
    dueTo: isoTime.optional(),
    noticeType: z.enum(noticeTypeNames as [string, ...string[]]).optional(),
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

export type DryRunRequest = z.infer<typeof dryRunRequest>;
export type ReplayCreateRequest = z.infer<typeof replayCreateRequest>;
