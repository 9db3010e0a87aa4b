import type { ZodType } from 'zod';
import { getDb, type Db } from '../../db/client';
import { recordApiTokenUse, verifyApiToken } from '../auth/api-tokens';
import type { OpenEvidenceResult, ResolveEvidenceResult } from '../jobs/evidence';
import type { CancelResult, ScheduleResult } from '../jobs/schedule';
import { createLogger } from '../log';
import type { JobRow } from '../../db/schema/jobs';

/**
 * HTTP glue for the producer API (`/api/v1`): bearer-token auth, JSON parsing and the
 * `{ error, details }` shape of every refusal. A refused request writes nothing — not even the
 * token's last_used_at, which is recorded only after a 2xx.
 */

const log = createLogger('producer-api');
const BODY_LIMIT_BYTES = 64 * 1024;

export type ProducerContext = { db: Db; request: Request; actor: string; params: Record<string, string> };
// Under `next start`, Next 16 hands a route without dynamic segments a context whose `params` is
// undefined (not a promise of {}): every read of it must allow that.
type RouteContext = { params?: Promise<Record<string, string | string[]> | undefined> };

export function apiError(status: number, error: string, details?: unknown, headers: Record<string, string> = {}): Response {
  return Response.json(details === undefined ? { error } : { error, details }, { status, headers: { 'cache-control': 'no-store', ...headers } });
}

function apiJson(status: number, body: unknown): Response {
  return Response.json(body, { status, headers: { 'cache-control': 'no-store' } });
}

const unauthorizedDetail = {
  missing: 'send Authorization: Bearer <token>',
  malformed: 'the bearer token is not a notice-ledger API token',
  unknown: 'the bearer token is not known',
  revoked: 'the bearer token has been revoked',
} as const;

export function producerRoute(handler: (context: ProducerContext) => Promise<Response>): (request: Request, context?: RouteContext) => Promise<Response> {
  return async (request, context) => {
    try {
      const db = getDb();
      const check = await verifyApiToken(db, { authorization: request.headers.get('authorization') });
      if (!check.ok) return apiError(401, 'unauthorized', unauthorizedDetail[check.reason], { 'www-authenticate': 'Bearer realm="notice-ledger"' });
      const raw = (await context?.params) ?? {};
      const params = Object.fromEntries(Object.entries(raw).map(([key, value]) => [key, Array.isArray(value) ? value.join('/') : value]));
      const response = await handler({ db, request, actor: check.actor, params });
      if (response.status < 300) await recordApiTokenUse(db, { id: check.token.id });
      return response;
    } catch (error) {
      log.error({ err: error instanceof Error ? error.message : String(error), path: new URL(request.url).pathname }, 'producer API request failed');
      return apiError(500, 'internal', 'the request could not be completed; it is safe to retry');
    }
  };
}

export type Parsed<T> = { ok: true; data: T } | { ok: false; response: Response };

/** Reads a JSON body; malformed JSON and schema failures are 400s that name the fields. */
export async function parseJsonBody<T>(request: Request, schema: ZodType<T>, { optional = false }: { optional?: boolean } = {}): Promise<Parsed<T>> {
  const text = await request.text();
  if (Buffer.byteLength(text, 'utf8') > BODY_LIMIT_BYTES) return { ok: false, response: apiError(413, 'body_too_large', `the body must be under ${BODY_LIMIT_BYTES} bytes`) };
  let raw: unknown = {};
  if (text.trim() === '') {
    if (!optional) return { ok: false, response: apiError(400, 'invalid_json', 'a JSON body is required') };
  } else {
    try {
      raw = JSON.parse(text);
    } catch {
      return { ok: false, response: apiError(400, 'invalid_json', 'the body is not valid JSON') };
    }
  }
  return parseValue(raw, schema);
}

export function parseValue<T>(raw: unknown, schema: ZodType<T>): Parsed<T> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, data: parsed.data };
  const details = parsed.error.issues.map((issue) => ({ path: issue.path.join('.') || '(body)', message: issue.message }));
  return { ok: false, response: apiError(400, 'invalid_request', details) };
}

function jobView(job: JobRow) {
  return {
    id: job.id,
    noticeKey: job.noticeKey,
    type: job.noticeType,
    revision: job.revision,
    state: job.state,
    dueAt: job.dueAt.toISOString(),
    deadlineAt: job.deadlineAt.toISOString(),
    source: job.source,
  };
}

export function scheduleResponse(result: ScheduleResult): Response {
  switch (result.kind) {
    case 'created':
      return apiJson(201, { ...jobView(result.job), created: true });
    case 'existing':
      return apiJson(200, { ...jobView(result.job), created: false });
    case 'conflict':
      return apiError(409, 'notice_conflict', { message: result.message, jobId: result.job.id, fields: result.fields });
    case 'invalid':
      return apiError(400, 'invalid_request', { message: result.message, fields: result.fields });
  }
}

export function cancelResponse(result: CancelResult): Response {
  if (result.kind === 'not_found') return apiError(404, 'not_found', 'no reminder job with that id');
  if (result.kind === 'conflict') return apiError(409, 'not_pending', { message: result.message, state: result.job.state });
  return apiJson(200, jobView(result.job));
}

function evidenceView(row: OpenEvidenceResult['evidence']) {
  return { ref: row.ref, kind: row.kind, state: row.state, openedAt: row.openedAt.toISOString(), resolvedAt: row.resolvedAt?.toISOString() ?? null };
}

export function openEvidenceResponse(result: OpenEvidenceResult): Response {
  if (result.kind === 'conflict') return apiError(409, 'evidence_conflict', { message: result.message, state: result.evidence.state });
  return apiJson(result.kind === 'created' ? 201 : 200, { ...evidenceView(result.evidence), created: result.kind === 'created' });
}

export function resolveEvidenceResponse(result: ResolveEvidenceResult): Response {
  return apiJson(200, { ...evidenceView(result.evidence), alreadyResolved: result.kind === 'already_resolved', suppressedJobIds: result.suppressedJobIds });
}
