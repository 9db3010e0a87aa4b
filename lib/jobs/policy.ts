import type { JobState, NoticeCategory, PreferenceState, RecipientSuppressionReason, SuppressionReason } from '@/db/schema/states';
import { quietHoursEnd, type QuietWindow } from '@/lib/windows/quiet-hours';
import { windowVerdict } from '@/lib/windows/verdict';

/**
 * Steps 1–3 of the send path as one pure decision, in the design's order: terminal job →
 * discard; before the window opens → defer (attempts unchanged); after it closed → suppress
 * `window_missed`; then policy suppressions; then quiet hours. Everything here is re-evaluated
 * on every wake-up, so a retry after a temporary rejection meets the same suppressions as a
 * first attempt.
 *
 * The window is the closed interval [window_earliest ?? due_at, deadline_at] (docs/send-windows.md),
 * judged by the planner's own check, `windowVerdict` (lib/windows/verdict.ts): a wake-up before
 * the later of `window_earliest` and `due_at` (quiet hours may have moved the due time inside the
 * window) waits for it.
 *
 * Quiet hours never push a notice past `latest`: when they end inside the window the wake-up
 * waits for their end; when they cover what is left of it, a `required` notice is sent inside
 * them (a law's window outranks the recipient's night, as the planner decides in
 * lib/windows/plan.ts) and a `courtesy` one is suppressed `window_missed`, its attempt saying
 * `quiet_hours_cover_window`.
 *
 * Consent (issue 16). A `courtesy` notice to a recipient whose preference for courtesy notices
 * on this channel is `opted_out` is suppressed `unsubscribed`. A `required` notice — one the law
 * calls for (an auto-renewal notice before a charge) — is sent to an opted-out recipient: the
 * opt-out, and the older `unsubscribed` entry on the suppression list, which meant the same,
 * cannot stop it. What still stops a required notice is what makes sending useless or harmful:
 * a hard bounce (there is no mailbox), a complaint (the recipient reported us as spam), and a
 * `manual` entry (support's deliberate, audited "never email this address", e.g. it belongs to
 * someone else; the console says so when it is added, and an ordinary "stop emailing me" is a
 * preference instead). Both are read from the job's load on every wake-up, so a retry after a
 * temporary rejection meets an opt-out that arrived in between.
 */
export type PolicyFacts = {
  now: Date;
  job: {
    state: JobState;
    dueAt: Date;
    /** null: the window opens at due_at. */
    windowEarliest: Date | null;
    deadlineAt: Date;
    category: NoticeCategory;
    nextAttemptAt: Date;
    recipientTimeZone: string;
    /** The last temporary failure, when it was being retried: a window that closes on it is missed for that cause. */
    lastErrorClass?: string | null;
  };
  recipientSuppression: RecipientSuppressionReason | null;
  /** The recipient's stored preference for the job's category on its channel; none stored is `opted_in`. */
  preference: PreferenceState;
  evidenceState: 'open' | 'resolved' | null;
  quietHours: QuietWindow | null;
};

export type PolicyDecision =
  | { kind: 'discard'; state: JobState }
  | { kind: 'defer'; until: Date; cause: 'early' | 'backoff' | 'quiet_hours' }
  /** `detail` is what the attempt records: the reason, or why the window was missed. */
  | { kind: 'suppress'; reason: SuppressionReason; detail: string }
  /** `quietHoursOverridden`: a required notice whose remaining window is all quiet hours, sent inside them. */
  | { kind: 'proceed'; quietHoursOverridden: boolean };

const terminal: readonly JobState[] = ['sent', 'suppressed', 'cancelled', 'failed'];

const recipientReason: Record<RecipientSuppressionReason, SuppressionReason> = {
  unsubscribed: 'unsubscribed',
  hard_bounce: 'hard_bounce',
  complaint: 'complaint',
  manual: 'unsubscribed',
};

/** The suppression-list reasons that stop a required notice too (see the comment on PolicyFacts). */
const stopsRequired: ReadonlySet<RecipientSuppressionReason> = new Set(['hard_bounce', 'complaint', 'manual']);

const suppress = (reason: SuppressionReason, detail: string = reason): PolicyDecision => ({ kind: 'suppress', reason, detail });

export function decidePolicy({ now, job, recipientSuppression, preference, evidenceState, quietHours }: PolicyFacts): PolicyDecision {
  if (terminal.includes(job.state)) return { kind: 'discard', state: job.state };
  const window = windowVerdict(job, now);
  if (window.verdict === 'early') return { kind: 'defer', until: window.until, cause: 'early' };
  if (window.verdict === 'missed') return suppress('window_missed', job.state === 'pending' && job.lastErrorClass ? job.lastErrorClass : 'window_missed');
  if (recipientSuppression && (job.category !== 'required' || stopsRequired.has(recipientSuppression))) return suppress(recipientReason[recipientSuppression]);
  if (job.category !== 'required' && preference === 'opted_out') return suppress('unsubscribed', 'opted_out');
  if (evidenceState === 'resolved') return suppress('evidence_resolved');
  // A wake-up that arrives before its backoff expired (a duplicate, or the sweeper) waits.
  if (job.state === 'pending' && now < job.nextAttemptAt) return { kind: 'defer', until: job.nextAttemptAt, cause: 'backoff' };
  if (quietHours) {
    const end = quietHoursEnd({ now, timeZone: job.recipientTimeZone, window: quietHours });
    if (end && end.getTime() <= job.deadlineAt.getTime()) return { kind: 'defer', until: end, cause: 'quiet_hours' };
    if (end && job.category === 'required') return { kind: 'proceed', quietHoursOverridden: true };
    if (end) return suppress('window_missed', 'quiet_hours_cover_window');
  }
  return { kind: 'proceed', quietHoursOverridden: false };
}
