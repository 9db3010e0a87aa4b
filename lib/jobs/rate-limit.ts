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
export type DomainRateLimiterParams = { pool: pg.Pool } & ({ pointsPerSecond: number } | { points: number; windowSeconds: number });

export async function createDomainRateLimiter(params: DomainRateLimiterParams): Promise<DomainRateLimiter> {
  const { pool } = params;
  const [points, windowSeconds] = 'pointsPerSecond' in params ? [params.pointsPerSecond, 1] : [params.points, params.windowSeconds];
  const limiter = await new Promise<RateLimiterPostgres>((resolve, reject) => {
    const created: RateLimiterPostgres = new RateLimiterPostgres(
      { storeClient: pool, storeType: 'pool', tableName: 'rate_limit_domains', keyPrefix: 'domain', points, duration: windowSeconds },
      (error?: unknown) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(created)),
    );
  });
  return {
    take: async (domain) => {
      try {
        await limiter.consume(domain || 'unknown', 1);
        return { ok: true };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return { ok: false, retryInMs: Math.max(1, rejection.msBeforeNext) };
        throw rejection;
      }
    },
  };
}
