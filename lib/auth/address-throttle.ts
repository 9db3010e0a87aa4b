import type pg from 'pg';
import { z } from 'zod';
import { getDb } from '@/lib/process-db';
import { config } from '@/lib/config';
import { createWindowThrottle } from '@/lib/throttle';
import { clientAddressOf, throttleKeyOf } from './client-address';

/**
 * Failed sign-ins per client address in a fixed window, shared by every console process
 * (a window throttle: lib/throttle.ts). A server crash forgets the counts; the per-account
 * lockout is durable.
 */
export type AddressThrottle = {
  maxFailures: number;
  windowMs: number;
  /**
   * Counts this attempt against `address` (its /64 for IPv6: throttleKeyOf) before any work is
   * done, in one atomic increment, and says whether it may go on: of any number of attempts
   * arriving together, at most maxFailures are admitted per window. `attempts` is this one's place.
   */
  admit: (address: string) => Promise<{ admitted: boolean; attempts: number; retryInMs: number }>;
  /** Takes back the count of an admitted attempt that succeeded: only failures use up the window. */
  forgive: (address: string) => Promise<void>;
};

export const ADDRESS_KEY_PREFIX = 'sign-in-address';

export function createAddressThrottle({ pool, maxFailures, windowMs }: { pool: pg.Pool; maxFailures: number; windowMs: number }): AddressThrottle {
  const failures = createWindowThrottle({ pool, keyPrefix: ADDRESS_KEY_PREFIX, points: maxFailures, windowMs });
  return {
    maxFailures,
    windowMs,
    admit: async (address) => {
      const { consumed, resetInMs } = await failures.count(throttleKeyOf(address));
      return { admitted: consumed <= maxFailures, attempts: consumed, retryInMs: resetInMs };
    },
    forgive: (address) => failures.forgive(throttleKeyOf(address)),
  };
}

export type SignInClient = { address: string; throttle: AddressThrottle };

let processThrottle: AddressThrottle | undefined;

/**
 * The client of a sign-in request as far as TRUSTED_PROXY_HOPS lets us know it, with the
 * process's throttle; undefined when the address cannot be trusted (then nothing is limited
 * per address). `forwardedFor` is the request's X-Forwarded-For, whatever next-auth found.
 */
export function signInClientOf({ forwardedFor }: { forwardedFor: unknown }): SignInClient | undefined {
  const { TRUSTED_PROXY_HOPS, SIGN_IN_MAX_FAILURES_PER_ADDRESS, SIGN_IN_ADDRESS_WINDOW } = config();
  const header = z.string().safeParse(forwardedFor);
  const address = clientAddressOf({ forwardedFor: header.success ? header.data : null, trustedHops: TRUSTED_PROXY_HOPS });
  if (!address) return undefined;
  processThrottle ??= createAddressThrottle({ pool: getDb().$client, maxFailures: SIGN_IN_MAX_FAILURES_PER_ADDRESS, windowMs: SIGN_IN_ADDRESS_WINDOW });
  return { address, throttle: processThrottle };
}
