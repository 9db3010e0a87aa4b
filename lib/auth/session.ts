import type { Session } from 'next-auth';
import { decode } from 'next-auth/jwt';
import type { DbOrTx } from '@/db/client';
import { findUserById } from '@/db/queries/users';
import { config } from '@/lib/config';
import { isRole } from './roles';

export const SESSION_MAX_AGE_S = 12 * 60 * 60;
const COOKIE_NAMES = ['__Secure-next-auth.session-token', 'next-auth.session-token'] as const;

/** The console refuses to run without its own signing secret; there is no default. */
export function consoleSecret(): string {
  const secret = config().NEXTAUTH_SECRET;
  if (!secret) throw new Error('NEXTAUTH_SECRET is not set: the console needs it to sign sessions (openssl rand -hex 32)');
  return secret;
}

export function parseCookieHeader(header: string | null): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index <= 0) continue;
    const name = part.slice(0, index).trim();
    const value = part.slice(index + 1).trim();
    try {
      cookies.set(name, decodeURIComponent(value));
    } catch {
      cookies.set(name, value);
    }
  }
  return cookies;
}

/** next-auth splits big tokens into `name.0`, `name.1`…; ours are small but read both forms. */
function sessionToken(cookies: Map<string, string>): string | null {
  for (const name of COOKIE_NAMES) {
    const whole = cookies.get(name);
    if (whole) return whole;
    const chunks: string[] = [];
    for (let index = 0; cookies.has(`${name}.${index}`); index += 1) chunks.push(cookies.get(`${name}.${index}`) ?? '');
    if (chunks.length > 0) return chunks.join('');
  }
  return null;
}

/**
 * The session for a request, from its next-auth JWT cookie, re-checked against the users
 * table: a disabled user or a changed role takes effect on the next request, not when the
 * 12-hour token expires. Null when there is no valid session.
 */
export async function sessionFromCookieHeader(db: DbOrTx, cookieHeader: string | null): Promise<Session | null> {
  const token = sessionToken(parseCookieHeader(cookieHeader));
  if (!token) return null;
  let payload: Awaited<ReturnType<typeof decode>>;
  try {
    payload = await decode({ token, secret: consoleSecret() });
  } catch {
    return null;
  }
  const userId = payload?.sub;
  if (!payload || typeof userId !== 'string') return null;
  const user = await findUserById(db, { id: userId });
  if (!user || user.disabledAt || !isRole(user.role)) return null;
  const exp = typeof payload.exp === 'number' ? payload.exp : Math.floor(Date.now() / 1000) + SESSION_MAX_AGE_S;
  return {
    user: { id: user.id, email: user.email, name: user.name, role: user.role },
    expires: new Date(exp * 1000).toISOString(),
  };
}
