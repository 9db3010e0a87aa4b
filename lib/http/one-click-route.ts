import type { z, ZodType } from 'zod';
import type { Db } from '@/db/client';
import { getDb } from '@/lib/process-db';
import { createLogger } from '@/lib/log';
import { parseInput } from './body';
import type { OneClickContract } from './contract';

const log = createLogger('recipient-link');

/** What a one-click handler answers: a status and a small self-contained HTML page. */
export type OneClickAnswer = { status: 200 | 400 | 404 | 410 | 413 | 415 | 429; html: string; headers?: Record<string, string> };

export type OneClickRouteHandler = ((request: Request, context?: { params?: Promise<Record<string, string | string[]> | undefined> }) => Promise<Response>) & {
  contract: OneClickContract;
};

/**
 * A recipient link's handler from its contract: no session is read and no cookie is set (RFC
 * 8058: the POST carries no context), the path parameters through the contract, then the
 * handler. Every answer is HTML, never cached, never framed, and tells search engines to keep
 * out; an error is logged by path only (never the token) and answered 503 "try again".
 */
export function oneClickRoute<P extends ZodType, O extends ZodType>(
  contract: OneClickContract<P, O>,
  handler: (context: { db: Db; request: Request; params: z.output<P> }) => Promise<OneClickAnswer>,
  invalid: (message: string) => string,
): OneClickRouteHandler {
  const route = async (request: Request, context?: { params?: Promise<Record<string, string | string[]> | undefined> }): Promise<Response> => {
    try {
      const raw = (await context?.params) ?? {};
      const params = parseInput(
        Object.fromEntries(Object.entries(raw).map(([key, value]) => [key, Array.isArray(value) ? value.join('/') : value])),
        contract.params,
      );
      const answer = params.ok ? await handler({ db: getDb(), request, params: params.data }) : { status: 400 as const, html: invalid(params.refusal.message) };
      return htmlResponse(answer);
    } catch (error) {
      log.error({ err: error instanceof Error ? error.message : String(error), path: contract.path }, 'recipient link request failed');
      return htmlResponse({ status: 200, html: '' }, 503);
    }
  };
  return Object.assign(route, { contract });
}

function htmlResponse(answer: OneClickAnswer, overrideStatus?: number): Response {
  const body =
    overrideStatus === 503 ? '<!doctype html><title>Try again</title><p>We could not complete this just now. Please try again in a minute.</p>' : answer.html;
  return new Response(body, {
    status: overrideStatus ?? answer.status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-robots-tag': 'noindex',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
      'referrer-policy': 'no-referrer',
      ...answer.headers,
    },
  });
}
