/**
 * drizzle's `execute` hands timestamptz back as PostgreSQL prints it
 * ("2026-11-29 02:07:30.123456+00"), while its query builder returns Dates. Raw console
 * queries convert through here so callers always get a Date.
 */
export function toDate(value: unknown): Date {
  if (value instanceof Date) return value;
  const text = String(value)
    .trim()
    .replace(' ', 'T')
    .replace(/([+-]\d\d)$/, '$1:00');
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw new Error(`not a timestamp: ${String(value).slice(0, 40)}`);
  return date;
}

export function toDateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : toDate(value);
}
