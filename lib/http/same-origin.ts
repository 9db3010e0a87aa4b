import { refuse, type Result } from './refusal';

/**
 * What makes a console mutation the console's own: a JSON body (a cross-site HTML form can only
 * send text/plain, urlencoded or multipart without a CORS preflight) sent from the console's own
 * origin. Browsers send Origin on every POST/PUT/DELETE fetch and Sec-Fetch-Site on every
 * request since 2020 (Chrome 76, Firefox 90, Safari 16.4); SameSite=Lax alone lets a sibling
 * subdomain (same site, other origin) through, which is why the origin is compared, not the site.
 */

export type OriginSettings = {
  /** PUBLIC_BASE_URL and NEXTAUTH_URL: where users reach the console, whatever Host a proxy forwards. */
  configuredUrls: readonly (string | undefined)[];
  /** TRUSTED_PROXY_HOPS: with proxies in front, X-Forwarded-Host / -Proto say what the browser asked for. */
  trustedHops: number;
};

function originOf(text: string | null | undefined): string | null {
  if (!text) return null;
  const url = URL.parse(text);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return null;
  return url.origin;
}

/** The entry the outermost trusted proxy wrote, as lib/auth/client-address.ts reads X-Forwarded-For. */
function forwardedEntry(value: string | null, trustedHops: number): string | null {
  if (!value) return null;
  return value.split(',').at(-trustedHops)?.trim() || null;
}

/**
 * The origins a request may come from: the configured URLs, and the one the request itself was
 * sent to — its Host (a browser page cannot forge Host and Origin together: a DNS-rebound host
 * matches itself but carries no console cookie), or behind TRUSTED_PROXY_HOPS what the outermost
 * proxy forwarded.
 */
export function ownOrigins(request: Request, { configuredUrls, trustedHops }: OriginSettings): Set<string> {
  const origins = new Set<string>();
  for (const url of configuredUrls) {
    const origin = originOf(url);
    if (origin) origins.add(origin);
  }
  const url = new URL(request.url);
  const forwardedHost = trustedHops > 0 ? forwardedEntry(request.headers.get('x-forwarded-host'), trustedHops) : null;
  if (forwardedHost) {
    const proto = forwardedEntry(request.headers.get('x-forwarded-proto'), trustedHops) ?? url.protocol.replace(':', '');
    const origin = originOf(`${proto}://${forwardedHost}`);
    if (origin) origins.add(origin);
  } else {
    const origin = originOf(`${url.protocol}//${request.headers.get('host') ?? url.host}`);
    if (origin) origins.add(origin);
  }
  return origins;
}

/** The media type without its parameters (charset), lower case. */
function mediaTypeOf(value: string | null): string {
  return (value ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * A console POST/PUT is accepted only as JSON, with an Origin among `ownOrigins`, and not marked
 * by the browser as cross-site or same-site (Sec-Fetch-Site, when sent). Every refusal is a 403
 * before the body is read. A route whose body is another type (a streamed CSV upload) names it in
 * `mediaTypes`: never text/plain, urlencoded or multipart, which a cross-site form can send
 * without a CORS preflight.
 */
export function checkConsoleMutation(
  request: Request,
  settings: OriginSettings,
  { mediaTypes = ['application/json'] }: { mediaTypes?: readonly string[] } = {},
): Result<null> {
  const fetchSite = request.headers.get('sec-fetch-site');
  if (fetchSite !== null && fetchSite !== 'same-origin' && fetchSite !== 'none')
    return refuse('forbidden', `The console accepts changes only from its own pages (Sec-Fetch-Site: ${fetchSite.slice(0, 40)}).`, {
      code: 'cross_origin',
    });
  const origin = request.headers.get('origin');
  if (origin === null)
    return refuse('forbidden', 'The console accepts changes only from its own pages: this request carries no Origin.', { code: 'cross_origin' });
  if (!ownOrigins(request, settings).has(origin))
    return refuse('forbidden', 'The console accepts changes only from its own pages: this request comes from another origin.', { code: 'cross_origin' });
  const formTypes = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data'];
  const type = mediaTypeOf(request.headers.get('content-type'));
  if (!mediaTypes.includes(type) || formTypes.includes(type))
    return refuse('forbidden', `The console accepts this change only as Content-Type: ${mediaTypes.join(' or ')}.`, { code: 'not_json' });
  return { ok: true, data: null };
}

/**
 * Where the sign-in page may send a visitor: a path on this console, nothing else. Parsed as the
 * browser will read it (a backslash is a slash, so `/\evil.example` is `//evil.example`), and
 * refused when it leaves the origin or starts with `//` once normalised.
 */
export function sameOriginPath(value: unknown): string {
  // A repeated query name arrives as an array.
  if (typeof value !== 'string' || !value.startsWith('/')) return '/';
  const base = 'http://console.invalid';
  const url = URL.parse(value, base);
  if (!url || url.origin !== base || url.pathname.startsWith('//')) return '/';
  return `${url.pathname}${url.search}${url.hash}`;
}
