import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lastAttemptAt, planRetry, retryDelayMs, type RetryParams } from './backoff';
import { isQuietAt, parseQuietHours } from '@/lib/windows/quiet-hours';

const H = 3_600_000;
const at = (iso: string) => new Date(iso);

function params(overrides: Partial<RetryParams> = {}): RetryParams {
  return {
    now: at('2026-12-01T10:00:00Z'),
    attempts: 1,
    maxAttempts: 8,
    baseMs: 30_000,
    capMs: H,
    random: () => 0,
    window: { opensAt: at('2026-12-01T09:00:00Z'), deadlineAt: at('2026-12-04T09:00:00Z') },
    category: 'required',
    quiet: null,
    ...overrides,
  };
}

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
});

describe('the window is the retry budget', () => {
  it('keeps retrying past MAX_ATTEMPTS while the window is open, marked at risk', () => {
    expect(planRetry(params({ attempts: 2 }))).toEqual({ kind: 'retry', at: at('2026-12-01T10:00:30Z'), last: false, atRisk: false });
    // The old budget: 8 attempts ended the notice `failed` with three days of window left.
    expect(planRetry(params({ attempts: 8 }))).toEqual({ kind: 'retry', at: at('2026-12-01T10:30:00Z'), last: false, atRisk: true });
    expect(planRetry(params({ attempts: 500 }))).toMatchObject({ kind: 'retry', atRisk: true });
  });

  it('pulls a backoff past the deadline in to one last attempt, a lead before it, then nothing fits', () => {
    const deadlineAt = at('2026-12-01T10:20:00Z');
    const window = { opensAt: at('2026-12-01T09:00:00Z'), deadlineAt };
    // 30 min of backoff would land after the deadline: the last attempt is RETRY_BASE (30 s) before it.
    expect(planRetry(params({ attempts: 8, window }))).toEqual({ kind: 'retry', at: at('2026-12-01T10:19:30Z'), last: true, atRisk: true });
    // That last attempt failed too: the window closes with nothing more to try.
    expect(planRetry(params({ attempts: 9, window, now: at('2026-12-01T10:19:30.200Z') }))).toEqual({ kind: 'window_closes' });
  });

  it('a short window keeps a tenth of itself as the lead', () => {
    const window = { opensAt: at('2026-12-01T10:00:00Z'), deadlineAt: at('2026-12-01T10:01:40Z') };
    expect(lastAttemptAt({ window, baseMs: 30_000 })).toEqual(at('2026-12-01T10:01:30Z'));
  });

  it('a retry landing in quiet hours waits for their end when it is before the last attempt', () => {
    const quiet = { window: parseQuietHours('21:00-08:00'), timeZone: 'UTC' };
    const plan = planRetry(params({ now: at('2026-12-01T20:50:00Z'), attempts: 8, quiet }));
    expect(plan).toEqual({ kind: 'retry', at: at('2026-12-02T08:00:00Z'), last: false, atRisk: true });
  });

  it('a courtesy notice whose night outlasts its window gets its last try before the night; a required one keeps its time', () => {
    const quiet = { window: parseQuietHours('21:00-08:00'), timeZone: 'UTC' };
    const window = { opensAt: at('2026-12-01T09:00:00Z'), deadlineAt: at('2026-12-02T06:00:00Z') };
    const now = at('2026-12-01T20:00:00Z');
    // 30 min of backoff from 20:00 lands at 20:30, before the night: both keep it.
    expect(planRetry(params({ now, attempts: 8, quiet, window, category: 'courtesy' }))).toMatchObject({ at: at('2026-12-01T20:30:00Z') });
    expect(planRetry(params({ now, attempts: 8, quiet, window, category: 'required' }))).toMatchObject({ at: at('2026-12-01T20:30:00Z') });
    // From 20:40 it lands at 21:10, in a night that ends after the window: the courtesy notice is
    // tried halfway to 21:00 instead; the required one keeps 21:10 (sent inside the night).
    const late = at('2026-12-01T20:40:00Z');
    expect(planRetry(params({ now: late, attempts: 8, quiet, window, category: 'courtesy' }))).toMatchObject({ at: at('2026-12-01T20:50:00Z') });
    expect(planRetry(params({ now: late, attempts: 8, quiet, window, category: 'required' }))).toMatchObject({ at: at('2026-12-01T21:10:00Z') });
    // From 20:50 the ten free minutes are less than half the backoff: no burst before the night.
    expect(planRetry(params({ now: at('2026-12-01T20:50:00Z'), attempts: 8, quiet, window, category: 'courtesy' }))).toMatchObject({
      at: at('2026-12-01T21:20:00Z'),
    });
  });

  const arbitraryCase = fc
    .record({
      opensAt: fc.integer({ min: 0, max: 30 * 24 * H }),
      length: fc.integer({ min: 0, max: 14 * 24 * H }),
      elapsed: fc.double({ min: 0, max: 1.2, noNaN: true }),
      attempts: fc.integer({ min: 1, max: 1000 }),
      maxAttempts: fc.integer({ min: 1, max: 100 }),
      baseMs: fc.integer({ min: 1, max: 10 * 60_000 }),
      capMs: fc.integer({ min: 1, max: 24 * H }),
      r: fc.double({ min: 0, max: 0.999999, noNaN: true }),
      category: fc.constantFrom('required' as const, 'courtesy' as const),
      quiet: fc.option(
        fc.record({
          start: fc.integer({ min: 0, max: 1439 }),
          end: fc.integer({ min: 0, max: 1439 }),
          zone: fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York'),
        }),
      ),
    })
    .map((c) => {
      const base = Date.UTC(2026, 0, 1);
      const opensAt = new Date(base + c.opensAt);
      const deadlineAt = new Date(opensAt.getTime() + c.length);
      const now = new Date(opensAt.getTime() + Math.round(c.length * c.elapsed));
      const p: RetryParams = {
        now,
        attempts: c.attempts,
        maxAttempts: c.maxAttempts,
        baseMs: c.baseMs,
        capMs: Math.max(c.capMs, c.baseMs),
        random: () => c.r,
        window: { opensAt, deadlineAt },
        category: c.category,
        quiet: c.quiet ? { window: { startMinute: c.quiet.start, endMinute: c.quiet.end }, timeZone: c.quiet.zone } : null,
      };
      return p;
    });

  it('never schedules after the deadline or before now and the window opening (property)', () => {
    fc.assert(
      fc.property(arbitraryCase, (p) => {
        const plan = planRetry(p);
        if (plan.kind !== 'retry') return;
        expect(plan.at.getTime()).toBeLessThanOrEqual(p.window.deadlineAt.getTime());
        expect(plan.at.getTime()).toBeLessThanOrEqual(lastAttemptAt({ window: p.window, baseMs: p.baseMs }).getTime());
        expect(plan.at.getTime()).toBeGreaterThan(p.now.getTime());
        expect(plan.at.getTime()).toBeGreaterThanOrEqual(p.window.opensAt.getTime());
      }),
    );
  });

  it('never ends a notice whose window has room for another attempt, whatever the count (property)', () => {
    fc.assert(
      fc.property(arbitraryCase, (p) => {
        const plan = planRetry(p);
        const room = p.now.getTime() < lastAttemptAt({ window: p.window, baseMs: p.baseMs }).getTime();
        expect(plan.kind).toBe(room ? 'retry' : 'window_closes');
        if (plan.kind === 'retry') expect(plan.atRisk).toBe(p.attempts >= p.maxAttempts);
      }),
    );
  });

  it('a retry the quiet hours would hold never waits past the last attempt, and a courtesy one is not woken inside them when it had a free instant before (property)', () => {
    fc.assert(
      fc.property(arbitraryCase, (p) => {
        const plan = planRetry(p);
        if (plan.kind !== 'retry' || !p.quiet || plan.last) return;
        const quiet = p.quiet;
        if (isQuietAt({ now: plan.at, timeZone: quiet.timeZone, window: quiet.window })) {
          // Only a required notice, or a courtesy one whose free stretch before the night was too short, wakes inside them.
          const nowQuiet = isQuietAt({ now: p.now, timeZone: quiet.timeZone, window: quiet.window });
          expect(p.category === 'required' || nowQuiet || plan.at.getTime() - p.now.getTime() >= retryDelayMs(p)).toBe(true);
        }
      }),
    );
  });
});
