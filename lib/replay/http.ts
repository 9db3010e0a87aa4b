import type { Session } from 'next-auth';
import { jsonError } from '../auth/guard';
import type { Actor, Refusal } from './transitions';

/** The route handlers' two shared steps: who is acting, and how a refusal reads over HTTP. */

export function actorOf(session: Session): Actor {
  return { id: session.user.id, email: session.user.email, role: session.user.role };
}

export function refusalResponse(refusal: Refusal): Response {
  if (refusal.code === 'conflict') return jsonError(409, { code: 'conflict', message: refusal.message });
  return jsonError(403, { code: 'forbidden', message: refusal.message });
}

export function csvResponse(body: string, filename: string): Response {
  return new Response(body, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
      'cache-control': 'no-store',
    },
  });
}
