import { createHash } from 'node:crypto';

/**
 * Every random choice of a chaos run comes from here, seeded, so a failing seed can be run
 * again. Choices that depend on which message arrives when (the sink's faults) use
 * `hashUnit` on the message's own identity instead of the shared stream: concurrent workers
 * reach the sink in a different order every run, a message's correlation does not change.
 */

export type Prng = {
  /** Uniform in [0, 1). */
  next: () => number;
  /** Integer in [min, max]. */
  int: (min: number, max: number) => number;
  chance: (probability: number) => boolean;
  pick: <T>(items: readonly T[]) => T;
  /** An independent stream for one purpose, so adding draws elsewhere does not shift it. */
  fork: (label: string) => Prng;
};

/** mulberry32: tiny, fast, good enough for test schedules (not for secrets). */
export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const prng: Prng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
    pick: (items) => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    fork: (label) => createPrng(hashSeed(seed, label)),
  };
  return prng;
}

function hashSeed(seed: number, label: string): number {
  return createHash('sha256').update(`${seed}:${label}`).digest().readUInt32BE(0);
}

/** A uniform [0, 1) value fixed by the seed and the parts: the same inputs, the same value. */
export function hashUnit(seed: number, ...parts: Array<string | number>): number {
  return hashSeed(seed, parts.join(':')) / 4_294_967_296;
}

/** CHAOS_SEED or --seed as a 32-bit unsigned integer; a fresh random one when absent. */
export function parseSeed(text: string | undefined): number {
  if (text === undefined || text.trim() === '') return Math.floor(Math.random() * 4_294_967_296);
  const value = Number(text.trim());
  if (!Number.isInteger(value) || value < 0 || value >= 4_294_967_296)
    throw new Error(`seed must be an integer from 0 to 4294967295, got "${text.slice(0, 40)}"`);
  return value;
}
