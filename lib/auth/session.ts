import type { Session } from 'next-auth';
import { decode, type JWT } from 'next-auth/jwt';
import type { DbOrTx } from '@/db/client';
import { touchSession } from '@/db/queries/sessions';
import { findUserMfa } from '@/db/queries/mfa';
import { findUserById } from '@/db/queries/users';
import { config } from '@/lib/config';
import { mfaPendingFor, roleNeedsMfa } from './mfa';
import { isRole } from './roles';

/** The longest a session lives from its sign-in, however active (the token's `authAt`). */
export const SESSION_MAX_AGE_S = 12 * 60 * 60;
/** The activity clock moves at most this often per user: one write a minute, not one per request. */
const TOUCH_EVERY_MS = 60_000;
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
export async function sessionFromCookieHeader(db: DbOrTx, cookieHeader: string | null, now = new Date()): Promise<Session | null> {
  const token = sessionToken(parseCookieHeader(cookieHeader));
  if (!token) return null;
  let payload: JWT | null;
  try {
    payload = await decode({ token, secret: consoleSecret() });
  } catch {
    return null;
  }
  return payload ? liveSession(db, { token: payload, now }) : null;
}

/**
 * Whether a decoded session token still stands, and the session it grants. Every console
 * request comes through here (lib/http/console-route.ts for routes, app/_server/auth.ts for
 * pages, and next-auth's own /api/auth/session through the jwt callback), with the one user
 * lookup it always made: the session must carry the user's current `session_version`
 * (sign-out, a password change or reset, a role change and disabling raise it), be younger
 * than SESSION_MAX_AGE_S since its sign-in, and its user must have been active within
 * SESSION_IDLE_TIMEOUT. Activity is kept per user, to the minute, so the check costs at most
 * one small update a minute.
 */
export async function liveSession(db: DbOrTx, { token, now }: { token: JWT; now: Date }): Promise<Session | null> {
  const userId = token.sub;
  if (typeof userId !== 'string') return null;
  // Tokens issued before session versions existed carry neither claim: they count as version 0
  // and end at the user's first revocation; their own 12-hour expiry still holds.
  const version = typeof token.sv === 'number' ? token.sv : 0;
  if (typeof token.authAt === 'number' && now.getTime() - token.authAt * 1000 > SESSION_MAX_AGE_S * 1000) return null;
  const user = await findUserById(db, { id: userId });
  if (!user || user.disabledAt || !isRole(user.role) || user.sessionVersion !== version) return null;
  const idleMs = user.sessionSeenAt ? now.getTime() - user.sessionSeenAt.getTime() : Number.POSITIVE_INFINITY;
  const { SESSION_IDLE_TIMEOUT } = config();
  // Never seen: no sign-in since the column was added, so the token is one of those older ones.
  if (user.sessionSeenAt && idleMs > SESSION_IDLE_TIMEOUT) return null;
  if (user.sessionSeenAt && idleMs > TOUCH_EVERY_MS) await touchSession(db, { userId, version, now });
  const ends = Math.min(
    typeof token.authAt === 'number' ? token.authAt * 1000 + SESSION_MAX_AGE_S * 1000 : Number.POSITIVE_INFINITY,
    typeof token.exp === 'number' ? token.exp * 1000 : now.getTime() + SESSION_MAX_AGE_S * 1000,
    now.getTime() + SESSION_IDLE_TIMEOUT,
  );
  const { MFA_REQUIRED_ROLES } = config();
  const needsMfa = user.passwordHash !== null && roleNeedsMfa(user.role, MFA_REQUIRED_ROLES);
  const mfaPending =
    needsMfa && mfaPendingFor({ role: user.role, hasPassword: true, mfa: await findUserMfa(db, { userId }), requiredRoles: MFA_REQUIRED_ROLES });
  return {
    user: { id: user.id, email: user.email, name: user.name, role: user.role, ...(mfaPending ? { mfaPending } : {}) },
    expires: new Date(ends).toISOString(),
  };
}
