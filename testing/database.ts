/**
 * Tests create and drop databases: refuse anything but a server on this machine, so a
 * stray DATABASE_URL pointing at staging can never be touched by `npm test`.
 */
export function assertLocalDatabaseUrl(url: string): void {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    throw new Error('DATABASE_URL is not a valid URL');
  }
  const local = ['localhost', '127.0.0.1', '[::1]', '::1', ''];
  if (!local.includes(host) && !host.startsWith('127.') && !host.startsWith('/')) {
    throw new Error(`Refusing to run tests against non-local database host "${host}". Unset DATABASE_URL to use the embedded server.`);
  }
}

/** The same server, another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
