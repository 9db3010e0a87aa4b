import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';

/** The recipient's mail domain, lower-cased: the unit receiving systems throttle by. */
export function recipientDomain(email: string): string {
  const at = email.lastIndexOf('@');
  return at === -1 ? '' : email.slice(at + 1).trim().toLowerCase();
}

export type TokenResult = { ok: true } | { ok: false; retryInMs: number };

export type DomainRateLimiter = {
  take: (domain: string) => Promise<TokenResult>;
};

/**
 * One token bucket per recipient domain, stored in PostgreSQL so every worker (and replay
 * traffic) draws from the same bucket: `points` tokens per `windowSeconds` (RATE_LIMIT_PER_DOMAIN per second).
 */
export type DomainRateLimiterParams = {
  pool: pg.Pool;
  /**
   * Tokens taken from the shared bucket per round trip (default 1). The spares are spent by this
   * process only, and only until the bucket's current window ends: every token spent was counted
   * in the shared bucket within its window, so the limit holds across workers. Cost: spares a
   * worker does not use before the window ends are lost to everyone (at most lease-1 per domain
   * and worker per window).
   */
  lease?: number;
} & ({ pointsPerSecond: number } | { points: number; windowSeconds: number });

type Lease = { remaining: number; expiresAt: number };

/** Of `asked` tokens added to a window's counter (now at `consumed`), those numbered ≤ points are valid. */
export function grantedOf({ asked, consumed, points }: { asked: number; consumed: number; points: number }): number {
  return Math.max(0, Math.min(asked, points - (consumed - asked)));
}

export async function createDomainRateLimiter(params: DomainRateLimiterParams): Promise<DomainRateLimiter> {
  const { pool } = params;
  const [points, windowSeconds] = 'pointsPerSecond' in params ? [params.pointsPerSecond, 1] : [params.points, params.windowSeconds];
  const limiter = await new Promise<RateLimiterPostgres>((resolve, reject) => {
    const created: RateLimiterPostgres = new RateLimiterPostgres(
      { storeClient: pool, storeType: 'pool', tableName: 'rate_limit_domains', keyPrefix: 'domain', points, duration: windowSeconds },
      (error?: unknown) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(created)),
    );
  });
  const leaseSize = Math.max(1, Math.min(points, Math.floor(params.lease ?? 1)));
  const leases = new Map<string, Lease>();
  return {
    take: async (domain) => {
      const key = domain || 'unknown';
      const lease = leases.get(key);
      if (lease && lease.remaining > 0 && Date.now() < lease.expiresAt) {
        lease.remaining -= 1;
        return { ok: true };
      }
      leases.delete(key);
      let granted: number;
      let msBeforeNext: number;
      try {
        const res = await limiter.consume(key, leaseSize);
        granted = leaseSize;
        msBeforeNext = res.msBeforeNext;
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        // The counter took all `leaseSize`; the ones still within `points` are ours to spend.
        granted = grantedOf({ asked: leaseSize, consumed: rejection.consumedPoints, points });
        msBeforeNext = rejection.msBeforeNext;
        if (granted === 0) return { ok: false, retryInMs: Math.max(1, msBeforeNext) };
      }
      if (granted > 1 && msBeforeNext > 0) leases.set(key, { remaining: granted - 1, expiresAt: Date.now() + msBeforeNext });
      return { ok: true };
    },
  };
}
