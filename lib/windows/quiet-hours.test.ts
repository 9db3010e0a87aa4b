import { describe, expect, it } from 'vitest';
import { isQuietAt, localSecondOfDay, parseQuietHours, quietHoursEnd } from './quiet-hours';

const night = parseQuietHours('21:00-08:00');

describe('quiet hours', () => {
  it('parses a window', () => {
    expect(parseQuietHours('21:30-08:15')).toEqual({ startMinute: 21 * 60 + 30, endMinute: 8 * 60 + 15 });
    expect(() => parseQuietHours('9-17')).toThrow(/must look like/);
  });

  it('reads the local time in the recipient zone', () => {
    expect(localSecondOfDay(new Date('2026-01-15T12:00:00Z'), 'America/New_York')).toBe(7 * 3600);
    expect(localSecondOfDay(new Date('2026-07-15T12:00:00Z'), 'Europe/Berlin')).toBe(14 * 3600);
  });

  it('is outside the window during the day', () => {
    expect(quietHoursEnd({ now: new Date('2026-01-15T12:00:00Z'), timeZone: 'UTC', window: night })).toBeNull();
  });

  it('ends the same morning when it is after midnight', () => {
    expect(quietHoursEnd({ now: new Date('2026-01-15T03:30:10Z'), timeZone: 'UTC', window: night })?.toISOString()).toBe('2026-01-15T08:00:00.000Z');
  });

  it('ends the next morning when it is late evening, in the recipient zone', () => {
    // 22:00 in New York (UTC-5 in January) is 03:00Z; the window ends at 08:00 local = 13:00Z.
    expect(quietHoursEnd({ now: new Date('2026-01-16T03:00:00Z'), timeZone: 'America/New_York', window: night })?.toISOString()).toBe(
      '2026-01-16T13:00:00.000Z',
    );
  });

  it('handles a window that does not cross midnight', () => {
    const lunch = parseQuietHours('12:00-13:00');
    expect(quietHoursEnd({ now: new Date('2026-01-15T12:59:00Z'), timeZone: 'UTC', window: lunch })?.toISOString()).toBe('2026-01-15T13:00:00.000Z');
    expect(quietHoursEnd({ now: new Date('2026-01-15T13:00:00Z'), timeZone: 'UTC', window: lunch })).toBeNull();
  });

  it('treats an unknown zone as UTC rather than failing the send', () => {
    expect(quietHoursEnd({ now: new Date('2026-01-15T03:00:00Z'), timeZone: 'Mars/Olympus', window: night })?.toISOString()).toBe('2026-01-15T08:00:00.000Z');
  });

  it('ends at the local end on a spring-forward night (an hour early by the wall clock no more)', () => {
    // New York, 2026-03-08: 02:00 EST → 03:00 EDT. At 01:00 EST (06:00Z) the end 08:00 EDT is 12:00Z.
    expect(quietHoursEnd({ now: new Date('2026-03-08T06:00:00Z'), timeZone: 'America/New_York', window: night })?.toISOString()).toBe(
      '2026-03-08T12:00:00.000Z',
    );
    // Berlin, 2026-03-29: 01:30 CET (00:30Z) → 08:00 CEST = 06:00Z.
    expect(quietHoursEnd({ now: new Date('2026-03-29T00:30:00Z'), timeZone: 'Europe/Berlin', window: night })?.toISOString()).toBe('2026-03-29T06:00:00.000Z');
  });

  it('ends at the local end on a fall-back night', () => {
    // New York, 2026-11-01: 02:00 EDT → 01:00 EST. At 00:30 EDT (04:30Z) the end 08:00 EST is 13:00Z.
    expect(quietHoursEnd({ now: new Date('2026-11-01T04:30:00Z'), timeZone: 'America/New_York', window: night })?.toISOString()).toBe(
      '2026-11-01T13:00:00.000Z',
    );
    // Berlin, 2026-10-25: 22:00 CEST on the 24th (20:00Z) → 08:00 CET on the 25th = 07:00Z.
    expect(quietHoursEnd({ now: new Date('2026-10-24T20:00:00Z'), timeZone: 'Europe/Berlin', window: night })?.toISOString()).toBe('2026-10-25T07:00:00.000Z');
  });

  it('is the first quiet-free instant: the millisecond before it is quiet, it is not', () => {
    for (const [now, zone] of [
      ['2026-03-08T06:00:00Z', 'America/New_York'],
      ['2026-11-01T04:30:00Z', 'America/New_York'],
      ['2026-03-29T00:30:00Z', 'Europe/Berlin'],
      ['2026-10-04T12:00:00Z', 'Australia/Lord_Howe'],
    ] as const) {
      const end = quietHoursEnd({ now: new Date(now), timeZone: zone, window: night });
      if (!end) continue;
      expect(isQuietAt({ now: end, timeZone: zone, window: night }), `${now} ${zone}`).toBe(false);
      expect(isQuietAt({ now: new Date(end.getTime() - 1), timeZone: zone, window: night }), `${now} ${zone}`).toBe(true);
    }
  });
});
