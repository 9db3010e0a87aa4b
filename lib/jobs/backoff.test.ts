import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planRetry, retryDelayMs } from './backoff';

describe('retry backoff', () => {
  it('doubles from the base with equal jitter', () => {
    expect(retryDelayMs({ attempts: 1, baseMs: 1000, capMs: 60_000, random: () => 0 })).toBe(500);
    expect(retryDelayMs({ attempts: 1, baseMs: 1000, capMs: 60_000, random: () => 0.999999 })).toBe(1000);
    expect(retryDelayMs({ attempts: 3, baseMs: 1000, capMs: 60_000, random: () => 0 })).toBe(2000);
    expect(retryDelayMs({ attempts: 3, baseMs: 1000, capMs: 60_000, random: () => 0.5 })).toBe(3000);
  });

  it('never exceeds the cap and never drops below half a step, whatever the attempt', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (attempts, baseMs, capMs, r) => {
          const delay = retryDelayMs({ attempts, baseMs, capMs, random: () => r });
          const step = Math.min(capMs, baseMs * 2 ** Math.min(attempts - 1, 30));
          expect(delay).toBeLessThanOrEqual(capMs);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(step / 2));
        },
      ),
    );
  });

  it('gives up once MAX_ATTEMPTS attempts were made', () => {
    expect(planRetry({ attempts: 2, maxAttempts: 3, baseMs: 10, capMs: 100, random: () => 0 })).toEqual({ kind: 'retry', delayMs: 10 });
    expect(planRetry({ attempts: 3, maxAttempts: 3, baseMs: 10, capMs: 100 })).toEqual({ kind: 'give_up' });
  });
});
