import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';

/**
 * Where a webhook may go: https only in production; never to a private, loopback, link-local or
 * otherwise non-public address unless WEBHOOK_ALLOWED_PRIVATE names the host, the address or its
 * range. Checked when the endpoint is saved and again at every delivery, on the very address the
 * connection uses (`guardedLookup`), so a name that later resolves inside the network is refused.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

export type AllowList = { hosts: Set<string>; ranges: BlockList };

export function parseAllowList(text: string): AllowList {
  const hosts = new Set<string>();
  const ranges = new BlockList();
  for (const entry of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address ?? '');
    if (address && family !== 0) {
      if (prefix === undefined) ranges.addAddress(address, family === 6 ? 'ipv6' : 'ipv4');
      else ranges.addSubnet(address, Number(prefix), family === 6 ? 'ipv6' : 'ipv4');
    } else hosts.add(entry.toLowerCase());
  }
  return { hosts, ranges };
}

function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return { address: mapped[1], family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** Whether an address may be connected to for `host`. */
export function addressAllowed(address: string, host: string, allow: AllowList): boolean {
  const a = unmapped(address);
  if (!blocked.check(a.address, a.family)) return true;
  return allow.hosts.has(host.toLowerCase()) || allow.ranges.check(a.address, a.family);
}

export type UrlProblem = { field: 'url'; message: string };

/** The URL's own rules (scheme, credentials, host), before any DNS. */
export function checkWebhookUrl(text: string, { production, allow }: { production: boolean; allow: AllowList }): UrlProblem | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { field: 'url', message: 'is not a URL' };
  }
  if (url.protocol !== 'https:' && (production || url.protocol !== 'http:'))
    return { field: 'url', message: production ? 'must be https' : 'must be http or https' };
  if (url.username || url.password) return { field: 'url', message: 'must not carry credentials' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !addressAllowed(host, host, allow))
    return { field: 'url', message: `${host} is a private, loopback or link-local address (WEBHOOK_ALLOWED_PRIVATE)` };
  return null;
}

/** Resolves the URL's host and refuses it when any address is not allowed (at save). */
export async function resolveWebhookHost(text: string, allow: AllowList): Promise<UrlProblem | null> {
  const host = new URL(text).hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host)
    ? [host]
    : await new Promise<string[] | null>((resolve) =>
        dnsLookup(host, { all: true }, (error, found: LookupAddress[]) => resolve(error ? null : found.map((f) => f.address))),
      );
  if (!addresses || addresses.length === 0) return { field: 'url', message: `${host} does not resolve` };
  const refused = addresses.find((address) => !addressAllowed(address, host, allow));
  return refused ? { field: 'url', message: `${host} resolves to ${refused}, a private, loopback or link-local address (WEBHOOK_ALLOWED_PRIVATE)` } : null;
}

export class RefusedAddressError extends Error {
  constructor(host: string, address: string) {
    super(`${host} resolved to ${address}, which is not allowed`);
    this.name = 'RefusedAddressError';
  }
}

/** A `lookup` for http(s).request that refuses a disallowed address: the check is on the address connected to. */
export function guardedLookup(allow: AllowList) {
  return (hostname: string, options: object, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, found: LookupAddress[]) => {
      if (error) return callback(error, []);
      const refused = found.find((f) => !addressAllowed(f.address, hostname, allow));
      if (refused) return callback(new RefusedAddressError(hostname, refused.address), []);
      const all = (options as { all?: boolean }).all;
      if (all) return callback(null, found);
      const first = found[0];
      if (!first) return callback(new Error(`${hostname} does not resolve`), []);
      callback(null, first.address, first.family);
    });
  };
}
