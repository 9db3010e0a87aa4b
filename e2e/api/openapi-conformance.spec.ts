import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * Conformance, property-based, through `next start`: the document the server serves
 * (/api/v1/openapi.json) is the only input. For every operation fast-check builds requests from
 * the operation's own parameter and body schemas — values that fit them, and the same with any
 * position swapped for arbitrary JSON, a field dropped or the token left out — and every answer
 * must be a documented status whose JSON body validates (ajv, 2020-12) against the document's
 * schema for it. No 5xx. The figures are printed and attached to the report.
 */

type Json = Record<string, unknown>;
type Media = { schema?: Json };
type Parameter = { name: string; in: 'path' | 'query'; required: boolean; schema: Json };
type Operation = {
  operationId: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
};
type Request = { path: Record<string, unknown>; query: Record<string, unknown>; body: unknown; mediaType: string | null; withToken: boolean };

const RUNS_PER_OPERATION = 20;

/** Arbitrary JSON, for any position a schema describes: what a careless or hostile client sends. */
const anyJson = fc.jsonValue({ maxDepth: 2 });

function isoInstant() {
  return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString());
}

/** A value the schema describes, most of the time; arbitrary JSON sometimes (`wild`). */
function fromSchema(schema: Json | undefined, wild: boolean, depth = 0): fc.Arbitrary<unknown> {
  const fitting = fitsSchema(schema ?? {}, wild, depth);
  return wild ? fc.oneof({ arbitrary: fitting, weight: 6 }, { arbitrary: anyJson, weight: 1 }) : fitting;
}

function fitsSchema(schema: Json, wild: boolean, depth: number): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const options = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (options?.length) return fc.oneof(...options.map((option) => fromSchema(option, wild, depth + 1)));
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return fromSchema(schema.allOf[0] as Json, wild, depth + 1);
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((name) => name !== 'null') : (schema.type as string | undefined);
  switch (type) {
    case 'string': {
      const format = schema.format as string | undefined;
      if (format === 'uuid') return fc.uuid();
      if (format === 'date-time') return isoInstant();
      if (format === 'email') return fc.emailAddress();
      if (typeof schema.pattern === 'string') {
        try {
          return fc.stringMatching(new RegExp(schema.pattern, 'u')).filter((text) => text.length <= Number(schema.maxLength ?? 200));
        } catch {
          return fc.string({ maxLength: 40 });
        }
      }
      return fc.string({ minLength: Number(schema.minLength ?? 0), maxLength: Math.min(Number(schema.maxLength ?? 40), 80), unit: 'grapheme' });
    }
    case 'integer':
      return fc.integer({ min: Number(schema.minimum ?? -1000), max: Number(schema.maximum ?? 1_000_000) });
    case 'number':
      return fc.double({ min: Number(schema.minimum ?? -1000), max: Number(schema.maximum ?? 1_000_000), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(fromSchema(schema.items as Json | undefined, wild, depth + 1), {
        minLength: Math.min(Number(schema.minItems ?? 0), 3),
        maxLength: Math.min(Number(schema.maxItems ?? 3), 3),
      });
    case 'object': {
      if (depth > 4) return fc.constant({});
      const properties = (schema.properties ?? {}) as Record<string, Json>;
      const required = (schema.required ?? []) as string[];
      const keys = Object.keys(properties);
      if (keys.length === 0) return fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.string({ maxLength: 20 }), { maxKeys: 3 });
      const record = fc.record(Object.fromEntries(keys.map((key) => [key, fromSchema(properties[key], wild, depth + 1)])), {
        requiredKeys: wild ? [] : required.filter((key) => keys.includes(key)),
      });
      // A wild object may also carry a name the schema does not know.
      return wild
        ? fc
            .tuple(record, fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: undefined }))
            .map(([value, extra]) => (extra ? { ...value, [extra]: 1 } : value))
        : record;
    }
    default:
      return anyJson;
  }
}

