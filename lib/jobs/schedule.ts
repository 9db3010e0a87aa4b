import { z } from 'zod';
import type { Db } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { cancelPendingJob, findJobByNoticeKey, insertJobUnlessExists, lockJobById, markWakeupPublished } from '@/db/queries/scheduling';
import type { JobRow } from '@/db/schema/jobs';
import { InvalidNoticeError, parseNoticeFact, revisionSchema, subjectOf } from '@/lib/ledger/notice-types';
import { noticeKey } from '@/lib/ledger/notice-key';
import type { QueueAdapter } from '@/lib/queue/types';

/**
 * Scheduling is idempotent on the notice key: a producer that retries (timeout, redeploy,
 * nightly run twice) gets the job it already has. The same key with a different body is a
 * conflict, not an update — a corrected notice is a new notice with a bumped revision.
 */

/** An absolute UTC instant written with `Z`; offsets are refused so nobody's local time leaks in. */
export const utcInstant = z.iso
  .datetime({ offset: false, local: false, error: 'must be an ISO 8601 UTC instant ending in Z, e.g. 2026-03-01T09:00:00Z' })
  .transform((text) => new Date(text));

export const refId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\p{L}\p{N}_.:@/+-]+$/u, 'may contain letters, digits and _ . : @ / + - only');

export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

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
export const storableText = () => z.string().regex(/^[^\0]*$/, 'must not contain NUL characters');

/** True when any key or string in a JSON value could not be stored in PostgreSQL jsonb. */
export function hasUnstorableText(value: unknown): boolean {
  return payloadStrings(value).some((text) => unstorable.test(text));
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

export const compactPayload = z.record(z.string(), z.unknown()).superRefine((payload, ctx) => {
  const bytes = Buffer.byteLength(JSON.stringify(payload), 'utf8');
  if (bytes > PAYLOAD_MAX_BYTES)
    ctx.addIssue({ code: 'custom', message: `is ${bytes} bytes; template data must stay under ${PAYLOAD_MAX_BYTES} (store the rest and send a reference)` });
  const bad = payloadKeys(payload).filter((key) => forbiddenPayloadKey.test(key));
  if (bad.length > 0) ctx.addIssue({ code: 'custom', message: `may not carry message bodies, codes or card data (field ${bad[0]})` });
  if (hasUnstorableText(payload)) ctx.addIssue({ code: 'custom', message: 'may not contain NUL or unpaired surrogate characters' });
});

export const scheduleRequest = z
  .strictObject({
    type: z.string().min(1).max(64),
    identity: z.record(z.string(), z.string()),
    revision: revisionSchema.default(0),
    recipient: z.strictObject({
      email: z
        .email()
        .max(254)
        .transform((email) => email.toLowerCase()),
      timeZone: z.string().max(64).refine(isTimeZone, 'must be an IANA time zone such as Europe/Berlin').default('UTC'),
    }),
    dueAt: utcInstant,
    deadlineAt: utcInstant,
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
  });

export type ScheduleRequest = z.infer<typeof scheduleRequest>;

export type WakeupPublisher = Pick<QueueAdapter, 'publishInTransaction'>;

export type ScheduleResult =
  | { kind: 'created'; job: JobRow }
  | { kind: 'existing'; job: JobRow }
  | { kind: 'conflict'; job: JobRow; message: string; fields: string[] }
  | { kind: 'invalid'; message: string; fields: string[] };

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${stableJson(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Which fields of a retried request differ from the job already scheduled under its key.
 * Provenance (source, batchId) is not compared: a replay of the same notice is the same notice.
 */
export function differingFields(job: JobRow, request: ScheduleRequest): string[] {
  const fields: string[] = [];
  if (job.recipientEmail.toLowerCase() !== request.recipient.email) fields.push('recipient.email');
  if (job.recipientTimeZone !== request.recipient.timeZone) fields.push('recipient.timeZone');
  if (job.dueAt.getTime() !== request.dueAt.getTime()) fields.push('dueAt');
  if (job.deadlineAt.getTime() !== request.deadlineAt.getTime()) fields.push('deadlineAt');
  if (stableJson(job.payload) !== stableJson(request.payload)) fields.push('payload');
  if ((job.evidenceRef ?? null) !== (request.evidenceRef ?? null)) fields.push('evidenceRef');
  if ((job.customerId ?? null) !== (request.customerId ?? null)) fields.push('customerId');
  return fields;
}

function compareWithExisting(job: JobRow, request: ScheduleRequest): ScheduleResult {
  const fields = differingFields(job, request);
  if (fields.length === 0) return { kind: 'existing', job };
  return {
    kind: 'conflict',
    job,
    fields,
    message: `notice already scheduled as job ${job.id} with different ${fields.join(', ')}; a corrected notice needs a higher revision`,
  };
}

/** Checks that only apply to a new job, against the injected clock. */
export function timingProblems(request: ScheduleRequest, { now, maxDelayMs }: { now: Date; maxDelayMs: number }): string[] {
  const problems: string[] = [];
  if (request.deadlineAt.getTime() <= now.getTime()) problems.push('deadlineAt: is in the past; the notice could only be suppressed');
  if (request.dueAt.getTime() > now.getTime() + maxDelayMs) {
    problems.push(`dueAt: is more than ${Math.round(maxDelayMs / 86_400_000)} days ahead (MAX_DELAY); the ledger only promises to remember that far`);
  }
  return problems;
}

export type ScheduleParams = {
  db: Db;
  publisher: WakeupPublisher;
  request: ScheduleRequest;
  actor: string;
  now: Date;
  secret: string;
  maxDelayMs: number;
};

export async function scheduleNotice({ db, publisher, request, actor, now, secret, maxDelayMs }: ScheduleParams): Promise<ScheduleResult> {
  let fact;
  try {
    fact = parseNoticeFact({ type: request.type, identity: request.identity, revision: request.revision });
  } catch (error) {
    if (error instanceof InvalidNoticeError) return { kind: 'invalid', message: error.message, fields: ['type', 'identity'] };
    throw error;
  }
  const key = noticeKey(secret, fact);
  const existing = await findJobByNoticeKey(db, { noticeKey: key });
  if (existing) return compareWithExisting(existing, request);
  const problems = timingProblems(request, { now, maxDelayMs });
  if (problems.length > 0) return { kind: 'invalid', message: problems.join('; '), fields: problems.map((problem) => problem.split(':')[0] ?? '') };

  return db.transaction(async (tx) => {
    const { job, created } = await insertJobUnlessExists(tx, {
      noticeKey: key,
      noticeType: fact.type,
      identity: fact.identity,
      revision: fact.revision,
      subjectId: subjectOf(fact),
      customerId: request.customerId ?? null,
      recipientEmail: request.recipient.email,
      recipientTimeZone: request.recipient.timeZone,
      dueAt: request.dueAt,
      deadlineAt: request.deadlineAt,
      evidenceRef: request.evidenceRef ?? null,
      source: request.source,
      batchId: request.batchId ?? null,
      payload: request.payload,
      // Marked below once the queue has recorded a wake-up; until then the dispatcher's.
      wakeupPublishedAt: null,
    });
    // Lost a race with a concurrent retry of the same notice: answer as a retry.
    if (!created) return compareWithExisting(job, request);
    // pg-boss records the wake-up in this transaction; RabbitMQ records nothing (null) and
    // the workers' dispatcher publishes the job once it is due.
    const published = await publisher.publishInTransaction(
      tx,
      request.batchId ? { jobId: job.id, batchId: request.batchId } : { jobId: job.id },
      request.dueAt,
    );
    if (published !== null) await markWakeupPublished(tx, { id: job.id, at: now });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: 'reminder.schedule',
          targetType: 'reminder_job',
          targetId: job.id,
          reason: `scheduled by producer ${request.source}`,
          after: {
            noticeKey: key,
            noticeType: fact.type,
            revision: fact.revision,
            dueAt: request.dueAt.toISOString(),
            deadlineAt: request.deadlineAt.toISOString(),
            source: request.source,
            batchId: request.batchId ?? null,
          },
        },
      ],
    });
    return { kind: 'created', job };
  });
}

