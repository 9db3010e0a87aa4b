import { isIP, isIPv4 } from 'node:net';

const IPV4_MAPPED = /^::ffff:(.+)$/i;

/**
 * The sign-in client's address, or null when no address can be trusted.
 *
 * Next sets X-Forwarded-For from the socket only when the request carries none, and route
 * handlers cannot see the socket, so every entry a client sends arrives untouched. Only the
 * entries our own proxies appended are believable: with `trustedHops` proxies in front, each
 * appending the address it was connected from, the entry `trustedHops` from the right was
 * written by the outermost one. Anything to its left is whatever the client sent.
 */
export function clientAddressOf({ forwardedFor, trustedHops }: { forwardedFor: string | null | undefined; trustedHops: number }): string | null {
  if (trustedHops <= 0 || !forwardedFor) return null;
  // Undefined when the header has fewer entries than we have proxies.
  const entry = forwardedFor.split(',').at(-trustedHops)?.trim();
  // A zone id ("fe80::1%eth0") is local to the proxy's host and unbounded in length.
  if (!entry || entry.includes('%') || isIP(entry) === 0) return null;
  const mapped = IPV4_MAPPED.exec(entry)?.[1];
  if (mapped && isIPv4(mapped)) return mapped;
  return entry.toLowerCase();
}
