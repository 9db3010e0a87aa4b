/**
 * Retry delays for definite, temporary rejections (SMTP 4xx). Exponential from RETRY_BASE,
 * capped at RETRY_CAP, with "equal jitter": half the step is fixed, half random. Full jitter
 * could retry almost immediately against a relay that just said "try later"; no jitter makes
 * every reminder that hit the same 451 burst retry in lock-step.
 */
export type RetryPlan = { kind: 'retry'; delayMs: number } | { kind: 'give_up' };

export type RetryParams = {
  /** Attempts already made, including the one that just failed (1 after the first try). */
  attempts: number;
  maxAttempts: number;
  baseMs: number;
  capMs: number;
  /** [0, 1); injectable for tests. */
  random?: () => number;
};

export function retryDelayMs({ attempts, baseMs, capMs, random = Math.random }: Omit<RetryParams, 'maxAttempts'>): number {
  const exponent = Math.max(0, attempts - 1);
  // 2^30 × base overflows any sane cap long before it overflows a double; clamp the exponent anyway.
  const step = Math.min(capMs, baseMs * 2 ** Math.min(exponent, 30));
  const half = step / 2;
  return Math.round(half + random() * half);
}

export function planRetry(params: RetryParams): RetryPlan {
  if (params.attempts >= params.maxAttempts) return { kind: 'give_up' };
  return { kind: 'retry', delayMs: retryDelayMs(params) };
}
