import { describe, expect, it } from 'vitest';
import { createHashGate, PasswordHashingBusy } from './hash-gate';

/** Work that finishes only when the test says so, counting how many run at once. */
function heldWork() {
  let running = 0;
  let peak = 0;
  const releases: (() => void)[] = [];
  const work = () =>
    new Promise<string>((resolve) => {
      running += 1;
      peak = Math.max(peak, running);
      releases.push(() => {
        running -= 1;
        resolve('done');
      });
    });
  return { work, peak: () => peak, releaseAll: () => releases.splice(0).forEach((release) => release()), started: () => releases.length };
}

describe('the password hash gate', () => {
  it('runs at most `concurrency` at once, queues `queue` more, and refuses the rest at once', async () => {
    const gate = createHashGate({ concurrency: 2, queue: 3 });
    const held = heldWork();
    const outcomes = Array.from({ length: 50 }, () =>
      gate.run(held.work).then(
        (value) => value,
        (error: unknown) => error,
      ),
    );
    expect(gate.load()).toEqual({ running: 2, waiting: 3 });
    const refused = await Promise.all(outcomes.slice(5));
    expect(refused.every((error) => error instanceof PasswordHashingBusy)).toBe(true);
    while (held.started() > 0 || gate.load().running > 0) {
      held.releaseAll();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(outcomes.slice(0, 5))).toEqual(Array(5).fill('done'));
    expect(held.peak()).toBe(2);
    expect(gate.load()).toEqual({ running: 0, waiting: 0 });
  });

  it('frees the slot when the work throws', async () => {
    const gate = createHashGate({ concurrency: 1, queue: 0 });
    await expect(gate.run(() => Promise.reject(new Error('scrypt failed')))).rejects.toThrow('scrypt failed');
    expect(await gate.run(() => Promise.resolve(7))).toBe(7);
  });
});
