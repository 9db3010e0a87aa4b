import { z, type ZodType } from 'zod';
import { listNoticeFilters, listNoticesQuery } from '@/lib/api/notices';
import { routeContracts } from '@/lib/api/routes';
import type { RouteContract } from '@/lib/http/contract';
import { operationExamples, type OperationExamples } from './examples';

/**
 * The OpenAPI 3.1 document, generated from the zod contracts in lib/api/routes.ts with zod 4's own
 * converter (`z.toJSONSchema`, JSON Schema 2020-12, the dialect OpenAPI 3.1 uses). Every route of
 * the registry but the console's (session + CSRF, not a published API) is in it: a contract added to
 * the registry is an operation here, with its request and answer schemas, its audience's error
 * bodies, and the examples lib/openapi/examples.ts gives it (lib/openapi/document.test.ts asks for
 * at least one answer example, and validates each against its schema).
 */

type Json = Record<string, unknown>;
type DocumentedContract = Exclude<RouteContract, { audience: 'console' }>;

const methods = ['get', 'post', 'put', 'patch'] as const;

/** A GET whose query schema is a transform over a record: the filters it reads, as named parameters. */
const queryShapes = new Map<ZodType, ZodType>([[listNoticesQuery, listNoticeFilters]]);

function jsonSchema(schema: ZodType, io: 'input' | 'output'): Json {
  const converted = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Json;
  delete converted.$schema;
  return converted;
}

function operationId(contract: DocumentedContract): string {
  const words = contract.path
    .replace(/^\/api\/(v1\/)?/, '')
    .replace(/\.json$/, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [contract.method.toLowerCase(), ...words.map((word) => word[0]?.toUpperCase() + word.slice(1))].join('');
}

const tags = {
  producer: 'Producer API',
  provider: 'Provider webhooks',
  recipient: 'Recipient links',
  one_click: 'One-click unsubscribe',
  public: 'Probes and this document',
  scrape: 'Metrics',
} as const;

const tagDescriptions: Record<keyof typeof tags, string> = {
  producer: 'Another service schedules, cancels and asks, with a bearer API token (README "For producers").',
  provider: 'Delivery events the mail and SMS providers post; each is authenticated the way its provider signs (README "Provider webhooks").',
  recipient: 'The page a notice links to and its two actions; the signed token in the path is the only credential.',
  one_click: 'RFC 8058: the List-Unsubscribe target; a GET only shows the button.',
  public: 'Liveness, readiness and this document; no authentication, no data.',
  scrape: "Prometheus's endpoint, with METRICS_TOKEN.",
};

const producerError = {
  type: 'object',
  required: ['error', 'details'],
  properties: {
    error: { type: 'string', description: 'A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, …' },
    details: { description: 'Field issues ({path, message}[]), the conflicting job, or a sentence.' },
  },
};
const messageError = { type: 'object', required: ['error'], properties: { error: { type: 'string' } } };
const recipientJsonError = {
  type: 'object',
  required: ['ok', 'error'],
  properties: {
    ok: { const: false },
    error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
  },
};
const html = { 'text/html': { schema: { type: 'string' } } };

const statusWords: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  303: 'See Other: back to the page',
  400: 'Malformed request',
  401: 'Unauthenticated',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Body too large',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Too many requests',
  500: 'Internal error; safe to retry',
  503: 'Unavailable',
};

