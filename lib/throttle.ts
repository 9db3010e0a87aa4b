import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * One fixed-window counter per key, shared by every process through the UNLOGGED
 * `rate_limit_domains` table (migration 0005, so the library creates nothing), under the
 * caller's own key prefix. Every limit in the house is one of these with its configuration:
 * the send path's domain and SMS buckets (lib/jobs/rate-limit.ts), sign-in failures per address
 * (lib/auth/address-throttle.ts), the recipient page's and links' limits (lib/recipient/) and
 * template test-sends (lib/console/test-send-throttle.ts). A server crash forgets the counters,
 * which lets a key start a fresh window early: for a throttle an acceptable loss.
 */
export type WindowThrottleParams = { pool: pg.Pool; keyPrefix: string; points: number; windowMs: number };

/** A key's window: how many were counted in it and when it ends (at least 1 ms away). */
export type WindowState = { consumed: number; resetInMs: number };

/** One request counted: allowed, or refused with how long to wait. */
export type Admission = { ok: true } | { ok: false; retryInMs: number };

export type WindowThrottle = {
  points: number;
  windowMs: number;
  /** Counts one request against `key`: take(key), answered as an Admission. */
  admit: (key: string) => Promise<Admission>;
  /** Counts `n` against `key`; refused (the count still taken) when it passes `points`. */
  take: (key: string, n?: number) => Promise<Admission & WindowState>;
  /** Counts `n` against `key` without refusing: the caller compares `consumed` itself. */
  count: (key: string, n?: number) => Promise<WindowState>;
  /** Takes back `n` of the key's count. */
  forgive: (key: string, n?: number) => Promise<void>;
  /** The key's window as it stands, or null when nothing is counted. */
  peek: (key: string) => Promise<WindowState | null>;
};

const stateOf = (res: RateLimiterRes): WindowState => ({ consumed: res.consumedPoints, resetInMs: Math.max(1, res.msBeforeNext) });

export function createWindowThrottle({ pool, keyPrefix, points, windowMs }: WindowThrottleParams): WindowThrottle {
  const limiter = new RateLimiterPostgres({
    storeClient: pool,
    storeType: 'pool',
    tableName: 'rate_limit_domains',
    tableCreated: true,
    keyPrefix,
    points,
    duration: windowMs / 1000,
  });
  const take: WindowThrottle['take'] = async (key, n = 1) => {
    try {
      return { ok: true, ...stateOf(await limiter.consume(key, n)) };
    } catch (rejection) {
      // The limiter rejects with its state when the points are used up, and with an Error when the store failed.
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const state = stateOf(rejection);
      return { ok: false, retryInMs: state.resetInMs, ...state };
    }
  };
  return {
    points,
    windowMs,
    take,
    admit: async (key) => {
      const taken = await take(key);
      return taken.ok ? { ok: true } : { ok: false, retryInMs: taken.retryInMs };
    },
    // penalty, not consume: it counts past the limit without throwing, and the window keeps the
    // end set by its first count. The store's upsert increments atomically, so the count each
    // caller sees is its own place in the window.
    count: async (key, n = 1) => stateOf(await limiter.penalty(key, n)),
    forgive: async (key, n = 1) => {
      await limiter.reward(key, n);
    },
    peek: async (key) => {
      const res = await limiter.get(key);
      return res ? stateOf(res) : null;
    },
  };
}
