/**
 * Calendar days in a recipient's time zone, with nothing but Intl (Node 20 ships full ICU, so
 * every IANA zone and its DST history is there; no date library is needed for these four
 * operations). A calendar date is a plain `{ year, month, day }`: arithmetic on it is done in
 * UTC, where every day has 24 hours, and only the conversion to an instant looks at the zone.
 */
export type CalendarDate = { year: number; month: number; day: number };

const HOUR_MS = 3_600_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

type WallClock = CalendarDate & { hour: number; minute: number; second: number };

function wallClock(instant: Date, timeZone: string): WallClock {
  const parts = formatterFor(timeZone).formatToParts(instant);
  const get = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  return { year: get('year'), month: get('month'), day: get('day'), hour: get('hour'), minute: get('minute'), second: get('second') };
}

/** The recipient's calendar date at `instant`. */
export function localDateOf(instant: Date, timeZone: string): CalendarDate {
  const { year, month, day } = wallClock(instant, timeZone);
  return { year, month, day };
}

/** Days since 1970-01-01 of a calendar date, for comparisons and arithmetic. */
export function dayNumber(date: CalendarDate): number {
  return Date.UTC(date.year, date.month - 1, date.day) / 86_400_000;
}

export function addDays(date: CalendarDate, days: number): CalendarDate {
  const shifted = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: shifted.getUTCFullYear(), month: shifted.getUTCMonth() + 1, day: shifted.getUTCDate() };
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * `months` calendar months from `date`. When the target month is too short (31 March minus one
 * month), `overflow` decides: `clamp` gives its last day (28/29 February), `roll` the first day
 * of the month after (1 March). The caller picks whichever is the stricter reading of its rule.
 */
export function addMonths(date: CalendarDate, months: number, overflow: 'clamp' | 'roll'): CalendarDate {
  const index = date.year * 12 + (date.month - 1) + months;
  const year = Math.floor(index / 12);
  const month = (index % 12) + 1;
  const last = daysInMonth(year, month);
  if (date.day <= last) return { year, month, day: date.day };
  return overflow === 'clamp' ? { year, month, day: last } : addDays({ year, month, day: last }, 1);
}

function offsetMs(instant: number, timeZone: string): number {
  const wall = wallClock(new Date(instant), timeZone);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return asUtc - (instant - (((instant % 1000) + 1000) % 1000));
}

/**
 * The first instant of `date` in `timeZone`. Usually local midnight; where a DST change skips
 * midnight (America/Santiago, Asia/Beirut…) it is the first wall-clock time that exists that
 * day. Two offset look-ups find it in the ordinary case; a search covers the skipped midnight.
 */
export function startOfLocalDay(date: CalendarDate, timeZone: string): Date {
  const wallMidnight = Date.UTC(date.year, date.month - 1, date.day);
  const guess = wallMidnight - offsetMs(wallMidnight - offsetMs(wallMidnight, timeZone), timeZone);
  if (isMidnightOf(guess, date, timeZone)) return new Date(guess);
  // The day starts somewhere in the 14 h either side of UTC midnight (the widest offsets in use).
  let low = wallMidnight - 15 * HOUR_MS;
  let high = wallMidnight + 15 * HOUR_MS;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (dayNumber(localDateOf(new Date(middle), timeZone)) >= dayNumber(date)) high = middle;
    else low = middle;
  }
  return new Date(high);
}

function isMidnightOf(instant: number, date: CalendarDate, timeZone: string): boolean {
  const wall = wallClock(new Date(instant), timeZone);
  return wall.year === date.year && wall.month === date.month && wall.day === date.day && wall.hour === 0 && wall.minute === 0 && wall.second === 0;
}

/** The last millisecond of `date` in `timeZone`: windows are closed intervals. */
export function endOfLocalDay(date: CalendarDate, timeZone: string): Date {
  return new Date(startOfLocalDay(addDays(date, 1), timeZone).getTime() - 1);
}
