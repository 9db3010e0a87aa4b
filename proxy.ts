import { NextResponse, type NextRequest } from 'next/server';
import { pageHeaderSettings } from '@/lib/config';
import { createNonce, pageSecurityHeaders } from '@/lib/http/security-headers';

/**
 * Every console page: its security headers with a fresh script nonce (lib/http/security-headers.ts;
 * Next reads the nonce from the request's Content-Security-Policy header and puts it on its own
 * scripts), and a redirect to the sign-in page for a visitor without a session cookie. It never
 * authorizes: a forged or expired cookie passes here and is refused by lib/http/console-route.ts
 * (routes) or app/_server/auth.ts (pages), which check the signature, the user and the permission map.
 */
export function proxy(request: NextRequest): NextResponse {
  const nonce = createNonce();
  const headers = pageSecurityHeaders({ nonce, settings: pageHeaderSettings() });
  const path = request.nextUrl.pathname;
  const isSignIn = path === '/signin' || path.startsWith('/signin/');
  const hasSessionCookie = request.cookies.getAll().some((cookie) => cookie.name.includes('next-auth.session-token'));
  let response: NextResponse;
  if (isSignIn || hasSessionCookie) {
    const forwarded = new Headers(request.headers);
    forwarded.set('content-security-policy', headers['content-security-policy'] ?? '');
    forwarded.set('x-nonce', nonce);
    response = NextResponse.next({ request: { headers: forwarded } });
  } else {
    const url = request.nextUrl.clone();
    url.pathname = '/signin';
    url.search = `?callbackUrl=${encodeURIComponent(request.nextUrl.pathname + request.nextUrl.search)}`;
    response = NextResponse.redirect(url);
  }
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

export const config = {
  // Pages only. API routes answer 401 themselves and get their headers from next.config.mjs (a
  // proxy in front of them would buffer their bodies); assets stay public, and so does the recipient
  // page (/r/<token>: the signed link is its only credential, lib/http/recipient-route.ts) and the
  // evidence signing keys (/.well-known/notice-ledger/keys.json).
  matcher: ['/((?!api/|_next/|favicon.ico|r/|\\.well-known/).*)'],
};
