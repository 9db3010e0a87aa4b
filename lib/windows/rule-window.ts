import type { RuleWindow } from './rules';
import { addDays, addMonths, endOfLocalDay, localDateOf, startOfLocalDay } from './zoned';

/** A closed interval of instants; `null` on a side means unbounded. */
export type Bounds = { earliest: Date | null; latest: Date | null };

/** A notice's allowed send window, both ends included. */
export type Window = { earliest: Date; latest: Date };

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const earlierOf = (a: Date, b: Date) => (a.getTime() <= b.getTime() ? a : b);
const laterOf = (a: Date, b: Date) => (a.getTime() >= b.getTime() ? a : b);

/**
 * Where a rule lets its notice go, for an anchor, in the recipient's time zone.
 *
 * A law that says "at least 15 and at most 45 days before" can be read by calendar days in the
 * recipient's zone (sent on or before the 15th local date before the anchor's local date) or by
 * exact 24-hour days (at least 15 × 24 h before the anchor instant). Across a DST change the
 * two readings differ by up to an hour at either end, and around the anchor's time of day by up
 * to a day. We do not know which one a regulator or a court would apply, so the window is what
 * both allow: `latest` is the earlier of the two floors, `earliest` the later of the two
 * ceilings.
 *
 * Months (France's "one to three months") have no 24-hour reading; their second reading keeps
 * the anchor's time into the day. A month that lacks the anchor's day (31 March minus one month)
 * is read strictly on each side: the floor clamps back to 28/29 February, the ceiling rolls
 * forward to 1 March.
 */
export function ruleBounds(window: RuleWindow, anchor: Date, timeZone: string): Bounds {
  return {
    latest: window.min === undefined ? null : floorBound(window.unit, window.min, anchor, timeZone),
    earliest: window.max === undefined ? null : ceilingBound(window.unit, window.max, anchor, timeZone),
  };
}

/** The last instant that is at least `count` units before the anchor by every reading. */
function floorBound(unit: RuleWindow['unit'], count: number, anchor: Date, timeZone: string): Date {
  if (unit === 'hours') return new Date(anchor.getTime() - count * HOUR_MS);
  const anchorDate = localDateOf(anchor, timeZone);
  if (unit === 'days') {
    const exact = new Date(anchor.getTime() - count * DAY_MS);
    const calendar = endOfLocalDay(addDays(anchorDate, -count), timeZone);
    return earlierOf(exact, calendar);
  }
  const target = addMonths(anchorDate, -count, 'clamp');
  const calendar = endOfLocalDay(target, timeZone);
  return earlierOf(sameTimeInto(target, anchor, timeZone), calendar);
}

/** The first instant that is at most `count` units before the anchor by every reading. */
function ceilingBound(unit: RuleWindow['unit'], count: number, anchor: Date, timeZone: string): Date {
  if (unit === 'hours') return new Date(anchor.getTime() - count * HOUR_MS);
  const anchorDate = localDateOf(anchor, timeZone);
  if (unit === 'days') {
    const exact = new Date(anchor.getTime() - count * DAY_MS);
    const calendar = startOfLocalDay(addDays(anchorDate, -count), timeZone);
    return laterOf(exact, calendar);
  }
  const target = addMonths(anchorDate, -count, 'roll');
  return laterOf(sameTimeInto(target, anchor, timeZone), startOfLocalDay(target, timeZone));
}

/** `date` at the anchor's elapsed time since its own local midnight. */
function sameTimeInto(date: Parameters<typeof startOfLocalDay>[0], anchor: Date, timeZone: string): Date {
  const elapsed = anchor.getTime() - startOfLocalDay(localDateOf(anchor, timeZone), timeZone).getTime();
  return new Date(startOfLocalDay(date, timeZone).getTime() + elapsed);
}
