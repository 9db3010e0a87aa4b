import type { Session } from 'next-auth';
import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import { getDb } from '@/db/client';
import { decide, type GuardError } from '@/lib/auth/guard';
import type { Permission } from '@/lib/auth/permissions';
import { sessionFromCookieHeader } from '@/lib/auth/session';

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
export async function requirePage(permission: Permission, from: string): Promise<{ ok: true; session: Session } | { ok: false; session: Session; error: GuardError }> {
  const session = await currentSession();
  const decision = decide(session, permission);
  if (decision.ok) return { ok: true, session: decision.value.session };
  if (!session) redirect(`/signin?callbackUrl=${encodeURIComponent(from)}`);
  return { ok: false, session, error: decision.error };
}
