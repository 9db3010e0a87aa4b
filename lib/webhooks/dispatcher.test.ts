import { describe, expect, it } from 'vitest';
import { loadConfig } from '@/lib/config';
import { parseRetryAfter, planNext } from './dispatcher';

/** The retry schedule and Retry-After, as the dispatcher plans each attempt after the one that failed. */

const now = new Date('2026-12-02T10:00:00.000Z');
const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const schedule = [0, 5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H];

function delayAfter(attempt: number, { status = 503, retryAfterMs = null }: { status?: number | null; retryAfterMs?: number | null } = {}): number | string {
  const plan = planNext({ attempt, status, retryAfterMs, scheduleMs: schedule, now });
  return plan.outcome.kind === 'retry' ? plan.outcome.at.getTime() - now.getTime() : `${plan.outcome.kind}${plan.disable ? `:${plan.disable}` : ''}`;
}

describe('the retry schedule', () => {
  it('is the default WEBHOOK_RETRY_SCHEDULE: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — over a day in all', () => {
    const parsed = loadConfig({ NODE_ENV: 'test', NOTICE_KEY_SECRET: 'x'.repeat(32), DATABASE_URL: 'postgres://localhost/x' }).WEBHOOK_RETRY_SCHEDULE;
    expect(parsed).toEqual(schedule);
    expect(schedule.reduce((sum, step) => sum + step, 0)).toBeGreaterThan(24 * H);
  });

  it('waits each next step after a failed attempt, then gives up after the last one', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => delayAfter(attempt))).toEqual(schedule.slice(1));
    expect(delayAfter(8)).toBe('failed');
    // A connection that failed (no status) is retried the same way.
    expect(delayAfter(2, { status: null })).toBe(5 * M);
  });

  it('stops at once on 2xx (delivered) and 410 (failed, the endpoint disabled), whatever the attempt', () => {
    expect(delayAfter(1, { status: 200 })).toBe('delivered');
    expect(delayAfter(8, { status: 204 })).toBe('delivered');
    expect(delayAfter(1, { status: 410 })).toBe('failed:gone');
    expect(delayAfter(1, { status: 404 })).toBe(5 * S);
    expect(delayAfter(1, { status: 301 })).toBe(5 * S);
  });

  it('rejects a schedule that is not a list of durations, with the setting named', () => {
    expect(() =>
      loadConfig({ NODE_ENV: 'test', NOTICE_KEY_SECRET: 'x'.repeat(32), DATABASE_URL: 'postgres://localhost/x', WEBHOOK_RETRY_SCHEDULE: '0s,soon' }),
    ).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
  });
});

describe('Retry-After', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120 * S);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an HTTP-date in all three RFC 9110 forms, as the time left until it (a date past is 0)', () => {
    expect(parseRetryAfter('Wed, 02 Dec 2026 10:30:00 GMT', now)).toBe(30 * M);
    expect(parseRetryAfter('Wednesday, 02-Dec-26 10:30:00 GMT', now)).toBe(30 * M);
    expect(parseRetryAfter('Wed Dec  2 10:30:00 2026', now)).toBe(30 * M);
    expect(parseRetryAfter('Wed, 02 Dec 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('ignores what is neither: absent, negative, fractional, a bare word, a date without its zone rules', () => {
    for (const value of [undefined, '', '-5', '1.5', 'soon', '2026-12-02T10:30:00Z', 'Wed, 02 Dec 2026 10:30:00 +0100', '12abc'])
      expect(parseRetryAfter(value, now), String(value)).toBeNull();
  });

  it('delays the next attempt when later than the step, never earlier than the step', () => {
    expect(delayAfter(1, { retryAfterMs: 2 * M })).toBe(2 * M);
    expect(delayAfter(3, { retryAfterMs: 2 * M })).toBe(30 * M);
  });

  it('is capped at the longest step of the schedule, however far it asks', () => {
    expect(delayAfter(1, { retryAfterMs: parseRetryAfter('31536000', now) })).toBe(10 * H);
    expect(delayAfter(1, { retryAfterMs: parseRetryAfter('999999999999999999999', now) })).toBe(10 * H);
    expect(delayAfter(1, { retryAfterMs: parseRetryAfter('Fri, 01 Jan 2100 00:00:00 GMT', now) })).toBe(10 * H);
  });

  it('adds no attempt: after the last step the delivery fails whatever Retry-After says', () => {
    expect(delayAfter(8, { retryAfterMs: 60 * S })).toBe('failed');
  });
});
