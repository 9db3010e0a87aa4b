import type { z } from 'zod';
import type { EvidenceRow } from '@/db/queries/evidence';
import type { JobRow } from '@/db/schema/jobs';
import type { CancellationRequestRow } from '@/db/schema/recipients';
import {
  cursorPattern,
  type cancelReminderRoute,
  type evidenceView,
  type listCancellationRequestsRoute,
  type openEvidenceRoute,
  type postEventRoute,
  type reminderJob,
  type resolveEvidenceRoute,
  type scheduleReminder,
} from '@/lib/api/producer';
import type { ProducerAnswer } from '@/lib/http/producer-route';
import { refuse, type Result } from '@/lib/http/refusal';
import type { OpenEvidenceResult, ResolveEvidenceResult } from '@/lib/planning/evidence';
import type { CancelResult } from '@/lib/planning/cancel-notice';
import { windowOfJob, type ScheduleResult } from '@/lib/planning/schedule-notice';
import type { ReceiveEventResult } from '@/lib/planning/receive-event';

/**
 * How a producer request's lib/ result reads in its contract (lib/api/producer.ts): the status
 * and body of each answer, and the refusal of each failure. README "For producers" documents them.
 */

function jobView(job: JobRow): z.input<typeof reminderJob> {
  return {
    id: job.id,
    noticeKey: job.noticeKey,
    type: job.noticeType,
    revision: job.revision,
    state: job.state,
    dueAt: job.dueAt.toISOString(),
    deadlineAt: job.deadlineAt.toISOString(),
    source: job.source,
  };
}

function evidenceOf(row: EvidenceRow): z.input<typeof evidenceView> {
  return { ref: row.ref, kind: row.kind, state: row.state, openedAt: row.openedAt.toISOString(), resolvedAt: row.resolvedAt?.toISOString() ?? null };
}

function windowAnswer(job: JobRow) {
  const window = windowOfJob(job);
  if (!window) return {};
  return {
    window: { earliest: window.earliest.toISOString(), latest: window.latest.toISOString(), ruleIds: window.ruleIds, ruleSetVersion: window.ruleSetVersion },
  };
}

export function scheduleAnswer(result: ScheduleResult): Result<ProducerAnswer<typeof scheduleReminder.output>> {
  switch (result.kind) {
    case 'created':
      return { ok: true, data: { status: 201, body: { ...jobView(result.job), created: true, ...windowAnswer(result.job) } } };
    case 'existing':
      return { ok: true, data: { status: 200, body: { ...jobView(result.job), created: false, ...windowAnswer(result.job) } } };
    case 'outside_window':
      return refuse('unprocessable', result.message, {
        code: 'outside_window',
        details: {
          message: result.message,
          fields: result.fields,
          ruleIds: result.ruleIds,
          window: result.window ? { earliest: result.window.earliest.toISOString(), latest: result.window.latest.toISOString() } : null,
        },
      });
    case 'unprocessable':
      return refuse('unprocessable', result.message, { code: result.code, details: { message: result.message, fields: result.fields } });
    case 'conflict':
      // The existing notice and where it is: a nightly run that recomputed its times reads this as "already scheduled" (README).
      return refuse('conflict', result.message, {
        code: 'notice_conflict',
        details: { message: result.message, jobId: result.job.id, noticeKey: result.job.noticeKey, state: result.job.state, fields: result.fields },
      });
    case 'invalid':
      return refuse('invalid_input', result.message, { code: 'invalid_request', details: { message: result.message, fields: result.fields } });
    case 'invalid_payload':
      return refuse('unprocessable', result.message, { code: 'invalid_payload', details: { message: result.message, fields: result.fields } });
  }
}

export function cancelAnswer(result: CancelResult): Result<ProducerAnswer<typeof cancelReminderRoute.output>> {
  if (result.kind === 'not_found') return refuse('not_found', 'no reminder job with that id');
  if (result.kind === 'conflict')
    return refuse('conflict', result.message, { code: 'not_pending', details: { message: result.message, state: result.job.state } });
  return { ok: true, data: { status: 200, body: jobView(result.job) } };
}

export function openEvidenceAnswer(result: OpenEvidenceResult): Result<ProducerAnswer<typeof openEvidenceRoute.output>> {
  if (result.kind === 'conflict')
    return refuse('conflict', result.message, { code: 'evidence_conflict', details: { message: result.message, state: result.evidence.state } });
  return { ok: true, data: { status: result.kind === 'created' ? 201 : 200, body: { ...evidenceOf(result.evidence), created: result.kind === 'created' } } };
}

export function resolveEvidenceAnswer(result: ResolveEvidenceResult): Result<ProducerAnswer<typeof resolveEvidenceRoute.output>> {
  return {
    ok: true,
    data: {
      status: 200,
      body: { ...evidenceOf(result.evidence), alreadyResolved: result.kind === 'already_resolved', suppressedJobIds: result.suppressedJobIds },
    },
  };
}

export function eventAnswer(result: ReceiveEventResult): Result<ProducerAnswer<typeof postEventRoute.output>> {
  switch (result.kind) {
    case 'invalid':
      return refuse('invalid_input', result.message, { code: 'invalid_request', details: { message: result.message, fields: result.fields } });
    case 'invalid_payload':
      return refuse('unprocessable', result.message, { code: 'invalid_payload', details: { message: result.message, fields: result.fields } });
    case 'unprocessable':
      return refuse('unprocessable', result.message, { code: result.code, details: { message: result.message, fields: result.fields } });
    case 'conflict':
      return refuse('conflict', result.message, {
        code: result.code,
        details: { message: result.message, eventId: result.eventId, revision: result.revision, notices: result.notices },
      });
    case 'created':
    case 'existing': {
      const { answer } = result;
      return {
        ok: true,
        data: {
          status: result.kind === 'created' ? 201 : 200,
          body: {
            eventId: answer.eventId,
            type: answer.type,
            revision: answer.revision,
            ruleSetVersion: answer.ruleSetVersion,
            created: result.kind === 'created',
            planned: answer.planned.map((notice) => ({
              noticeType: notice.noticeType,
              category: notice.category,
              noticeKey: notice.noticeKey,
              jobId: notice.jobId,
              dueAt: notice.dueAt.toISOString(),
              window: { earliest: notice.window.earliest.toISOString(), latest: notice.window.latest.toISOString() },
              ruleIds: notice.ruleIds,
            })),
            unplanned: answer.unplanned,
          },
        },
      };
    }
  }
}

export function cursorAfterId(cursor: string | undefined): number | null {
  const match = cursor ? cursorPattern.exec(cursor) : null;
  return match ? Number(match[1]) : null;
}

export function cancellationRequestsAnswer(
  rows: CancellationRequestRow[],
  { limit, cursor }: { limit: number; cursor: string | undefined },
): Result<ProducerAnswer<typeof listCancellationRequestsRoute.output>> {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    ok: true,
    data: {
      status: 200,
      body: {
        requests: page.map((row) => ({
          id: String(row.id),
          noticeKey: row.noticeKey,
          jobId: row.jobId,
          type: row.noticeType,
          identity: row.identity,
          subjectId: row.subjectId,
          customerId: row.customerId,
          source: row.source,
          codeVerified: row.codeVerified,
          requestedAt: row.requestedAt.toISOString(),
        })),
        // Where the next read starts: after this page's last row, or where this read started when
        // nothing new was there (poll again with it). null only when there has never been a row to pass.
        nextCursor: last ? `c1.${String(last.id)}` : (cursor ?? null),
      },
    },
  };
}
