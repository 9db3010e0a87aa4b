/**
 * Group commit for independent statements: calls made while a batch is in flight wait and go
 * together in the next one, so under load one round trip (and one commit) serves many callers,
 * and an idle caller waits for nothing but its own statement. Every caller still gets its own
 * answer, and is answered only after the statement that carried its item returned (committed).
 *
 * Measured on the send path (bench/worker-e2e.ts): per-notice statements were the worker's
 * largest cost — a third of its CPU was the socket writes of ~3 round trips per notice.
 */

export type CoalescerOptions<I, O> = {
  /** One statement for many items; answers in the order of `items`. Throws → nothing of it happened. */
  runBatch: (items: readonly I[]) => Promise<readonly O[]>;
  /** The same work for one item: a batch of one, and the retry of each item of a failed batch. */
  runOne: (item: I) => Promise<O>;
  /**
   * Whether a batch's error proves that nothing of it happened (the server refused the
   * statement), so each item may be retried alone and one bad item fails only its own caller.
   * Any other error (a connection lost while the statement ran, which may have committed)
   * goes to every caller as it is, exactly as it would have without batching.
   */
  retryAloneAfter: (error: unknown) => boolean;
  maxBatch?: number;
  /** Items with the same key never share a batch (a statement cannot touch one row twice); the later one waits for the next. */
  keyOf?: (item: I) => string;
};

export type Coalescer<I, O> = {
  (item: I): Promise<O>;
  /** Batches sent, items carried: for tests and benchmarks. */
  readonly stats: () => { batches: number; items: number; fallbacks: number };
};

type Waiting<I, O> = { item: I; resolve: (value: O) => void; reject: (error: unknown) => void };

export function createCoalescer<I, O>({ runBatch, runOne, retryAloneAfter, maxBatch = 64, keyOf }: CoalescerOptions<I, O>): Coalescer<I, O> {
  let queue: Waiting<I, O>[] = [];
  let flushing = false;
  let scheduled = false;
  const counts = { batches: 0, items: 0, fallbacks: 0 };

  const takeBatch = (): Waiting<I, O>[] => {
    if (!keyOf) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      return batch;
    }
    const batch: Waiting<I, O>[] = [];
    const rest: Waiting<I, O>[] = [];
    const keys = new Set<string>();
    for (const waiting of queue) {
      const key = keyOf(waiting.item);
      if (batch.length < maxBatch && !keys.has(key)) {
        keys.add(key);
        batch.push(waiting);
      } else {
        rest.push(waiting);
      }
    }
    queue = rest;
    return batch;
  };

  const runAlone = async (waiting: Waiting<I, O>): Promise<void> => {
    try {
      waiting.resolve(await runOne(waiting.item));
    } catch (error) {
      waiting.reject(error);
    }
  };

  const flush = async (): Promise<void> => {
    scheduled = false;
    if (flushing) return;
    flushing = true;
    try {
      while (queue.length > 0) {
        const batch = takeBatch();
        counts.batches += 1;
        counts.items += batch.length;
        if (batch.length === 1) {
          const [only] = batch;
          if (only) await runAlone(only);
          continue;
        }
        let results: readonly O[];
        try {
          results = await runBatch(batch.map((waiting) => waiting.item));
        } catch (error) {
          if (retryAloneAfter(error)) {
            counts.fallbacks += 1;
            await Promise.all(batch.map(runAlone));
          } else {
            for (const waiting of batch) waiting.reject(error);
          }
          continue;
        }
        if (results.length !== batch.length) {
          const error = new Error(`batch answered ${String(results.length)} of ${String(batch.length)} items`);
          for (const waiting of batch) waiting.reject(error);
          continue;
        }
        batch.forEach((waiting, index) => waiting.resolve(results[index] as O));
      }
    } finally {
      flushing = false;
    }
  };

  const call = (item: I): Promise<O> =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      // Callers started in the same tick (a fetched batch of wake-ups) share the first batch.
      if (!flushing && !scheduled) {
        scheduled = true;
        queueMicrotask(() => void flush());
      }
    });
  return Object.assign(call, { stats: () => ({ ...counts }) });
}
