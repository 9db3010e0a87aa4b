import type pg from 'pg';
import { createCoalescer } from '@/lib/coalesce';
import { createWindowThrottle, type TakeItem } from '@/lib/throttle';
import { statementRefused } from './send-path-statements';

/** The recipient's mail domain, lower-cased: the unit receiving systems throttle by. */
export function recipientDomain(email: string): string {
  const at = email.lastIndexOf('@');
  return at === -1
    ? ''
    : email
        .slice(at + 1)
        .trim()
        .toLowerCase();
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
  const bucket = createWindowThrottle({ pool, keyPrefix: 'domain', points, windowMs: windowSeconds * 1000 });
  const leaseSize = Math.max(1, Math.min(points, Math.floor(params.lease ?? 1)));
  // Refills of different domains started together (a fetched batch of wake-ups) share one
  // statement (lib/coalesce.ts): a refill per domain and window was the send path's most frequent
  // statement when notices spread over many domains (0.45 a notice over bench's 200 domains),
  // and PostgreSQL's largest cost on it. Each refill still gets its own domain's answer.
  const takeLease = createCoalescer<TakeItem, Awaited<ReturnType<typeof bucket.take>>>({
    keyOf: (item) => item.key,
    runBatch: (items) => bucket.takeMany(items),
    runOne: (item) => bucket.take(item.key, item.n),
    retryAloneAfter: statementRefused,
  });
  const leases = new Map<string, Lease>();
  // One refill per domain at a time. Without this, handlers of one domain arriving together
  // each leased a batch: all but the first found the window spent (and were throttled while
  // the first lease still held spares), and the shared counter took a lease per handler.
  const refills = new Map<string, Promise<TokenResult>>();

  const refill = async (key: string): Promise<TokenResult> => {
    const taken = await takeLease({ key, n: leaseSize });
    // A refused take still counted all `leaseSize`; the ones still within `points` are ours to spend.
    const granted = taken.ok ? leaseSize : grantedOf({ asked: leaseSize, consumed: taken.consumed, points });
    if (granted === 0) return { ok: false, retryInMs: taken.resetInMs };
    leases.set(key, { remaining: granted, expiresAt: Date.now() + taken.resetInMs });
    return { ok: true };
  };

  const takeLeased = (key: string): boolean => {
    const lease = leases.get(key);
    if (!lease || lease.remaining <= 0 || Date.now() >= lease.expiresAt) return false;
    lease.remaining -= 1;
    return true;
  };

  return {
    take: async (domain) => {
      const key = domain || 'unknown';
      // Each pass either spends a token or waits for a refill; a refill that grants nothing
      // ends the loop, so it cannot spin.
      for (;;) {
        if (takeLeased(key)) return { ok: true };
        let pending = refills.get(key);
        if (!pending) {
          leases.delete(key);
          pending = refill(key).finally(() => refills.delete(key));
          refills.set(key, pending);
        }
        const result = await pending;
        if (!result.ok) return result;
      }
    },
  };
}

/**
 * The SMS bucket: per sender (our number or Messaging Service) and destination country, the unit
 * Twilio and the carriers throttle by. It shares the table and the leasing of the domain buckets
 * and never collides with one (a mail domain has no `:`).
 */
export function smsThrottleKey(sender: string, country: string): string {
  return `sms:${sender}:${country}`;
}
