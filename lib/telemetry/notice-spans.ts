import type { Claim, ClaimParams } from '@/db/queries/ledger/claim';
import type { JobRow } from '@/db/schema';
import type { PolicyDecision } from '@/lib/jobs/policy';
import type { SendPathStatements } from '@/lib/jobs/send-path-statements';
import type { ScheduleResult } from '@/lib/planning/schedule-notice';
import { correlationOf } from '@/lib/ledger/notice-key';
import type { SendOutcome } from '@/lib/mail/transport';
import type { ReceiveEventResult } from '@/lib/planning/receive-event';
import { activeSpan, recordStep, spanContextOf, traceStep, tracingInstalled, type Span } from './tracing';

/**
 * What each step of a notice's path writes on its span, beside the code that runs it so the
 * send path and the routes change by one wrapper call per step. Only ids, types, counts and
 * outcomes (lib/telemetry/tracing.ts says what never goes in).
 */

const noticeOf = (job: Pick<JobRow, 'id' | 'noticeKey' | 'noticeType'>) => ({
  'notice.job_id': job.id,
  'notice.correlation': correlationOf(job.noticeKey),
  'notice.type': job.noticeType,
});

export function annotateScheduled(span: Span, result: ScheduleResult): ScheduleResult {
  span.setAttribute('notice.schedule.result', result.kind);
  if ('job' in result) span.setAttributes(noticeOf(result.job));
  return result;
}

export function annotatePlannedJob<R extends { job: JobRow; created: boolean }>(span: Span, result: R): R {
  span.setAttributes({ ...noticeOf(result.job), 'notice.schedule.result': result.created ? 'created' : 'existing' });
  return result;
}

export function annotateEventReceived(span: Span, result: ReceiveEventResult): ReceiveEventResult {
  span.setAttribute('event.receive.result', result.kind);
  if (result.kind === 'created' || result.kind === 'existing') {
    span.setAttributes({
      'event.id': result.answer.eventId,
      'event.type': result.answer.type,
      'event.planned': result.answer.planned.length,
      'event.unplanned': result.answer.unplanned.length,
    });
  }
  return result;
}

/**
 * The delivery's span (`notice.wakeup`, started by lib/queue/delivery.ts) learns which notice it
 * is once the job is loaded, and links to the span that scheduled it (the stored traceparent).
 * Wraps the send path's attempt builder: every attempt's outcome lands on it as `notice.outcome`.
 */
export function traceWakeup<O extends string, A extends unknown[], R>(job: JobRow, attempt: (outcome: O, ...rest: A) => R): (outcome: O, ...rest: A) => R {
  if (!tracingInstalled()) return attempt;
  const span = activeSpan();
  span.setAttributes({ ...noticeOf(job), 'notice.attempts': job.attempts });
  const scheduledBy = spanContextOf(job.traceparent);
  if (scheduledBy) span.addLink({ context: scheduledBy, attributes: { 'notice.link': 'scheduled_by' } });
  return (outcome, ...rest) => {
    span.setAttribute('notice.outcome', outcome);
    return attempt(outcome, ...rest);
  };
}

/** A wake-up that never became an attempt (its job is unknown). */
export function untracedWakeup(outcome: string): void {
  activeSpan().setAttribute('notice.outcome', outcome);
}

/** The pure policy decision, already made: a span of no length carrying its answer. */
export const tracePolicy = (decision: PolicyDecision): PolicyDecision =>
  recordStep('notice.policy', decision, (span) => {
    span.setAttribute('notice.policy.decision', decision.kind);
    if (decision.kind === 'defer') span.setAttribute('notice.policy.cause', decision.cause);
    else if (decision.kind === 'suppress') span.setAttribute('notice.policy.reason', decision.reason);
    else if (decision.kind === 'discard') span.setAttribute('notice.policy.job_state', decision.state);
  });

/** takeToken's answer: null when a token was taken, else the wait the bucket needs. */
export const traceTokenWait = (pending: Promise<number | null>): Promise<number | null> =>
  traceStep('notice.token_wait', pending, (span, throttledMs) => {
    span.setAttribute('notice.token.taken', throttledMs === null);
    if (throttledMs !== null) span.setAttribute('notice.token.retry_in_ms', throttledMs);
  });

/** The send path's statements with the claim as its own span (`notice.claim`); load and commit as they are. */
export function traceClaims(statements: SendPathStatements): SendPathStatements {
  const claim = (params: ClaimParams): Promise<Claim | null> =>
    traceStep('notice.claim', statements.claim(params), (span, won) => {
      span.setAttribute('notice.claim.won', won !== null);
      if (won) span.setAttribute('notice.claim.reclaimed', won.reclaimed);
    });
  return { ...statements, claim };
}

export const traceSend = (pending: Promise<SendOutcome>): Promise<SendOutcome> =>
  traceStep('notice.send', pending, (span, outcome) => {
    span.setAttribute('notice.send.outcome', outcome.kind);
    if (outcome.kind !== 'accepted') span.setAttribute('notice.send.error_class', outcome.errorClass);
    if (outcome.kind === 'rejected') span.setAttribute('notice.send.permanent', outcome.permanent);
  });

export const traceCommit = <T>(pending: Promise<T>): Promise<T> => traceStep('notice.commit', pending);
