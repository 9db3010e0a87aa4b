import type { Session } from 'next-auth';
import type { ZodType } from 'zod';
import type { DbOrTx } from '@/db/client';
import { getDb } from '@/db/client';
import { can, type Permission } from './permissions';
import { sessionFromCookieHeader } from './session';

export type GuardError = { code: 'unauthenticated' | 'forbidden' | 'invalid_input' | 'not_found' | 'conflict'; message: string };
/** What every console mutation answers: typed, so a client never parses prose. */
export type ActionResult<T> = { ok: true; data: T } | { ok: false; error: GuardError };

export type Authorized = { session: Session; actor: string };

export type Decision = { ok: true; value: Authorized } | { ok: false; status: 401 | 403; error: GuardError };

export function decide(session: Session | null, permission: Permission): Decision {
  if (!session) return { ok: false, status: 401, error: { code: 'unauthenticated', message: 'Sign in first.' } };
  if (!can(session.user.role, permission)) {
    return { ok: false, status: 403, error: { code: 'forbidden', message: `Your role (${session.user.role}) may not ${permission}.` } };
  }
  return { ok: true, value: { session, actor: session.user.email } };
}

export function jsonError(status: number, error: GuardError): Response {
  const body: ActionResult<never> = { ok: false, error };
  return Response.json(body, { status, headers: { 'cache-control': 'no-store' } });
}

export function jsonOk<T>(data: T, status = 200): Response {
  const body: ActionResult<T> = { ok: true, data };
  return Response.json(body, { status, headers: { 'cache-control': 'no-store' } });
}

export type HandlerContext = Authorized & { request: Request; db: DbOrTx };

/**
 * The one wrapper on the first line of every console route handler: 401 without a session,
 * 403 for a role the permission map does not list, otherwise the handler runs.
 */
export function guarded(permission: Permission, handler: (context: HandlerContext) => Promise<Response>): (request: Request) => Promise<Response> {
  return async (request) => {
    const db = getDb();
    const decision = decide(await sessionFromCookieHeader(db, request.headers.get('cookie')), permission);
    if (!decision.ok) return jsonError(decision.status, decision.error);
    return handler({ ...decision.value, request, db });
  };
}

/** Parses a JSON body or query object; a bad one is a 400 that changes nothing. */
export async function parseBody<T>(request: Request, schema: ZodType<T>): Promise<{ ok: true; data: T } | { ok: false; response: Response }> {
  let raw: unknown;
  try {
    raw = await request.json();
  } catch {
    return { ok: false, response: jsonError(400, { code: 'invalid_input', message: 'The body must be JSON.' }) };
  }
  return parseValue(raw, schema);
}

export function parseQuery<T>(request: Request, schema: ZodType<T>): { ok: true; data: T } | { ok: false; response: Response } {
  return parseValue(Object.fromEntries(new URL(request.url).searchParams), schema);
}

function parseValue<T>(raw: unknown, schema: ZodType<T>): { ok: true; data: T } | { ok: false; response: Response } {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, data: parsed.data };
  const message = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ');
  return { ok: false, response: jsonError(400, { code: 'invalid_input', message }) };
}
