import { describe, expect, it } from 'vitest';
import { isTimeZone as isTimeZoneName } from '@/lib/api/fields';
import { addDays, addMonths, endOfLocalDay, localDateOf, startOfLocalDay } from './zoned';

// Offsets and DST dates from the zones' published rules; the instants are worked out by hand.
describe('calendar days in a time zone', () => {
  it('a 23-hour day: Los Angeles springs forward on 14 March 2027', () => {
    expect(startOfLocalDay({ year: 2027, month: 3, day: 14 }, 'America/Los_Angeles').toISOString()).toBe('2027-03-14T08:00:00.000Z');
    expect(endOfLocalDay({ year: 2027, month: 3, day: 14 }, 'America/Los_Angeles').toISOString()).toBe('2027-03-15T06:59:59.999Z');
  });

  it('a 25-hour day: Auckland falls back on 4 April 2027', () => {
    expect(startOfLocalDay({ year: 2027, month: 4, day: 4 }, 'Pacific/Auckland').toISOString()).toBe('2027-04-03T11:00:00.000Z');
    expect(endOfLocalDay({ year: 2027, month: 4, day: 4 }, 'Pacific/Auckland').toISOString()).toBe('2027-04-04T11:59:59.999Z');
  });

  it('a day without a midnight: Santiago jumps from 00:00 to 01:00 on 6 September 2026', () => {
    expect(startOfLocalDay({ year: 2026, month: 9, day: 6 }, 'America/Santiago').toISOString()).toBe('2026-09-06T04:00:00.000Z');
    expect(endOfLocalDay({ year: 2026, month: 9, day: 5 }, 'America/Santiago').toISOString()).toBe('2026-09-06T03:59:59.999Z');
  });

  it('half- and quarter-hour offsets: Kolkata and Kathmandu', () => {
    expect(startOfLocalDay({ year: 2027, month: 1, day: 10 }, 'Asia/Kolkata').toISOString()).toBe('2027-01-09T18:30:00.000Z');
    expect(startOfLocalDay({ year: 2027, month: 1, day: 10 }, 'Asia/Kathmandu').toISOString()).toBe('2027-01-09T18:15:00.000Z');
    expect(localDateOf(new Date('2027-01-09T18:29:59Z'), 'Asia/Kolkata')).toEqual({ year: 2027, month: 1, day: 9 });
    expect(localDateOf(new Date('2027-01-09T18:30:00Z'), 'Asia/Kolkata')).toEqual({ year: 2027, month: 1, day: 10 });
  });

  it('adds days across month and year ends', () => {
    expect(addDays({ year: 2027, month: 3, day: 1 }, -1)).toEqual({ year: 2027, month: 2, day: 28 });
    expect(addDays({ year: 2028, month: 3, day: 1 }, -1)).toEqual({ year: 2028, month: 2, day: 29 });
    expect(addDays({ year: 2027, month: 1, day: 15 }, -45)).toEqual({ year: 2026, month: 12, day: 1 });
  });

  it('subtracts months, clamping or rolling a day the target month lacks', () => {
    expect(addMonths({ year: 2027, month: 3, day: 31 }, -1, 'clamp')).toEqual({ year: 2027, month: 2, day: 28 });
    expect(addMonths({ year: 2027, month: 3, day: 31 }, -1, 'roll')).toEqual({ year: 2027, month: 3, day: 1 });
    expect(addMonths({ year: 2028, month: 3, day: 31 }, -1, 'clamp')).toEqual({ year: 2028, month: 2, day: 29 });
    expect(addMonths({ year: 2027, month: 2, day: 15 }, -3, 'clamp')).toEqual({ year: 2026, month: 11, day: 15 });
    expect(addMonths({ year: 2027, month: 5, day: 31 }, -3, 'roll')).toEqual({ year: 2027, month: 3, day: 1 });
  });

  it('knows IANA names', () => {
    expect(isTimeZoneName('Europe/Paris')).toBe(true);
    expect(isTimeZoneName('Mars/Olympus')).toBe(false);
  });
});
