import 'server-only';
import { randomBytes } from 'node:crypto';
import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import {
  countRetryableFailures,
  listFailures,
  lockJobForRetry,
  lockRetryableFailures,
  markRetryWoken,
  reopenFailedJobs,
  type FailureFilter,
  type FailureRow,
} from '@/db/queries/failures';
import { insertReplay } from '@/db/queries/replays';
import type { BulkRetryOutcome, FailuresPage, FailuresQuery, FailureView, RetryOutcome } from '@/lib/api/console/failures';
import { ok, refuse, type Result } from '@/lib/http/refusal';
import type { WakeupPublisher } from '@/lib/planning/enqueue-notice';
import type { Actor } from '@/lib/replay/transitions';
import { activeNoticeConfig } from '@/lib/windows/active';
import { explainFailure } from './words';

/**
 * The Failures page and a person's retry. A retry moves a `failed` job whose window is still
 * open back to `pending`, due now, with a fresh count of attempts, and wakes it: the send path
 * then runs as for any notice (policy first, so a suppression that arrived meanwhile still
 * wins). The ledger row of a failed job is `released` (the send path released its claim in
 * the transaction that failed it), and a claim takes over a released row keeping its one-time
 * code; the recipient link depends only on the key and the anchor. So the retried notice
 * carries the first mail's code and link (lib/console/failures.test.ts proves it at the SMTP sink).
 *
 * A bulk retry takes failed notices by error class and time range (after an outage). Up to
 * BULK_RETRY_APPROVAL_ABOVE it runs at once, audited with its counts; above it, it becomes a
 * replay request (`filter.retryFailed`) that waits for a second person through the replay
 * request → approve → run machinery (lib/replay/transitions.ts), and the same four-eyes rule
 * applies; the run reopens the matching jobs and the workers publish them, paced (lib/replay/runner.ts).
 */

export const FAILURES_PAGE_SIZE = 50;

/**
 * The queue that wakes a retried job, asked for only once a retry goes ahead: a refused request
 * starts no publisher (pg-boss creates its schema on first start) and so changes nothing.
 */
export type PublisherSource = () => Promise<WakeupPublisher>;

function labelOf(noticeType: string): string {
  return activeNoticeConfig().config.noticeTypes[noticeType]?.label ?? noticeType;
}

function failureView(row: FailureRow, now: Date): FailureView {
  return {
    id: row.id,
    noticeKey: row.noticeKey,
    noticeType: row.noticeType,
    label: labelOf(row.noticeType),
    category: row.category,
    channel: row.channel,
    subjectId: row.subjectId,
    kind: row.kind,
    attempts: row.attempts,
    lastErrorClass: row.lastErrorClass,
    reason: explainFailure(row),
    windowLatest: row.deadlineAt.toISOString(),
    nextAttemptAt: row.kind === 'retrying' || row.kind === 'deferred' ? row.nextAttemptAt.toISOString() : null,
    updatedAt: row.updatedAt.toISOString(),
    retryable: row.kind === 'failed' && row.deadlineAt.getTime() > now.getTime(),
  };
}

function filterOf(input: Omit<FailuresQuery, 'afterAt' | 'afterId'>): FailureFilter {
  return {
    kind: input.kind,
    noticeType: input.noticeType,
    channel: input.channel,
    errorClass: input.errorClass,
    from: input.from ? new Date(input.from) : undefined,
    to: input.to ? new Date(input.to) : undefined,
  };
}

export async function loadFailuresPage(
  db: DbOrTx,
  { now, input, approvalAbove, limit = FAILURES_PAGE_SIZE }: { now: Date; input: FailuresQuery; approvalAbove: number; limit?: number },
): Promise<FailuresPage> {
  const after = input.afterAt && input.afterId ? { at: input.afterAt, id: input.afterId } : undefined;
  const rows = await listFailures(db, { filter: filterOf(input), limit, after });
  const last = rows[limit - 1];
  return {
    generatedAt: now.toISOString(),
    rows: rows.map((row) => failureView(row, now)),
    next: rows.length === limit && last ? { afterAt: last.cursorAt, afterId: last.id } : null,
    approvalAbove,
  };
}

const stateWords: Record<string, string> = {
  pending: 'pending (it is due or being retried: nothing to do)',
  claimed: 'claimed (a worker holds it, or it is in quarantine)',
  sent: 'already sent',
  suppressed: 'suppressed',
  cancelled: 'cancelled by its producer',
};

