/**
 * Backoff after repeated failed sign-ins: the first FREE_ATTEMPTS failures cost nothing
 * (typos happen), then each further failure locks the account for twice as long as the
 * previous one, from 30 s up to 15 min. A guesser gets ~100 tries a day; a person who
 * forgot their password waits seconds, not an admin ticket.
 */
export const FREE_ATTEMPTS = 5;
const BASE_MS = 30_000;
const CAP_MS = 15 * 60_000;

/** The same schedule for the statement that counts an attempt before its check (db/queries/sign-in.ts reserveSignInAttempt). */
export const lockoutSchedule = { freeAttempts: FREE_ATTEMPTS, baseMs: BASE_MS, capMs: CAP_MS } as const;

export function lockoutAfterFailures(failedLogins: number): number {
  if (failedLogins < FREE_ATTEMPTS) return 0;
  const exponent = Math.min(failedLogins - FREE_ATTEMPTS, 20);
  return Math.min(BASE_MS * 2 ** exponent, CAP_MS);
}

export function isLocked(lockedUntil: Date | null, now: Date): boolean {
  return lockedUntil !== null && lockedUntil.getTime() > now.getTime();
}
