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

export type TakeItem = { key: string; n: number };

const TABLE = 'rate_limit_domains';

// rate-limiter-flexible's upsert (RateLimiterPostgres#_upsert without forceExpire), over unnest:
// a window that ended ($1, now in ms) starts again with this count and a new end; otherwise the
// count is added and the end kept. Rows go in key order, so two processes' batches lock shared
// keys in one order and cannot deadlock.
const TAKE_MANY_SQL = `
  insert into "${TABLE}" as t (key, points, expire)
  select key, points, expire from unnest($2::text[], $3::int[], $4::bigint[]) as i(key, points, expire) order by key
  on conflict (key) do update set
    points = case when t.expire <= $1 then excluded.points else t.points + excluded.points end,
    expire = case when t.expire <= $1 then excluded.expire else t.expire end
  returning key, points, expire`;

export type WindowThrottle = {
  points: number;
  windowMs: number;
  /** Counts one request against `key`: take(key), answered as an Admission. */
  admit: (key: string) => Promise<Admission>;
  /** Counts `n` against `key`; refused (the count still taken) when it passes `points`. */
  take: (key: string, n?: number) => Promise<Admission & WindowState>;
  /**
   * `take` for many distinct keys in ONE statement (the library's upsert, row by row, keys locked
   * in one order): answers in the order of `items`, each exactly what its own `take` would have
   * been. Throws when a key repeats.
   */
  takeMany: (items: readonly TakeItem[]) => Promise<Array<Admission & WindowState>>;
  /** Counts `n` against `key` without refusing: the caller compares `consumed` itself. */
  count: (key: string, n?: number) => Promise<WindowState>;
  /** Takes back `n` of the key's count. */
  forgive: (key: string, n?: number) => Promise<void>;
  /** The key's window as it stands, or null when nothing is counted. */
  peek: (key: string) => Promise<WindowState | null>;
};

const stateOf = (res: RateLimiterRes): WindowState => ({ consumed: res.consumedPoints, resetInMs: Math.max(1, res.msBeforeNext) });

/** The library's answer to a consume from the row its upsert returned (RateLimiterPostgres#_getRateLimiterRes, _afterConsume). */
function admissionOf(row: { points: number; expire: string | null }, points: number, now: number): Admission & WindowState {
  const resetInMs = Math.max(1, row.expire === null ? -1 : Math.max(Number(row.expire) - now, 0));
  const consumed = row.points;
  return consumed > points ? { ok: false, retryInMs: resetInMs, consumed, resetInMs } : { ok: true, consumed, resetInMs };
}

export function createWindowThrottle({ pool, keyPrefix, points, windowMs }: WindowThrottleParams): WindowThrottle {
  const limiter = new RateLimiterPostgres({
    storeClient: pool,
    storeType: 'pool',
    tableName: TABLE,
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
  const takeMany: WindowThrottle['takeMany'] = async (items) => {
    if (items.length === 0) return [];
    const keys = items.map((item) => limiter.getKey(item.key));
    if (new Set(keys).size !== keys.length) throw new Error('takeMany: a key repeats (a statement cannot count one row twice)');
    const now = Date.now();
    const { rows } = await pool.query<{ key: string; points: number; expire: string | null }>({
      name: 'throttle_take_many',
      text: TAKE_MANY_SQL,
      values: [now, keys, items.map((item) => item.n), items.map(() => now + windowMs)],
    });
    const byKey = new Map(rows.map((row) => [row.key, row]));
    // Measured when the answer came, as the library does.
    const answeredAt = Date.now();
    return keys.map((key) => {
      const row = byKey.get(key);
      if (!row) throw new Error(`takeMany: no row returned for ${key}`);
      return admissionOf(row, points, answeredAt);
    });
  };
  return {
    points,
    windowMs,
    take,
    takeMany,
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
