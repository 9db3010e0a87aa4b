/**
 * Whether text can name a row by its uuid primary key. Checked before a query: PostgreSQL
 * refuses anything else with an error (a 500 for a malformed id in a URL), and a looser
 * pattern such as `[0-9a-f-]{36}` lets 36 dashes through to that error.
 */
export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}
