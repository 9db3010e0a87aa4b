import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { createWindowThrottle, type TakeItem } from './throttle';

describe('takeMany: many keys counted in one statement, each as its own take', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  const points = 5;
  const windowMs = 60_000;
  const keys = ['a.test', 'b.test', 'c.test', 'd.test'];
  let run = 0;

  // A step is a set of distinct keys each counting 1–4, or the end of one key's window.
  const step = fc.oneof(
    {
      arbitrary: fc.uniqueArray(fc.record({ key: fc.constantFrom(...keys), n: fc.integer({ min: 1, max: 4 }) }), {
        selector: (item) => item.key,
        minLength: 1,
        maxLength: keys.length,
      }),
      weight: 4,
    },
    { arbitrary: fc.record({ windowEnds: fc.constantFrom(...keys) }), weight: 1 },
  );

  it('gives every key the answer and the stored count that rate-limiter-flexible’s own consume gives it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        run += 1;
        // Two fresh prefixes per run: one counted by the library, key by key; one by takeMany.
        const single = createWindowThrottle({ pool: t.pool, keyPrefix: `single${String(run)}`, points, windowMs });
        const batched = createWindowThrottle({ pool: t.pool, keyPrefix: `batched${String(run)}`, points, windowMs });
        for (const s of steps) {
          if ('windowEnds' in s) {
            // The window ended: what an elapsed minute leaves in the row, for both.
            await t.pool.query('update rate_limit_domains set expire = $1 where key = any($2)', [
              Date.now() - 1,
              [`single${String(run)}:${s.windowEnds}`, `batched${String(run)}:${s.windowEnds}`],
            ]);
            continue;
          }
          const alone: Awaited<ReturnType<typeof single.take>>[] = [];
          for (const item of s) alone.push(await single.take(item.key, item.n));
          const together = await batched.takeMany(s);
          expect(together.map(({ ok, consumed }) => ({ ok, consumed }))).toEqual(alone.map(({ ok, consumed }) => ({ ok, consumed })));
          together.forEach((answer, index) => {
            const own = alone[index];
            expect(Math.abs(answer.resetInMs - (own?.resetInMs ?? 0))).toBeLessThan(5_000);
            expect('retryInMs' in answer).toBe(own !== undefined && 'retryInMs' in own);
          });
        }
        const byPrefix = async (prefix: string) =>
          (
            await t.pool.query<{ key: string; points: number }>(
              "select substr(key, length($1) + 2) as key, points from rate_limit_domains where key like $1 || ':%' order by key",
              [prefix],
            )
          ).rows;
        expect(await byPrefix(`batched${String(run)}`)).toEqual(await byPrefix(`single${String(run)}`));
      }),
      { numRuns: 40 },
    );
  });

  it('refuses a batch in which a key repeats, and counts nothing of it', async () => {
    const throttle = createWindowThrottle({ pool: t.pool, keyPrefix: 'repeat', points, windowMs });
    await expect(
      throttle.takeMany([
        { key: 'x.test', n: 1 },
        { key: 'x.test', n: 1 },
      ]),
    ).rejects.toThrow(/repeats/);
    expect(await throttle.peek('x.test')).toBeNull();
  });

  it('batches of many processes over the same keys, in any order, neither deadlock nor lose a count', async () => {
    const throttle = createWindowThrottle({ pool: t.pool, keyPrefix: 'crowd', points: 1_000, windowMs });
    const domains = Array.from({ length: 200 }, (_, i) => `d${String(i)}.test`);
    const batches: TakeItem[][] = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? domains : [...domains].reverse()).map((key) => ({ key, n: 1 })));
    const answers = await Promise.all(batches.map((items) => throttle.takeMany(items)));
    expect(answers.flat().every((answer) => answer.ok)).toBe(true);
    for (const key of domains) expect((await throttle.peek(key))?.consumed).toBe(batches.length);
  });
});
