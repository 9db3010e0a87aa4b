/**
 * Whether a PostgreSQL URL names a server on this machine: loopback, a Unix socket directory, or
 * no host at all (the default socket). A URL that does not parse is not local. What a tool that creates, drops or seeds a database
 * with published passwords checks before it connects (tests, benchmarks, `npm run demo`).
 */
export function databaseHostOf(url: string): string | null {
  const parsed = URL.parse(url);
  if (!parsed) return null;
  // ?host=/run/postgresql (or ?host=db.example.com) is where the driver connects, whatever the authority says.
  return parsed.searchParams.get('host') ?? parsed.hostname;
}

export function isLocalDatabaseUrl(url: string): boolean {
  const host = databaseHostOf(url);
  if (host === null) return false;
  return ['localhost', '127.0.0.1', '[::1]', '::1', ''].includes(host) || host.startsWith('127.') || host.startsWith('/');
}
