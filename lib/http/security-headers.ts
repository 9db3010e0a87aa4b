/**
 * The headers every console page carries (set by proxy.ts, which runs before the page renders).
 * The API's static set is in next.config.mjs (`headers()`): proxy.ts must not run for /api/,
 * since Next buffers a request body for the proxy (10 MB cap) and would cut off replay uploads
 * and webhook batches. The recipient pages (/r/, /api/recipient/) set their own stricter set
 * (lib/http/recipient-route.ts: `no-referrer`, the token is in the URL).
 */

export type PageHeaderSettings = {
  /**
   * PUBLIC_BASE_URL, else NEXTAUTH_URL: HSTS only when it is https (http is allowed on loopback
   * only). A year, and not includeSubDomains: the operator's other hosts are not ours to pin.
   */
  baseUrl: string | undefined;
  /** `next dev` evaluates modules with eval() for fast refresh; a production server never does. */
  development: boolean;
};

/** 128 random bits, base64: a fresh one per response, so a script injected into one page cannot guess it. */
export function createNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

/**
 * Scripts only with this response's nonce (Next puts it on its own script tags when it reads it
 * from the request's Content-Security-Policy header) and what they load ('strict-dynamic').
 * Styles stay 'unsafe-inline': React's style attributes, and the email HTML the Templates page
 * shows in a sandbox="" srcdoc iframe (which inherits this policy) is all inline CSS; a style
 * cannot run code. The sandbox keeps that HTML from scripts and from our origin either way.
 */
export function pageContentSecurityPolicy({ nonce, development }: { nonce: string; development: boolean }): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function pageSecurityHeaders({ nonce, settings }: { nonce: string; settings: PageHeaderSettings }): Record<string, string> {
  const headers: Record<string, string> = {
    'content-security-policy': pageContentSecurityPolicy({ nonce, development: settings.development }),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'x-frame-options': 'DENY',
  };
  if (settings.baseUrl && URL.parse(settings.baseUrl)?.protocol === 'https:') headers['strict-transport-security'] = 'max-age=31536000';
  return headers;
}
