import { describe, expect, it } from 'vitest';
import { FREE_ATTEMPTS, isLocked, lockoutAfterFailures } from './lockout';

describe('lockout backoff', () => {
  it('lets the first few failures through, then doubles from 30 s up to 15 min', () => {
    expect(Array.from({ length: FREE_ATTEMPTS }, (_, index) => lockoutAfterFailures(index))).toEqual([0, 0, 0, 0, 0]);
    expect(lockoutAfterFailures(5)).toBe(30_000);
    expect(lockoutAfterFailures(6)).toBe(60_000);
    expect(lockoutAfterFailures(7)).toBe(120_000);
    expect(lockoutAfterFailures(10)).toBe(900_000);
    expect(lockoutAfterFailures(1_000)).toBe(900_000);
  });

  it('is locked only while locked_until is in the future', () => {
    const now = new Date('2026-11-29T02:00:00Z');
    expect(isLocked(null, now)).toBe(false);
    expect(isLocked(new Date('2026-11-29T02:00:01Z'), now)).toBe(true);
    expect(isLocked(new Date('2026-11-29T02:00:00Z'), now)).toBe(false);
  });
});
