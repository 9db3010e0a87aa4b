import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { throttleKeyOf } from '@/lib/auth/client-address';

/**
 * The rate limit of the recipient's links, shared by every console process through the
 * UNLOGGED `rate_limit_domains` table (as the sign-in throttle). Two buckets: per notice (a
 * genuine link hammered: a scanner in a loop) and per client address when TRUSTED_PROXY_HOPS
 * lets us know it (one client walking many links). Only a request whose token verified is
 * counted per notice, so a forged link costs no write at all. Generous: a mailbox provider's
 * one-click POSTs for many recipients come from few addresses.
 */
export const LINK_LIMITS = {
  perNotice: { points: 20, windowSeconds: 600 },
  perAddress: { points: 300, windowSeconds: 60 },
} as const;

export type LinkThrottle = {
  /** Counts one request; null when allowed, else how long to wait. */
  take: (key: { noticeKey?: string; address?: string | null }) => Promise<{ retryInMs: number } | null>;
};

export function createLinkThrottle(pool: pg.Pool): LinkThrottle {
  const make = (keyPrefix: string, { points, windowSeconds }: { points: number; windowSeconds: number }) =>
    new RateLimiterPostgres({
      storeClient: pool,
      storeType: 'pool',
      tableName: 'rate_limit_domains',
      tableCreated: true,
      keyPrefix,
      points,
      duration: windowSeconds,
    });
  const perNotice = make('recipient-link-notice', LINK_LIMITS.perNotice);
  const perAddress = make('recipient-link-address', LINK_LIMITS.perAddress);
  const consume = async (limiter: RateLimiterPostgres, key: string): Promise<{ retryInMs: number } | null> => {
    try {
      await limiter.consume(key, 1);
      return null;
    } catch (error) {
      if (error instanceof RateLimiterRes) return { retryInMs: Math.max(1, error.msBeforeNext) };
      throw error;
    }
  };
  return {
    take: async ({ noticeKey, address }) => {
      if (address) {
        const refused = await consume(perAddress, throttleKeyOf(address));
        if (refused) return refused;
      }
      return noticeKey ? consume(perNotice, noticeKey) : null;
    },
  };
}