function requestArbitrary(operation: Operation): fc.Arbitrary<Request> {
  const parameters = operation.parameters ?? [];
  const contentTypes = Object.keys(operation.requestBody?.content ?? {});
  return fc.boolean().chain((wild) =>
    fc.record({
      path: fc.record(Object.fromEntries(parameters.filter((p) => p.in === 'path').map((p) => [p.name, fromSchema(p.schema, wild)]))),
      query: fc.record(Object.fromEntries(parameters.filter((p) => p.in === 'query').map((p) => [p.name, fromSchema(p.schema, wild)])), { requiredKeys: [] }),
      mediaType: contentTypes.length > 0 ? fc.constantFrom(...contentTypes) : fc.constant(null),
      body: contentTypes.length > 0 ? fromSchema(operation.requestBody?.content[contentTypes[0] ?? '']?.schema, wild) : fc.constant(undefined),
      withToken: fc.nat(9).map((roll) => roll > 0),
    }),
  );
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function urlOf(route: string, request: Request): string {
  // A `.` or `..` segment cannot be sent: every client removes it from the path (RFC 3986 §5.2.4,
  // WHATWG URL also for %2E), so the request would be for another route. The schema refuses
  // dots-only refs; a wild value that is one is sent as `x`.
  const segment = (value: string) => (value === '' || value === '.' || value === '..' ? 'x' : value);
  const filled = route.replace(/\{(\w+)\}/g, (_, name: string) => segment(encodeURIComponent(text(request.path[name] ?? 'x'))));
  const query = new URLSearchParams(Object.entries(request.query).map(([name, value]) => [name, text(value)]));
  return query.size > 0 ? `${filled}?${query}` : filled;
}

function bodyOf(request: Request): string | undefined {
  if (request.mediaType === null) return undefined;
  if (request.mediaType === 'application/x-www-form-urlencoded') {
    const value = request.body;
    const entries =
      value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value).map(([name, inner]) => [name, text(inner)]) : [];
    return new URLSearchParams(entries).toString();
  }
  return JSON.stringify(request.body);
}

test('every answer to requests generated from the document is documented and fits its schema; no 5xx', async ({ request, seed }, testInfo) => {
  test.setTimeout(240_000);
  const served = await request.get('/api/v1/openapi.json');
  expect(served.status()).toBe(200);
  const document = (await served.json()) as { paths: Record<string, Record<string, Operation>> };
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);

  // A new seed each run explores new requests; a finding is replayed with CONFORMANCE_SEED=<seed>.
  const runSeed = Number(process.env.CONFORMANCE_SEED ?? Date.now() % 2 ** 31);
  const findings: string[] = [];
  const statuses = new Map<string, number>();
  let sent = 0;
  const operations = Object.entries(document.paths).flatMap(([route, item]) =>
    Object.entries(item).map(([method, operation]) => ({ route, method, operation })),
  );
  for (const { route, method, operation } of operations) {
    const producer = operation.security?.some((requirement) => 'producerToken' in requirement) ?? false;
    await fc
      .assert(
        fc.asyncProperty(requestArbitrary(operation), async (generated) => {
          const url = urlOf(route, generated);
          const body = bodyOf(generated);
          const headers: Record<string, string> = { accept: 'application/json' };
          if (generated.mediaType) headers['content-type'] = generated.mediaType;
          if (producer && generated.withToken) headers.authorization = `Bearer ${seed.producer.token}`;
          const answer = await request.fetch(url, { method: method.toUpperCase(), headers, data: body, maxRedirects: 0, failOnStatusCode: false });
          sent += 1;
          const status = answer.status();
          statuses.set(`${status}`, (statuses.get(`${status}`) ?? 0) + 1);
          const where = `${method.toUpperCase()} ${url} ${body?.slice(0, 200) ?? ''} → ${status}`;
          if (status >= 500) {
            findings.push(`${where}: a 5xx (${(await answer.text()).slice(0, 200)})`);
            return false;
          }
          const documented = operation.responses[String(status)];
          if (!documented) {
            findings.push(`${where}: status not in the document (${(await answer.text()).slice(0, 200)})`);
            return false;
          }
          const type = (answer.headers()['content-type'] ?? '').split(';')[0]?.trim() ?? '';
          if (!documented.content) return true;
          const media = documented.content[type];
          if (!media) {
            findings.push(`${where}: content type ${type} not in the document`);
            return false;
          }
          if (type !== 'application/json') return true;
          const validate = ajv.compile(media.schema ?? {});
          const json: unknown = await answer.json();
          if (!validate(json)) {
            findings.push(`${where}: body breaks its schema: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(json).slice(0, 300)}`);
            return false;
          }
          return true;
        }),
        { numRuns: RUNS_PER_OPERATION, endOnFailure: true, seed: runSeed },
      )
      .catch(() => undefined);
  }
  const figures = {
    seed: runSeed,
    requests: sent,
    operations: operations.length,
    statuses: Object.fromEntries([...statuses].sort()),
    findings: findings.length,
  };
  console.log(`[conformance] ${JSON.stringify(figures)}`);
  await testInfo.attach('conformance-figures.json', { body: JSON.stringify({ ...figures, findings }, null, 2), contentType: 'application/json' });
  expect(findings).toEqual([]);
  expect(sent).toBeGreaterThanOrEqual(operations.length * 5);
});
