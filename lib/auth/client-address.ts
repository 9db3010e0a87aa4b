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

/**
 * What the per-address limit counts by. IPv4: the address. IPv6: its /64 network, because a
 * single subscriber (any VPS, most home lines) holds a whole /64 and could otherwise rotate
 * through addresses to get around the limit.
 */
export function throttleKeyOf(address: string): string {
  if (isIP(address) !== 6) return address;
  const groups = ipv6Groups(address);
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, an IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const split = (part: string) => (part === '' ? [] : part.split(':'));
  const left = split(head);
  const right = rest === undefined ? [] : split(rest);
  const zeros = rest === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16));
}