/**
 * The `{id}` of `/api/v1/reminders/{id}/cancel`. Checked here: a string the query layer's
 * shape check lets through but PostgreSQL cannot cast to uuid (36 dashes, say) was a 500.
 */
export const cancelParams = z.object({ id: z.uuid('must be a reminder job id as returned by POST /api/v1/reminders') });

export const cancelRequest = z.strictObject({ reason: storableText().trim().min(1).max(500).optional() });

export type CancelResult = { kind: 'cancelled'; job: JobRow } | { kind: 'not_found' } | { kind: 'conflict'; job: JobRow; message: string };

/** Cancels a pending job. Anything past pending is history and stays as it is. */
export async function cancelReminder({ db, id, actor, reason, now }: { db: Db; id: string; actor: string; reason: string; now: Date }): Promise<CancelResult> {
  return db.transaction(async (tx) => {
    const job = await lockJobById(tx, { id });
    if (!job) return { kind: 'not_found' };
    if (job.state === 'claimed') {
      // Claimed: a worker owns it and its send may already have left. Say so, rather than "too late".
      return {
        kind: 'conflict',
        job,
        message: 'job is claimed: a worker is sending it and the notice may already be on its way; only a pending job can be cancelled',
      };
    }
    if (job.state !== 'pending') return { kind: 'conflict', job, message: `job is ${job.state}; only a pending job can be cancelled` };
    const cancelled = await cancelPendingJob(tx, { id, now });
    if (!cancelled) return { kind: 'conflict', job, message: 'job left pending while being cancelled' };
    await insertAuditEntries(tx, {
      entries: [
        { actor, action: 'reminder.cancel', targetType: 'reminder_job', targetId: id, reason, before: { state: job.state }, after: { state: cancelled.state } },
      ],
    });
    return { kind: 'cancelled', job: cancelled };
  });
}
