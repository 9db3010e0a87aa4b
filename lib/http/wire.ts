import { statusOf, type Refusal, type RefusalKind } from './refusal';

/**
 * How a refusal reads for each audience. The status always comes from the one table in
 * refusal.ts; the body is each audience's published format: the console's `{ ok, data | error }`
 * (its own client reads it), the producer API's `{ error, details }` (other services parse it,
 * so it does not change), a provider's `{ error }` (a provider only reads the status).
 */

const noStore = { 'cache-control': 'no-store' };

export function consoleOk(data: unknown, status: number): Response {
  return Response.json({ ok: true, data }, { status, headers: noStore });
}

export function consoleRefusal(refusal: Refusal): Response {
  return Response.json(
    { ok: false, error: { code: refusal.kind, message: refusal.message } },
    { status: statusOf(refusal), headers: { ...noStore, ...refusal.headers } },
  );
}

const producerNames: Record<RefusalKind, string> = {
  unauthenticated: 'unauthorized',
  forbidden: 'forbidden',
  invalid_input: 'invalid_request',
  not_found: 'not_found',
  gone: 'gone',
  method_not_allowed: 'method_not_allowed',
  conflict: 'conflict',
  too_large: 'body_too_large',
  unprocessable: 'unprocessable',
  rate_limited: 'rate_limited',
  not_configured: 'not_configured',
  unavailable: 'unavailable',
  internal: 'internal',
};

export function producerOk(body: unknown, status: number): Response {
  return Response.json(body, { status, headers: noStore });
}

/** A producer refusal's status and body: the batch routes answer each refused item with it. */
export function producerRefusalAnswer(refusal: Refusal): { status: number; body: { error: string; details: unknown } } {
  return { status: statusOf(refusal), body: { error: refusal.code ?? producerNames[refusal.kind], details: refusal.details ?? refusal.message } };
}

export function producerRefusal(refusal: Refusal): Response {
  const { status, body } = producerRefusalAnswer(refusal);
  return Response.json(body, { status, headers: { ...noStore, ...refusal.headers } });
}

export function providerOk(body: unknown): Response {
  return Response.json(body, { status: 200 });
}

export function providerRefusal(refusal: Refusal): Response {
  return Response.json({ error: refusal.message }, { status: statusOf(refusal), headers: refusal.headers });
}

/** A probe's answer: the state as JSON, never cached; a refusal names its reason and detail. */
export function publicOk(body: unknown): Response {
  return Response.json(body, { status: 200, headers: noStore });
}

/** The kind alone: the reason is the log's (lib/http/public-route.ts). */
export function publicRefusal(refusal: Refusal): Response {
  return Response.json({ error: refusal.kind }, { status: statusOf(refusal), headers: noStore });
}

export function csvResponse({ filename, csv }: { filename: string; csv: string }): Response {
  return new Response(csv, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
      ...noStore,
    },
  });
}
