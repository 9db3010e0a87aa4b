/**
 * One hot-queue policy for every transport. A job row holds its delay (next_attempt_at); a
 * wake-up enters the queue only once the job is due within the horizon, so the queue holds
 * the next few minutes of work, never the next thirty days. pg-boss's job table, scanned by
 * every fetch and by maintenance, stays small (its maintainer advises under about 1 M rows;
 * 30 days of 500 k renewals a day would be 15 M: see bench/hot-queue.ts). Scheduling publishes
 * a near-due job in its transaction; `lib/queue/dispatcher.ts` publishes the rest as they come
 * within the horizon, and `lib/jobs/sweeper.ts` re-wakes any whose wake-up was lost.
 */

export const DEFAULT_QUEUE_HORIZON_MS = 15 * 60_000;

/** Whether a wake-up due at `at` (now when omitted) may enter a queue whose horizon is `horizonMs`. */
export function isWithinHorizon({ at, now, horizonMs }: { at: Date | undefined; now: Date; horizonMs: number }): boolean {
  return at === undefined || at.getTime() <= now.getTime() + horizonMs;
}

/** The latest due time a dispatch at `now` publishes. */
export function horizonEnd({ now, horizonMs }: { now: Date; horizonMs: number }): Date {
  return new Date(now.getTime() + horizonMs);
}
