import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Template test-sends per console user, counted in `rate_limit_domains` (UNLOGGED, shared by
 * every console process) under their own key prefix, as the recipient page's and the sign-in
 * limits are (lib/recipient/throttle.ts, lib/auth/address-throttle.ts). A test goes to any
 * address the operator types through the real relay: without a limit one session could mail
 * an address thousands of times from the product's own domain.
 */
export type TestSendAdmission = { ok: true } | { ok: false; retryInMs: number };
export type TestSendThrottle = { admit: (actor: string) => Promise<TestSendAdmission> };

export const TEST_SEND_KEY_PREFIX = 'template-test-send';

export function createTestSendThrottle({ pool, limit, windowMs }: { pool: pg.Pool; limit: number; windowMs: number }): TestSendThrottle {
  const store = new RateLimiterPostgres({
    storeClient: pool,
    storeType: 'pool',
    tableName: 'rate_limit_domains',
    tableCreated: true,
    keyPrefix: TEST_SEND_KEY_PREFIX,
    points: limit,
    duration: windowMs / 1000,
  });
  return {
    admit: async (actor) => {
      try {
        await store.consume(actor.toLowerCase(), 1);
        return { ok: true };
      } catch (error) {
        // The limiter rejects with its state when the points are used up, and with an Error when the store failed.
        if (error instanceof RateLimiterRes) return { ok: false, retryInMs: Math.max(1, error.msBeforeNext) };
        throw error;
      }
    },
  };
}
