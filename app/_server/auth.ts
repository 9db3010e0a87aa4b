import type { Session } from 'next-auth';
import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import { getDb } from '@/lib/process-db';
import type { Permission } from '@/lib/auth/permissions';
import { sessionFromCookieHeader } from '@/lib/auth/session';
import { authorize } from '@/lib/http/console-route';
import type { Refusal } from '@/lib/http/refusal';

export async function currentSession(): Promise<Session | null> {
  const store = await cookies();
  const header = store
    .getAll()
    .map((cookie) => `${cookie.name}=${encodeURIComponent(cookie.value)}`)
    .join('; ');
  return sessionFromCookieHeader(getDb(), header);
}

/**
 * Pages call this first: no session → the sign-in page; a role without the permission gets a
 * refusal the page renders (the data routes refuse on their own too).
 */
export async function requirePage(
  permission: Permission,
  from: string,
): Promise<{ ok: true; session: Session } | { ok: false; session: Session; refusal: Refusal }> {
  const session = await currentSession();
  const caller = authorize(session, permission);
  if (caller.ok) return { ok: true, session: caller.data.session };
  if (!session) redirect(`/signin?callbackUrl=${encodeURIComponent(from)}`);
  return { ok: false, session, refusal: caller.refusal };
}
