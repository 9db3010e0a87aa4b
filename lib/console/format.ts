/** Display helpers shared by server and client renders; UTC everywhere so both render the same text. */

export function formatUtc(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '—';
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** "2 Dec 10:14 UTC": a moment in a sentence (the lookup timeline's customer actions). */
export function formatShortUtc(date: Date): string {
  const month = new Intl.DateTimeFormat('en-GB', { month: 'short', timeZone: 'UTC' }).format(date);
  return `${date.getUTCDate()} ${month} ${date.toISOString().slice(11, 16)} UTC`;
}

/**
 * An instant as the recipient's wall clock, e.g. "2026-03-08 07:00 EST (America/New_York)".
 * Computed on the server (the lookup response carries it), so server and client render alike.
 */
export function formatInZone(iso: string | null | undefined, timeZone: string): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '—';
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
    }).formatToParts(date);
  } catch {
    return `${formatUtc(iso)} (unknown zone ${timeZone})`;
  }
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((part) => part.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')} ${get('timeZoneName')} (${timeZone})`;
}

export function formatTimeOfDay(iso: string): string {
  return new Date(iso).toISOString().slice(11, 16);
}

/** 95 s → "1 min 35 s"; 26 h → "1 d 2 h"; 15 min → "15 min": the largest unit and the next, enough to act on. */
export function formatDuration(ms: number): string {
  const s = Math.floor(Math.abs(ms) / 1000);
  const units: [number, string][] = [
    [86_400, 'd'],
    [3_600, 'h'],
    [60, 'min'],
    [1, 's'],
  ];
  const first = units.findIndex(([size]) => s >= size);
  if (first === -1) return '0 s';
  const [size, label] = units[first] ?? [1, 's'];
  const next = units[first + 1];
  if (!next) return `${s} ${label}`;
  const rest = Math.floor((s % size) / next[0]);
  return rest === 0 ? `${Math.floor(s / size)} ${label}` : `${Math.floor(s / size)} ${label} ${rest} ${next[1]}`;
}

export function formatCount(value: number): string {
  return new Intl.NumberFormat('en-US').format(value);
}

export function shortKey(key: string): string {
  return key.length > 16 ? `${key.slice(0, 12)}…` : key;
}

/** A setting's span in whole hours when it is one (24 h, not "1 d": how WINDOW_AT_RISK_WITHIN reads), else formatDuration. */
export function formatHours(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : formatDuration(ms);
}