/** One failed notice, retried by a person: guarded, audited, woken in the same transaction where the queue can. */
export async function retryFailedNotice(
  db: DbOrTx,
  { id, reason, actor, publisher, now = new Date() }: { id: string; reason: string; actor: string; publisher: PublisherSource; now?: Date },
): Promise<Result<RetryOutcome>> {
  return db.transaction(async (tx) => {
    const job = await lockJobForRetry(tx, { id });
    if (!job) return refuse('not_found', `No notice with job id ${id}.`);
    if (job.state !== 'failed') {
      return refuse('conflict', `This notice is ${stateWords[job.state] ?? job.state}; only a failed notice can be retried.`, { code: 'not_failed' });
    }
    if (job.deadlineAt.getTime() <= now.getTime()) {
      return refuse('conflict', `Its send window closed at ${job.deadlineAt.toISOString()}: it can no longer be sent (a notice is never sent late).`, {
        code: 'window_closed',
      });
    }
    if (job.ledgerState !== null && job.ledgerState !== 'released') {
      return refuse('conflict', `The ledger holds this notice as ${job.ledgerState}, so a retry could not send it; see its lookup timeline.`, {
        code: 'ledger_held',
      });
    }
    const [reopened] = await reopenFailedJobs(tx, { ids: [job.id], now });
    if (!reopened) return refuse('conflict', 'The notice changed meanwhile; reload and try again.', { code: 'changed' });
    if ((await (await publisher()).publishInTransaction(tx, { jobId: job.id })) !== null) await markRetryWoken(tx, { ids: [job.id], at: now });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: 'failure.retry',
          targetType: 'reminder_job',
          targetId: job.id,
          reason,
          before: { state: 'failed', attempts: job.attempts, lastErrorClass: job.lastErrorClass, ledgerState: job.ledgerState },
          after: { state: 'pending', attempts: 0, nextAttemptAt: now.toISOString() },
        },
      ],
    });
    return ok({ id: job.id, state: 'pending' as const, nextAttemptAt: now.toISOString() });
  });
}

export type BulkRetryInput = {
  filter: { errorClass: string; from: string; to: string; noticeType?: string; channel?: 'email' | 'sms' };
  reason: string;
  preview?: boolean;
};

function bulkFilterOf(filter: BulkRetryInput['filter']): Omit<FailureFilter, 'kind'> {
  return { errorClass: filter.errorClass, from: new Date(filter.from), to: new Date(filter.to), noticeType: filter.noticeType, channel: filter.channel };
}

/** The replay batch id of a bulk retry: `retry-YYYYMMDD-<8 hex>`. */
function retryBatchId(now: Date): string {
  return `retry-${now.toISOString().slice(0, 10).replace(/-/g, '')}-${randomBytes(4).toString('hex')}`;
}

export async function bulkRetryFailures(
  db: DbOrTx,
  {
    input,
    actor,
    publisher,
    approvalAbove,
    now = new Date(),
  }: { input: BulkRetryInput; actor: Actor; publisher: PublisherSource; approvalAbove: number; now?: Date },
): Promise<Result<BulkRetryOutcome>> {
  const filter = bulkFilterOf(input.filter);
  const matched = await countRetryableFailures(db, { filter, now });
  if (input.preview) return ok({ state: 'preview' as const, matched, approvalAbove, needsApproval: matched > approvalAbove });
  if (matched === 0) {
    return refuse('conflict', 'No failed notice with its window still open matches this error class and time range: there is nothing to retry.', {
      code: 'nothing_to_retry',
    });
  }
  const audited = { ...input.filter, approvalAbove };
  if (matched <= approvalAbove) {
    return db.transaction(async (tx) => {
      const ids = await lockRetryableFailures(tx, { filter, now, limit: approvalAbove });
      const reopened = await reopenFailedJobs(tx, { ids, now });
      const woken: string[] = [];
      const queue = await publisher();
      for (const jobId of reopened) if ((await queue.publishInTransaction(tx, { jobId })) !== null) woken.push(jobId);
      await markRetryWoken(tx, { ids: woken, at: now });
      await insertAuditEntries(tx, {
        entries: [
          {
            actor: actor.email,
            action: 'failure.bulk_retry',
            targetType: 'failure_filter',
            targetId: input.filter.errorClass,
            reason: input.reason,
            before: { filter: audited, matched },
            after: { retried: reopened.length, skipped: matched - reopened.length },
          },
          // One per notice too (at most BULK_RETRY_APPROVAL_ABOVE), so each one's lookup timeline says who retried it and why.
          ...reopened.map((jobId) => ({
            actor: actor.email,
            action: 'failure.retry',
            targetType: 'reminder_job',
            targetId: jobId,
            reason: input.reason,
            before: { state: 'failed', lastErrorClass: input.filter.errorClass },
            after: { state: 'pending', attempts: 0, nextAttemptAt: now.toISOString(), bulk: true },
          })),
        ],
      });
      return ok({ state: 'retried' as const, matched, retried: reopened.length });
    });
  }
  // Above the threshold: a replay request that a second person approves; the run reopens and publishes (lib/replay/service.ts startReplay).
  return db.transaction(async (tx) => {
    const replay = await insertReplay(tx, {
      batchId: retryBatchId(now),
      filter: {
        retryFailed: {
          errorClass: input.filter.errorClass,
          from: input.filter.from,
          to: input.filter.to,
          noticeType: input.filter.noticeType,
          channel: input.filter.channel,
        },
      },
      dryRun: { total: matched, newKeys: 0, existing: { released: matched }, blocked: {} },
      requestedBy: actor.id,
      requestReason: input.reason,
      total: matched,
      uploadRejections: null,
    });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: actor.email,
          action: 'failure.bulk_retry_request',
          targetType: 'replay',
          targetId: replay.batchId,
          reason: input.reason,
          before: { filter: audited, matched },
          after: { replayId: replay.id, state: replay.state },
        },
      ],
    });
    return ok({ state: 'awaiting_approval' as const, matched, replayId: replay.id, batchId: replay.batchId });
  });
}