/** The statuses every route of an audience can answer, with the body its wire format gives them (lib/http/wire.ts). */
function errorResponses(contract: DocumentedContract): Record<number, Json> {
  const json = (schema: Json, example: unknown) => ({ 'application/json': { schema, examples: { refusal: { value: example } } } });
  const producer = (status: number, error: string, details: unknown) => ({
    description: statusWords[status],
    content: json(producerError, { error, details }),
  });
  switch (contract.audience) {
    case 'producer': {
      const answers: Record<number, Json> = {
        400: producer(400, 'invalid_request', [{ path: 'dueAt', message: 'must be an ISO 8601 UTC instant ending in Z, e.g. 2026-03-01T09:00:00Z' }]),
        401: producer(401, 'unauthorized', 'send Authorization: Bearer <token>'),
        403: producer(403, 'missing_scope', `this token lacks the scope ${contract.scope}; create a token that holds it`),
        500: producer(500, 'internal', 'the request could not be completed; it is safe to retry'),
      };
      if (contract.method !== 'GET') answers[413] = producer(413, 'body_too_large', 'the body must be under 65536 bytes');
      if (contract.path.includes('{'))
        answers[404] = producer(404, 'not_found', contract.path.startsWith('/api/v1/webhook-endpoints') ? 'no such webhook endpoint' : 'no such notice');
      return answers;
    }
    case 'provider':
      return Object.fromEntries(
        [400, 401, 403, 413, 500].map((status) => [
          status,
          { description: statusWords[status], content: json(messageError, { error: statusWords[status] ?? 'error' }) },
        ]),
      );
    case 'recipient':
      return Object.fromEntries(
        [400, 403, 404, 410, 429].map((status) => [
          status,
          {
            description: statusWords[status],
            content: { ...html, ...json(recipientJsonError, { ok: false, error: { code: 'link_malformed', message: 'this link is not valid' } }) },
          },
        ]),
      );
    case 'one_click':
      return Object.fromEntries([400, 404, 410, 413, 415, 429, 503].map((status) => [status, { description: statusWords[status], content: html }]));
    case 'public':
      return { 503: { description: statusWords[503], content: json(messageError, { error: 'unavailable' }) } };
    case 'scrape':
      return Object.fromEntries(
        [401, 404].map((status) => [status, { description: statusWords[status], content: { 'text/plain': { schema: { type: 'string' } } } }]),
      );
  }
}

function pathParameters(contract: DocumentedContract): Json[] {
  const names = [...contract.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');
  const params = contract.audience === 'producer' || contract.audience === 'one_click' ? jsonSchema(contract.params, 'input') : {};
  const properties = (params.properties ?? {}) as Record<string, Json>;
  return names.map((name) => ({ name, in: 'path', required: true, schema: properties[name] ?? { type: 'string', maxLength: 512 } }));
}

function queryParameters(schema: ZodType): Json[] {
  const converted = jsonSchema(queryShapes.get(schema) ?? schema, 'input');
  const properties = (converted.properties ?? {}) as Record<string, Json>;
  const required = new Set((converted.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({ name, in: 'query', required: required.has(name), schema: property }));
}

function requestOf(contract: DocumentedContract, examples: OperationExamples | undefined): { parameters: Json[]; requestBody?: Json } {
  const parameters = pathParameters(contract);
  const example = examples?.request === undefined ? {} : { examples: { request: { value: examples.request } } };
  switch (contract.audience) {
    case 'producer':
      if (contract.method === 'GET') return { parameters: [...parameters, ...queryParameters(contract.body)] };
      return {
        parameters,
        requestBody: { required: !contract.bodyOptional, content: { 'application/json': { schema: jsonSchema(contract.body, 'input'), ...example } } },
      };
    case 'provider': {
      const type = contract.provider.startsWith('twilio') ? 'application/x-www-form-urlencoded' : 'application/json';
      return { parameters, requestBody: { required: true, content: { [type]: { schema: jsonSchema(contract.input, 'input'), ...example } } } };
    }
    case 'recipient':
      if (contract.method === 'GET') return { parameters: [...parameters, ...queryParameters(contract.input)] };
      return {
        parameters,
        requestBody: {
          required: false,
          content: Object.fromEntries(
            ['application/x-www-form-urlencoded', 'application/json'].map((type) => [type, { schema: jsonSchema(contract.input, 'input'), ...example }]),
          ),
        },
      };
    case 'one_click':
      if (contract.method === 'GET') return { parameters };
      return {
        parameters,
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: { type: 'object', required: ['List-Unsubscribe'], properties: { 'List-Unsubscribe': { const: 'One-Click' } } },
            },
          },
        },
      };
    case 'public':
    case 'scrape':
      return { parameters };
  }
}

