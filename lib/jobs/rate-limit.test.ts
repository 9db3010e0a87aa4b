import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { createDomainRateLimiter, grantedOf, type DomainRateLimiter } from './rate-limit';

describe('grantedOf', () => {
  it('grants the part of a leased batch that is still within the window limit', () => {
    expect(grantedOf({ asked: 4, consumed: 4, points: 10 })).toBe(4);
    expect(grantedOf({ asked: 4, consumed: 12, points: 10 })).toBe(2);
    expect(grantedOf({ asked: 4, consumed: 14, points: 10 })).toBe(0);
    expect(grantedOf({ asked: 4, consumed: 30, points: 10 })).toBe(0);
  });
});

describe('domain rate limiter with a token lease, shared through PostgreSQL', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  const drain = async (limiters: DomainRateLimiter[], domain: string, rounds: number) => {
    let granted = 0;
    for (let i = 0; i < rounds; i += 1) for (const limiter of limiters) if ((await limiter.take(domain)).ok) granted += 1;
    return granted;
  };

  it('never grants more than the shared limit across workers, and loses no token to a partial batch', async () => {
    const a = await createDomainRateLimiter({ pool: t.pool, points: 10, windowSeconds: 60, lease: 4 });
    const b = await createDomainRateLimiter({ pool: t.pool, points: 10, windowSeconds: 60, lease: 4 });
    const c = await createDomainRateLimiter({ pool: t.pool, points: 10, windowSeconds: 60, lease: 4 });
    // a leases tokens 1-4, b 5-8, c asks for 9-12 and keeps 9-10; later asks get nothing.
    expect(await drain([a, b, c], `lease-${String(Date.now())}.test`, 8)).toBe(10);
  });

  it('keeps its buckets in the migrated UNLOGGED table (no WAL flush per token lease)', async () => {
    const { rows } = await t.pool.query<{ relpersistence: string }>(
      "select relpersistence from pg_class where relname = 'rate_limit_domains' and relkind = 'r'",
    );
    expect(rows).toEqual([{ relpersistence: 'u' }]);
  });

  it('handlers of one domain arriving together share one lease instead of each leasing (and being refused)', async () => {
    const domain = `together-${String(Date.now())}.test`;
    const limiter = await createDomainRateLimiter({ pool: t.pool, points: 8, windowSeconds: 60, lease: 4 });
    const results = await Promise.all(Array.from({ length: 10 }, () => limiter.take(domain)));
    // Two leases of 4 cover 8 takers; the last two find the window spent.
    expect(results.filter((r) => r.ok)).toHaveLength(8);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.retryInMs > 0)).toBe(true);
    // The shared counter saw the leases, not one per handler: 8 granted + one refused lease of 4.
    const { rows } = await t.pool.query<{ points: number }>('select points from rate_limit_domains where key = $1', [`domain:${domain}`]);
    expect(rows[0]?.points).toBe(12);
  });

  it('does not spend leased spares after the window they were counted in', async () => {
    const domain = `window-${String(Date.now())}.test`;
    const leasing = await createDomainRateLimiter({ pool: t.pool, points: 3, windowSeconds: 2, lease: 3 });
    const plain = await createDomainRateLimiter({ pool: t.pool, points: 3, windowSeconds: 2 });
    expect((await leasing.take(domain)).ok).toBe(true); // holds 2 spares for this window
    expect((await plain.take(domain)).ok).toBe(false);
    // A new window: the plain worker gets a token again.
    await vi.waitFor(async () => expect((await plain.take(domain)).ok).toBe(true), { timeout: 10_000, interval: 50 });
    // Stale spares would make this 2 + 2 = 4 more; the new window has 2 tokens left.
    expect(await drain([leasing, plain], domain, 3)).toBe(2);
  });

  it('refills of many domains started together go in one statement, each answered for its own domain', async () => {
    const run = String(Date.now());
    const full = `full-${run}.test`;
    const limiter = await createDomainRateLimiter({ pool: t.pool, points: 2, windowSeconds: 60, lease: 2 });
    // One domain's window is already spent by another worker.
    const other = await createDomainRateLimiter({ pool: t.pool, points: 2, windowSeconds: 60, lease: 2 });
    expect((await other.take(full)).ok).toBe(true);
    const statements: string[] = [];
    const query = t.pool.query.bind(t.pool);
    const spy = vi.spyOn(t.pool, 'query').mockImplementation(((config: unknown, ...rest: unknown[]) => {
      if (typeof config === 'object' && config !== null && 'name' in config) statements.push(String(config.name));
      return (query as (...args: unknown[]) => unknown)(config, ...rest);
    }) as typeof t.pool.query);
    try {
      const domains = Array.from({ length: 8 }, (_, i) => `many-${String(i)}-${run}.test`);
      const results = await Promise.all([...domains, full].map((domain) => limiter.take(domain)));
      expect(results.slice(0, 8).every((r) => r.ok)).toBe(true);
      expect(results[8]?.ok).toBe(false);
      expect(statements).toEqual(['throttle_take_many']);
    } finally {
      spy.mockRestore();
    }
    // Their counts are the leases, as a take per domain would have left them.
    const { rows } = await t.pool.query<{ points: number }>("select points from rate_limit_domains where key like 'domain:many-%-' || $1 || '.test'", [run]);
    expect(rows.map((row) => row.points)).toEqual(Array.from({ length: 8 }, () => 2));
  });
});
