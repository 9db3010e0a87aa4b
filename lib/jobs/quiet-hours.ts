/**
 * Quiet hours are a local-time window in the recipient's time zone, e.g. "21:00-08:00"
 * (crossing midnight) or "12:00-13:00". The end is computed by walking forward in minutes
 * from the local wall-clock time; across a DST change the result can be an hour off, which
 * only moves a reminder within the window's edge and never past its deadline (the caller
 * compares the end with the deadline).
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

/** When the quiet window that contains `now` ends, or null when `now` is outside it. */
export function quietHoursEnd({ now, timeZone, window }: { now: Date; timeZone: string; window: QuietWindow }): Date | null {
  if (window.startMinute === window.endMinute) return null;
  const zone = isValidZone(timeZone) ? timeZone : 'UTC';
  const second = localSecondOfDay(now, zone);
  const start = window.startMinute * 60;
  const end = window.endMinute * 60;
  const inside = start < end ? second >= start && second < end : second >= start || second < end;
  if (!inside) return null;
  const untilEnd = (end - second + 86_400) % 86_400;
  return new Date(now.getTime() - now.getMilliseconds() + untilEnd * 1000);
}
