import { quietHoursEnd, type QuietWindow } from '@/lib/jobs/quiet-hours';
import type { Window } from './rule-window';

export type DueTime = {
  dueAt: Date;
  /** `clear`: `earliest` was outside quiet hours; `moved`: pushed to their end; `covers_window`: no quiet-free instant is left. */
  quietHours: 'clear' | 'moved' | 'covers_window';
};

/**
 * The due time is the window's first instant: the earliest send leaves the recipient the most
 * time to act and the send path the most room for retries before `latest`. Quiet hours move it
 * to their end, never past `latest`.
 */
export function chooseDueTime({ window, quietHours, timeZone }: { window: Window; quietHours: QuietWindow | null; timeZone: string }): DueTime {
  const isQuiet = (instant: Date) => quietHours !== null && quietHoursEnd({ now: instant, timeZone, window: quietHours }) !== null;
  if (!quietHours || !isQuiet(window.earliest)) return { dueAt: window.earliest, quietHours: 'clear' };
  const end = firstQuietFreeInstant(window.earliest, isQuiet, (instant) => quietHoursEnd({ now: instant, timeZone, window: quietHours }));
  if (!end || end.getTime() > window.latest.getTime()) return { dueAt: window.earliest, quietHours: 'covers_window' };
  return { dueAt: end, quietHours: 'moved' };
}

/**
 * `quietHoursEnd` walks local wall-clock minutes, so on a DST night it is an hour early (still
 * quiet: ask again) or an hour late (past the end: search back). Between a quiet instant and the
 * first quiet-free one found, quiet hours are one stretch, so bisecting to the millisecond finds
 * where it ends.
 */
function firstQuietFreeInstant(start: Date, isQuiet: (instant: Date) => boolean, endOf: (instant: Date) => Date | null): Date | null {
  let candidate = start;
  for (let round = 0; round < 4 && isQuiet(candidate); round += 1) {
    const end = endOf(candidate);
    candidate = end && end.getTime() > candidate.getTime() ? end : new Date(candidate.getTime() + 60_000);
  }
  if (isQuiet(candidate)) return null;
  let quiet = start.getTime();
  let free = candidate.getTime();
  while (free - quiet > 1) {
    const middle = Math.floor((quiet + free) / 2);
    if (isQuiet(new Date(middle))) quiet = middle;
    else free = middle;
  }
  return new Date(free);
}
