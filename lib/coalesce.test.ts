import { describe, expect, it } from 'vitest';
import { createCoalescer } from './coalesce';

/** A batch runner that answers each item doubled, records the batches it saw, and can be held. */
function recorder() {
  const batches: number[][] = [];
  const alone: number[] = [];
  let release: (() => void) | null = null;
  let hold = false;
  return {
    batches,
    alone,
    holdNext: () => {
      hold = true;
    },
    release: () => release?.(),
    runBatch: async (items: readonly number[]) => {
      batches.push([...items]);
      if (hold) {
        hold = false;
        await new Promise<void>((resolve) => (release = resolve));
      }
      return items.map((n) => n * 2);
    },
    runOne: async (n: number) => {
      alone.push(n);
      return n * 2;
    },
  };
}

const refusedError = Object.assign(new Error('refused'), { refused: true });
const isRefused = (error: unknown) => error instanceof Error && 'refused' in error;

describe('createCoalescer', () => {
  it('puts callers of the same tick in one batch and answers each in its own order', async () => {
    const r = recorder();
    const call = createCoalescer({ runBatch: r.runBatch, runOne: r.runOne, retryAloneAfter: isRefused });
    const answers = await Promise.all([1, 2, 3, 4].map((n) => call(n)));
    expect(answers).toEqual([2, 4, 6, 8]);
    expect(r.batches).toEqual([[1, 2, 3, 4]]);
    expect(call.stats()).toEqual({ batches: 1, items: 4, fallbacks: 0 });
  });

  it('a lone caller goes through runOne at once', async () => {
    const r = recorder();
    const call = createCoalescer({ runBatch: r.runBatch, runOne: r.runOne, retryAloneAfter: isRefused });
    expect(await call(7)).toBe(14);
    expect(r.batches).toEqual([]);
    expect(r.alone).toEqual([7]);
  });

  it('callers arriving while a batch is in flight wait and share the next one', async () => {
    const r = recorder();
    const call = createCoalescer({ runBatch: r.runBatch, runOne: r.runOne, retryAloneAfter: isRefused });
    r.holdNext();
    const first = Promise.all([call(1), call(2)]);
    await Promise.resolve();
    await Promise.resolve();
    expect(r.batches).toEqual([[1, 2]]);
    const later = Promise.all([call(3), call(4), call(5)]);
    await Promise.resolve();
    expect(r.batches).toHaveLength(1);
    r.release();
    expect(await first).toEqual([2, 4]);
    expect(await later).toEqual([6, 8, 10]);
    expect(r.batches).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
  });

  it('never exceeds maxBatch', async () => {
    const r = recorder();
    const call = createCoalescer({ runBatch: r.runBatch, runOne: r.runOne, retryAloneAfter: isRefused, maxBatch: 3 });
    expect(await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => call(n)))).toEqual([2, 4, 6, 8, 10, 12, 14]);
    expect(r.batches).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(r.alone).toEqual([7]);
  });

  it('items with the same key never share a batch', async () => {
    const r = recorder();
    const call = createCoalescer({ runBatch: r.runBatch, runOne: r.runOne, retryAloneAfter: isRefused, keyOf: (n: number) => String(n % 10) });
    expect(await Promise.all([1, 11, 2, 21, 12].map((n) => call(n)))).toEqual([2, 22, 4, 42, 24]);
    expect(r.batches).toEqual([
      [1, 2],
      [11, 12],
    ]);
    expect(r.alone).toEqual([21]);
  });

  it('after a refused batch each item is tried alone: only the bad one fails', async () => {
    const call = createCoalescer<number, number>({
      runBatch: async () => {
        throw refusedError;
      },
      runOne: async (n) => {
        if (n === 2) throw new Error('bad item');
        return n * 2;
      },
      retryAloneAfter: isRefused,
    });
    const settled = await Promise.allSettled([1, 2, 3].map((n) => call(n)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(call.stats().fallbacks).toBe(1);
  });

  it('any other batch error goes to every caller unchanged, and nothing is retried', async () => {
    const lost = new Error('connection lost');
    const alone: number[] = [];
    const call = createCoalescer<number, number>({
      runBatch: async () => {
        throw lost;
      },
      runOne: async (n) => {
        alone.push(n);
        return n;
      },
      retryAloneAfter: isRefused,
    });
    const settled = await Promise.allSettled([1, 2, 3].map((n) => call(n)));
    expect(settled.map((s) => (s.status === 'rejected' ? s.reason : null))).toEqual([lost, lost, lost]);
    expect(alone).toEqual([]);
  });

  it('a batch answering the wrong number of items fails every caller (a bug, not a guess)', async () => {
    const call = createCoalescer<number, number>({ runBatch: async (items) => items.slice(1), runOne: async (n) => n, retryAloneAfter: isRefused });
    const settled = await Promise.allSettled([1, 2].map((n) => call(n)));
    expect(settled.every((s) => s.status === 'rejected')).toBe(true);
  });
});
