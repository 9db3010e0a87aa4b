import type { JWT } from 'next-auth/jwt';
import type { DbOrTx } from '@/db/client';
import { endSessions, startSession } from '@/db/queries/sessions';
import { config } from '@/lib/config';

/** The claims a new session's token carries (lib/auth/session.ts checks them on every request). */
export async function beginSession(db: DbOrTx, userId: string, now = new Date()): Promise<{ sv: number; authAt: number } | Record<string, never>> {
  const sv = await startSession(db, { userId, now, idleMs: config().SESSION_IDLE_TIMEOUT });
  return sv === null ? {} : { sv, authAt: Math.floor(now.getTime() / 1000) };
}

/**
 * Sign-out ends every session of the user, the copied ones too: a cookie taken before is
 * refused after. Only a session that was still live can do it (an ended one changes nothing).
 */
export async function endSessionsOnSignOut(db: DbOrTx, token: JWT | null): Promise<void> {
  if (!token?.sub || typeof token.sv !== 'number') return;
  await endSessions(db, { userId: token.sub, ifVersion: token.sv });
}
