/**
 * next-auth hands the message of an error thrown by `authorize` to the sign-in page as its
 * `error` code. The throttled code carries the minutes to wait, so the page can say them.
 */
/** Thrown when the process's password hash gate is full (lib/auth/hash-gate.ts): a matter of load, not of the account. */
export const SIGN_IN_BUSY = 'SignInBusy';

const THROTTLED = /^AddressThrottled:(\d{1,4})$/;

export function addressThrottledError({ retryInMs }: { retryInMs: number }): string {
  return `AddressThrottled:${Math.min(9_999, Math.max(1, Math.ceil(retryInMs / 60_000)))}`;
}

/** The minutes of an `addressThrottledError` code, or null for any other code. */
export function throttledMinutesOf(code: string): number | null {
  const minutes = THROTTLED.exec(code)?.[1];
  return minutes === undefined ? null : Number(minutes);
}