function successContent(contract: DocumentedContract, example: unknown): Json {
  const examples = example === undefined ? {} : { examples: { answer: { value: example } } };
  const output = jsonSchema(contract.output, 'output');
  switch (contract.audience) {
    case 'scrape':
      return { 'text/plain': { schema: output, ...examples } };
    case 'one_click':
      return { 'text/html': { schema: output, ...examples } };
    case 'recipient':
      if (contract.method === 'GET') return { 'text/html': { schema: output, ...examples } };
      return {
        'application/json': {
          schema: { type: 'object', required: ['ok', 'data'], properties: { ok: { const: true }, data: output } },
          ...(example === undefined ? {} : { examples: { answer: { value: { ok: true, data: example } } } }),
        },
      };
    case 'provider':
      if (contract.provider === 'twilio_inbound') return { 'text/xml': { schema: { type: 'string' }, ...examples } };
      return { 'application/json': { schema: output, ...examples } };
    default:
      return { 'application/json': { schema: output, ...examples } };
  }
}

function securityOf(contract: DocumentedContract): Json[] | undefined {
  if (contract.audience === 'producer') return [{ producerToken: [contract.scope] }];
  if (contract.audience === 'scrape') return [{ metricsToken: [] }];
  return [];
}

function operationOf(contract: DocumentedContract): Json {
  const examples = operationExamples[`${contract.method} ${contract.path}`];
  const successes = Object.entries(examples?.responses ?? { 200: undefined }).filter(([status]) => Number(status) < 300);
  const responses: Record<string, Json> = {};
  for (const [status, example] of successes)
    responses[status] = { description: statusWords[Number(status)] ?? 'OK', content: successContent(contract, example) };
  if (contract.audience === 'recipient' && contract.method === 'POST')
    responses[303] = { description: statusWords[303], headers: { location: { schema: { type: 'string', format: 'uri' } } } };
  const errors = errorResponses(contract);
  for (const [status, example] of Object.entries(examples?.responses ?? {}).filter(([status]) => Number(status) >= 400)) {
    errors[Number(status)] = {
      description: statusWords[Number(status)] ?? 'Refused',
      content: {
        'application/json': { schema: contract.audience === 'producer' ? producerError : messageError, examples: { refusal: { value: example } } },
      },
    };
  }
  for (const [status, answer] of Object.entries(errors)) responses[status] = answer;
  const { parameters, requestBody } = requestOf(contract, examples);
  return {
    operationId: operationId(contract),
    summary: examples?.summary ?? `${contract.method} ${contract.path}`,
    tags: [tags[contract.audience]],
    security: securityOf(contract),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

/** The contracts the document describes: all but the console's. */
export function documentedContracts(): DocumentedContract[] {
  return routeContracts.filter((contract): contract is DocumentedContract => contract.audience !== 'console');
}

let built: Json | undefined;

export function openApiDocument(): Json {
  if (built) return built;
  const paths: Record<string, Record<string, Json>> = {};
  for (const contract of documentedContracts()) {
    const item = (paths[contract.path] ??= {});
    item[contract.method.toLowerCase()] = operationOf(contract);
  }
  const sorted = Object.fromEntries(
    Object.entries(paths)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([path, item]) => [path, Object.fromEntries(methods.filter((method) => item[method]).map((method) => [method, item[method]]))]),
  );
  built = {
    openapi: '3.1.1',
    info: {
      title: 'notice-ledger',
      version: '1',
      summary: 'Delayed reminders that go out exactly once as a business outcome.',
      description:
        'The producer API (`/api/v1`, bearer token with scopes), the provider webhooks notice-ledger receives, the recipient links, the probes and the metrics endpoint. Generated from the zod contracts in lib/api/. README "For producers" explains each answer.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/', description: 'the console that serves this document' }],
    tags: Object.entries(tags).map(([audience, name]) => ({ name, description: tagDescriptions[audience as keyof typeof tags] })),
    paths: sorted,
    components: {
      securitySchemes: {
        producerToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API token (`nlk_<prefix>_<secret>`) from `npm run ledger -- tokens create` or the console Admin page; each route names the scope it needs.',
        },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN.' },
      },
    },
  };
  return built;
}
