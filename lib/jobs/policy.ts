import type { JobState, RecipientSuppressionReason, SuppressionReason } from '@/db/schema/states';
import { quietHoursEnd, type QuietWindow } from './quiet-hours';

/**
 * Steps 1–3 of the send path as one pure decision, in the design's order: terminal job →
 * discard; early → defer (attempts unchanged); then policy suppressions; then quiet hours.
 * Everything here is re-evaluated on every wake-up, so a retry after a temporary rejection
 * meets the same suppressions as a first attempt.
 */
export type PolicyFacts = {
  now: Date;
  job: {
    state: JobState;
    dueAt: Date;
    deadlineAt: Date;
    nextAttemptAt: Date;
    recipientTimeZone: string;
  };
  recipientSuppression: RecipientSuppressionReason | null;
  evidenceState: 'open' | 'resolved' | null;
  quietHours: QuietWindow | null;
};

export type PolicyDecision =
  | { kind: 'discard'; state: JobState }
  | { kind: 'defer'; until: Date; cause: 'early' | 'backoff' | 'quiet_hours' }
  | { kind: 'suppress'; reason: SuppressionReason }
  | { kind: 'proceed' };

const terminal: readonly JobState[] = ['sent', 'suppressed', 'cancelled', 'failed'];

const recipientReason: Record<RecipientSuppressionReason, SuppressionReason> = {
  unsubscribed: 'unsubscribed',
  hard_bounce: 'hard_bounce',
  complaint: 'complaint',
  manual: 'unsubscribed',
};

export function decidePolicy({ now, job, recipientSuppression, evidenceState, quietHours }: PolicyFacts): PolicyDecision {
  if (terminal.includes(job.state)) return { kind: 'discard', state: job.state };
  if (now < job.dueAt) return { kind: 'defer', until: job.dueAt, cause: 'early' };
  if (now >= job.deadlineAt) return { kind: 'suppress', reason: 'deadline_passed' };
  if (recipientSuppression) return { kind: 'suppress', reason: recipientReason[recipientSuppression] };
  if (evidenceState === 'resolved') return { kind: 'suppress', reason: 'evidence_resolved' };
  // A wake-up that arrives before its backoff expired (a duplicate, or the sweeper) waits.
  if (job.state === 'pending' && now < job.nextAttemptAt) return { kind: 'defer', until: job.nextAttemptAt, cause: 'backoff' };
  if (quietHours) {
    const end = quietHoursEnd({ now, timeZone: job.recipientTimeZone, window: quietHours });
    if (end) return end < job.deadlineAt ? { kind: 'defer', until: end, cause: 'quiet_hours' } : { kind: 'suppress', reason: 'quiet_hours_past_deadline' };
  }
  return { kind: 'proceed' };
}
