import { isQuietAt, quietHoursEnd, type QuietWindow } from '@/lib/windows/quiet-hours';

/**
 * Retry delays for definite, temporary rejections (SMTP 4xx, a refused connect). Exponential from
 * RETRY_BASE, capped at RETRY_CAP, with "equal jitter": half the step is fixed, half random. Full
 * jitter could retry almost immediately against a relay that just said "try later"; no jitter
 * makes every reminder that hit the same 451 burst retry in lock-step.
 *
 * The notice's window is the retry budget, not an attempt count (issue 23): a relay down for an
 * hour used to fail a notice for good after MAX_ATTEMPTS (8) tries, 32–64 minutes with the
 * defaults, although its window had days left. Now a temporary failure is retried until the
 * window closes:
 * - every retry is at or before the window's last attempt instant, `deadline − lead`, where the
 *   lead is min(RETRY_BASE, a tenth of the window): a wake-up takes a moment to be handled, and
 *   one woken exactly at the deadline would be past it by the claim. A backoff that would land
 *   later is pulled in to that instant (the last attempt);
 * - when the attempt that just failed was at or after that instant, nothing more fits: the plan
 *   is `window_closes`, and the send path records the notice `window_missed` with the failure as
 *   its cause;
 * - quiet hours: a retry that lands in them waits for their end when that is before the last
 *   attempt instant (the policy would defer it there anyway). When they last beyond it, a
 *   courtesy notice (never sent inside them) is retried before they begin, if there is room; a
 *   required one keeps its time (the policy sends it inside them when they cover the rest of its
 *   window, as the planner would);
 * - never before the window opens (`opensAt`: the later of window_earliest and due_at).
 * MAX_ATTEMPTS is a ceiling of another kind: a notice past it is `atRisk` (retrying, at risk),
 * which the send path logs and the Windows page and notice_ledger_window_at_risk count for a
 * required notice. Counting never ends a notice whose window is open.
 */
export type RetryPlan = { kind: 'retry'; at: Date; last: boolean; atRisk: boolean } | { kind: 'window_closes' };

export type DelayParams = {
  /** Attempts already made, including the one that just failed (1 after the first try). */
  attempts: number;
  baseMs: number;
  capMs: number;
  /** [0, 1); injectable for tests. */
  random?: () => number;
};

export type RetryParams = DelayParams & {
  now: Date;
  maxAttempts: number;
  window: { opensAt: Date; deadlineAt: Date };
  category: 'required' | 'courtesy';
  /** The job's quiet hours at send and the recipient's zone; null: none. */
  quiet: { window: QuietWindow; timeZone: string } | null;
};

export function retryDelayMs({ attempts, baseMs, capMs, random = Math.random }: DelayParams): number {
  const exponent = Math.max(0, attempts - 1);
  // 2^30 × base overflows any sane cap long before it overflows a double; clamp the exponent anyway.
  const step = Math.min(capMs, baseMs * 2 ** Math.min(exponent, 30));
  const half = step / 2;
  return Math.round(half + random() * half);
}

/** The window's last attempt instant: `deadline − min(RETRY_BASE, a tenth of the window)`. */
export function lastAttemptAt({ window, baseMs }: { window: RetryParams['window']; baseMs: number }): Date {
  const length = Math.max(0, window.deadlineAt.getTime() - window.opensAt.getTime());
  return new Date(window.deadlineAt.getTime() - Math.min(baseMs, Math.floor(length / 10)));
}

/** The first quiet instant after `from` and at or before `to` (quiet), by bisection; `from` must be free. */
function quietStartBetween(from: number, to: number, quiet: (ms: number) => boolean): number {
  let free = from;
  let quietMs = to;
  while (quietMs - free > 1) {
    const middle = Math.floor((free + quietMs) / 2);
    if (quiet(middle)) quietMs = middle;
    else free = middle;
  }
  return quietMs;
}

export function planRetry(params: RetryParams): RetryPlan {
  const { now, window, quiet, category } = params;
  const nowMs = now.getTime();
  const lastMs = lastAttemptAt({ window, baseMs: params.baseMs }).getTime();
  if (nowMs >= lastMs) return { kind: 'window_closes' };
  const atRisk = params.attempts >= params.maxAttempts;
  const delayMs = retryDelayMs(params);
  let atMs = Math.max(nowMs + delayMs, window.opensAt.getTime());
  if (quiet) {
    const isQuiet = (ms: number) => isQuietAt({ now: new Date(ms), timeZone: quiet.timeZone, window: quiet.window });
    const candidate = Math.min(atMs, lastMs);
    const end = isQuiet(candidate) ? quietHoursEnd({ now: new Date(candidate), timeZone: quiet.timeZone, window: quiet.window }) : null;
    if (end && end.getTime() <= lastMs) atMs = Math.max(atMs, end.getTime());
    else if (end && category === 'courtesy' && !isQuiet(nowMs)) {
      // Its last chance is before the night: the free stretch ends where the quiet one starts.
      // Only while that stretch is at least half the backoff, so the retries before a night
      // are a few, not a burst that halves towards its start; then the policy says
      // `quiet_hours_cover_window` at the wake-up.
      const start = quietStartBetween(nowMs, candidate, isQuiet);
      if (start - nowMs >= delayMs / 2) atMs = nowMs + Math.max(1, Math.floor((start - nowMs) / 2));
    }
  }
  if (atMs >= lastMs) return { kind: 'retry', at: new Date(lastMs), last: true, atRisk };
  return { kind: 'retry', at: new Date(atMs), last: false, atRisk };
}
