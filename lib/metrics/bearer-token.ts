import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * `Authorization: Bearer <expected>`, compared in constant time (both sides hashed first, so
 * neither the length nor a prefix of the token leaks through timing). The worker's /metrics
 * with WORKER_METRICS_TOKEN.
 */
export function bearerTokenMatches(authorization: string | undefined, expected: string): boolean {
  const match = /^Bearer +(\S+)$/.exec(authorization ?? '');
  if (!match?.[1]) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]), digest(expected));
}
