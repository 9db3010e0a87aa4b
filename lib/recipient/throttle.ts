import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { throttleKeyOf } from '@/lib/auth/client-address';

/**
 * The recipient page's limits, counted in `rate_limit_domains` (UNLOGGED, shared by every
 * console process, as the sign-in throttle: lib/auth/address-throttle.ts) under their own key
 * prefixes: requests per client address (before the link is even verified), requests per notice
 * (after: a verified link's notice key, so a flood of forged tokens creates no per-token rows),
 * and wrong one-time codes per notice. A counter is the only thing a refused request may write.
 */
export type RecipientThrottle = {
  /** Counts one request from `address` (its /64 for IPv6); refused once over the limit. */
  admitAddress: (address: string) => Promise<{ ok: true } | { ok: false; retryInMs: number }>;
  /** Counts one request for a verified link's notice. */
  admitNotice: (noticeKey: string) => Promise<{ ok: true } | { ok: false; retryInMs: number }>;
  /** How long code entry stays refused for this notice, or null while it has attempts left. */
  codeRefusal: (noticeKey: string) => Promise<{ retryInMs: number } | null>;
  countCodeFailure: (noticeKey: string) => Promise<void>;
};

export const RECIPIENT_KEY_PREFIXES = { address: 'recipient-address', notice: 'recipient-notice', code: 'recipient-code' } as const;

export type RecipientLimits = { perAddress: number; perNotice: number; codeAttempts: number; windowMs: number };

export function createRecipientThrottle({ pool, limits }: { pool: pg.Pool; limits: RecipientLimits }): RecipientThrottle {
  const limiter = (keyPrefix: string, points: number) =>
    new RateLimiterPostgres({
      storeClient: pool,
      storeType: 'pool',
      tableName: 'rate_limit_domains',
      tableCreated: true,
      keyPrefix,
      points,
      duration: limits.windowMs / 1000,
    });
  const byAddress = limiter(RECIPIENT_KEY_PREFIXES.address, limits.perAddress);
  const byNotice = limiter(RECIPIENT_KEY_PREFIXES.notice, limits.perNotice);
  const codes = limiter(RECIPIENT_KEY_PREFIXES.code, limits.codeAttempts);
  const admit = async (store: RateLimiterPostgres, key: string): Promise<{ ok: true } | { ok: false; retryInMs: number }> => {
    try {
      await store.consume(key, 1);
      return { ok: true };
    } catch (error) {
      // The limiter rejects with its state when the points are used up, and with an Error when the store failed.
      if (error instanceof RateLimiterRes) return { ok: false, retryInMs: Math.max(1, error.msBeforeNext) };
      throw error;
    }
  };
  return {
    admitAddress: (address) => admit(byAddress, throttleKeyOf(address)),
    admitNotice: (noticeKey) => admit(byNotice, noticeKey),
    codeRefusal: async (noticeKey) => {
      const state = await codes.get(noticeKey);
      if (!state || state.consumedPoints < limits.codeAttempts) return null;
      return { retryInMs: Math.max(1, state.msBeforeNext) };
    },
    countCodeFailure: async (noticeKey) => {
      await codes.penalty(noticeKey, 1);
    },
  };
}
