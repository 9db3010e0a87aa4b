/** Display helpers shared by server and client renders; UTC everywhere so both render the same text. */

export function formatUtc(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '—';
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function formatTimeOfDay(iso: string): string {
  return new Date(iso).toISOString().slice(11, 16);
}

/** 95 s → "1 min 35 s"; 26 h → "1 d 2 h": two units, enough to act on. */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  const s = Math.floor(abs / 1000);
  const units: [number, string][] = [
    [86_400, 'd'],
    [3_600, 'h'],
    [60, 'min'],
    [1, 's'],
  ];
  const parts: string[] = [];
  let rest = s;
  for (const [size, label] of units) {
    if (rest >= size || (parts.length === 0 && size === 1)) {
      parts.push(`${Math.floor(rest / size)} ${label}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

export function formatCount(value: number): string {
  return new Intl.NumberFormat('en-US').format(value);
}

export function shortKey(key: string): string {
  return key.length > 16 ? `${key.slice(0, 12)}…` : key;
}
