import type { z, ZodType } from 'zod';
import type { Db } from '@/db/client';
import { getDb } from '@/lib/process-db';
import { missingScope, recordApiTokenUse, verifyApiToken } from '@/lib/auth/api-tokens';
import { createLogger } from '@/lib/log';
import { SpanKind, withSpan } from '@/lib/telemetry/tracing';
import { parseInput, readJson, readQuery } from './body';
import type { ProducerContract } from './contract';
import { refuse, type Result } from './refusal';
import { producerOk, producerRefusal } from './wire';

const log = createLogger('producer-api');

const unauthorizedDetail = {
  missing: 'send Authorization: Bearer <token>',
  malformed: 'the bearer token is not a notice-ledger API token',
  unknown: 'the bearer token is not known',
  revoked: 'the bearer token has been revoked',
  expired: 'the bearer token has expired; create a new one (console Tokens page or `npm run ledger -- tokens create`)',
} as const;

/** What a producer handler answers: the status is its own (201 created / 200 seen before). */
export type ProducerAnswer<O extends ZodType> = { status: 200 | 201; body: z.input<O> };

export type ProducerHandlerContext<P extends ZodType, B extends ZodType> = { db: Db; request: Request; actor: string; params: z.output<P>; body: z.output<B> };

export type ProducerRouteHandler = ((request: Request, context?: { params?: Promise<Record<string, string | string[]> | undefined> }) => Promise<Response>) & {
  contract: ProducerContract;
};

/**
 * A producer API handler from its contract: the bearer token (only its hash is stored) and
 * the scope the contract names, the path parameters, the JSON body, then the handler. A refused request writes nothing — not even
 * the token's last_used_at, which is recorded only after a 2xx.
 *
 * Next 16 under `next start` hands a route without dynamic segments a context whose `params`
 * is undefined, not a promise of {}: every producer request answered 500 until this was read
 * that way, while tests that hand-made the context passed.
 */
export function producerRoute<P extends ZodType, B extends ZodType, O extends ZodType>(
  contract: ProducerContract<P, B, O>,
  handler: (context: ProducerHandlerContext<P, B>) => Promise<Result<ProducerAnswer<O>>>,
): ProducerRouteHandler {
  type RouteContext = { params?: Promise<Record<string, string | string[]> | undefined> };
  // The producer's span: scheduling runs inside it and stores its traceparent on the job, the
  // wake-up links to it (ARCHITECTURE.md, "Traces"). Under `next start` it is a child of Next's own.
  const route = (request: Request, context?: RouteContext): Promise<Response> =>
    withSpan(
      'producer.request',
      { 'http.request.method': request.method, 'http.route': contract.path },
      async (span) => {
        const response = await answer(request, context);
        span.setAttribute('http.response.status_code', response.status);
        return response;
      },
      { kind: SpanKind.SERVER },
    );
  const answer = async (request: Request, context?: RouteContext): Promise<Response> => {
    try {
      const db = getDb();
      const check = await verifyApiToken(db, { authorization: request.headers.get('authorization') });
      if (!check.ok)
        return producerRefusal(
          refuse('unauthenticated', unauthorizedDetail[check.reason], { headers: { 'www-authenticate': 'Bearer realm="notice-ledger"' } }).refusal,
        );
      const missing = missingScope(check.token, contract.scope);
      if (missing)
        return producerRefusal(refuse('forbidden', `this token lacks the scope ${missing}; create a token that holds it`, { code: 'missing_scope' }).refusal);
      const raw = (await context?.params) ?? {};
      const params = parseInput(
        Object.fromEntries(Object.entries(raw).map(([key, value]) => [key, Array.isArray(value) ? value.join('/') : value])),
        contract.params,
      );
      if (!params.ok) return producerRefusal(params.refusal);
      // A GET reads its `body` schema from the query string (as a console GET reads its input).
      const body =
        contract.method === 'GET'
          ? readQuery(request, contract.body)
          : await readJson(request, contract.body, { optional: contract.bodyOptional, limitBytes: contract.bodyLimitBytes });
      if (!body.ok) return producerRefusal(body.refusal);
      const result = await handler({ db, request, actor: check.actor, params: params.data, body: body.data });
      if (!result.ok) return producerRefusal(result.refusal);
      await recordApiTokenUse(db, { id: check.token.id });
      return producerOk(result.data.body, result.data.status);
    } catch (error) {
      log.error({ err: error instanceof Error ? error.message : String(error), path: contract.path }, 'producer API request failed');
      return producerRefusal({ kind: 'internal', message: 'the request could not be completed; it is safe to retry' });
    }
  };
  return Object.assign(route, { contract });
}
