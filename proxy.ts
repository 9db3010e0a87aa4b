import { NextResponse, type NextRequest } from 'next/server';

/**
 * Redirects a visitor without a session cookie to the sign-in page. It never authorizes:
 * a forged or expired cookie passes here and is refused by lib/http/console-route.ts (routes) or
 * app/_server/auth.ts (pages), which check the signature, the user and the permission map.
 */
export function proxy(request: NextRequest): NextResponse {
  const hasSessionCookie = request.cookies.getAll().some((cookie) => cookie.name.includes('next-auth.session-token'));
  if (hasSessionCookie) return NextResponse.next();
  const url = request.nextUrl.clone();
  url.pathname = '/signin';
  url.search = `?callbackUrl=${encodeURIComponent(request.nextUrl.pathname + request.nextUrl.search)}`;
  return NextResponse.redirect(url);
}

export const config = {
  // Pages only: API routes answer 401 themselves, assets and the sign-in page stay public, and so does
  // the recipient page (/r/<token>: the signed link is its only credential, lib/http/recipient-route.ts).
  matcher: ['/((?!api/|_next/|signin|favicon.ico|r/).*)'],
};
