/**
 * Quiet hours are a local-time window in the recipient's time zone, e.g. "21:00-08:00"
 * (crossing midnight) or "12:00-13:00". `quietHoursEnd` is the first instant that is no longer
 * quiet, exact on DST nights too: the wall-clock walk is a first guess, checked, and where a
 * clock change made it an hour early or late, bisected to the millisecond. The planner
 * (./due-time.ts) and the send path (lib/jobs/policy.ts) both use it.
 */
export type QuietWindow = { startMinute: number; endMinute: number };

export function parseQuietHours(text: string): QuietWindow {
  const match = /^(\d{2}):(\d{2})-(\d{2}):(\d{2})$/.exec(text);
  if (!match) throw new Error(`quiet hours "${text}" must look like 21:00-08:00`);
  const [, sh, sm, eh, em] = match.map(Number);
  return { startMinute: (sh ?? 0) * 60 + (sm ?? 0), endMinute: (eh ?? 0) * 60 + (em ?? 0) };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-GB', { timeZone, hourCycle: 'h23', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Seconds since local midnight in `timeZone`; an unknown zone falls back to UTC. */
export function localSecondOfDay(now: Date, timeZone: string): number {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = formatterFor(timeZone).formatToParts(now);
  } catch {
    parts = formatterFor('UTC').formatToParts(now);
  }
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  return get('hour') * 3600 + get('minute') * 60 + get('second');
}

function isValidZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Whether `now` falls inside the quiet window (local wall-clock time in `timeZone`). */
export function isQuietAt({ now, timeZone, window }: { now: Date; timeZone: string; window: QuietWindow }): boolean {
  if (window.startMinute === window.endMinute) return false;
  const second = localSecondOfDay(now, isValidZone(timeZone) ? timeZone : 'UTC');
  const start = window.startMinute * 60;
  const end = window.endMinute * 60;
  return start < end ? second >= start && second < end : second >= start || second < end;
}

/**
 * The wall-clock guess: seconds from the local time to the local end, added to `now`. On a DST
 * night it is an hour early (the clocks went back: still quiet) or an hour late (they went
 * forward: the end passed an hour before).
 */
function wallClockEnd(now: Date, timeZone: string, window: QuietWindow): Date {
  const second = localSecondOfDay(now, isValidZone(timeZone) ? timeZone : 'UTC');
  const untilEnd = (window.endMinute * 60 - second + 86_400) % 86_400;
  return new Date(now.getTime() - now.getMilliseconds() + untilEnd * 1000);
}

/** When the quiet window that contains `now` ends (its first quiet-free instant), or null when `now` is outside it. */
export function quietHoursEnd({ now, timeZone, window }: { now: Date; timeZone: string; window: QuietWindow }): Date | null {
  const quiet = (instant: Date) => isQuietAt({ now: instant, timeZone, window });
  if (!quiet(now)) return null;
  const guess = wallClockEnd(now, timeZone, window);
  // The ordinary night: the guess is free and the millisecond before it quiet.
  if (guess.getTime() > now.getTime() && !quiet(guess) && quiet(new Date(guess.getTime() - 1))) return guess;
  // A DST night. Walk guesses forward until one is quiet-free (at most a day or two of them)…
  let candidate = guess.getTime() > now.getTime() ? guess : new Date(now.getTime() + 60_000);
  for (let round = 0; round < 4 && quiet(candidate); round += 1) {
    const next = wallClockEnd(candidate, timeZone, window);
    candidate = next.getTime() > candidate.getTime() ? next : new Date(candidate.getTime() + 60_000);
  }
  // (Unreachable for a window shorter than a day; a still-quiet instant only makes the caller ask again.)
  if (quiet(candidate)) return candidate;
  // …then, between a quiet instant and a free one the quiet stretch is one piece: bisect its end.
  let quietMs = now.getTime();
  let freeMs = candidate.getTime();
  while (freeMs - quietMs > 1) {
    const middle = Math.floor((quietMs + freeMs) / 2);
    if (quiet(new Date(middle))) quietMs = middle;
    else freeMs = middle;
  }
  return new Date(freeMs);
}
