import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTokenScopes } from '@/db/schema/states';
import { createApiToken } from '@/lib/auth/api-tokens';
import { createWebhookEndpoint } from '@/lib/webhooks/endpoints';
import { parseAllowList } from '@/lib/webhooks/url';
import { closeWakeupPublisher } from '@/lib/queue';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { fuzzParameters, hostileBodyText, hostileHeaderValue, hostileString, mutatedObject, plausibleString, poisoned } from './arbitraries';
import { callHandler, expectSafe, FUZZ_SECRETS, patchEnv, snapshotTables, storedOneTimeCodes, type Outcome } from './harness';

/**
 * The producer API (/api/v1) with a valid bearer token and hostile bodies and path params,
 * and with hostile Authorization headers. No 5xx, no leak (the token itself included), and a
 * refused request leaves every table — api_tokens.last_used_at and pg-boss's queue too — as it was.
 */

const RUNS = 60;
const HOUR = 3_600_000;
type Route = (request: Request, context?: { params: Promise<Record<string, string>> }) => Promise<Response>;
let t: TestDatabase;
let restoreEnv: () => void;
let token = '';
let secrets: string[] = [];
let jobId = '';
let webhookEndpointId = '';

beforeAll(async () => {
  t = await createTestDatabase();
  restoreEnv = patchEnv({ DATABASE_URL: t.url, WEBHOOK_SECRET: FUZZ_SECRETS.WEBHOOK_SECRET });
  token = (await createApiToken(t.db, { name: 'fuzz producer', createdBy: null, actor: 'fuzz', scopes: [...apiTokenScopes] })).token;
  // A webhook endpoint for the /api/v1/webhook-endpoints/{id} routes; its secret must never leak.
  const hook = await createWebhookEndpoint(
    t.db,
    { url: 'http://127.0.0.1:9/hooks', description: null, eventTypes: ['notice.sent'], createdBy: 'fuzz' },
    { production: false, allow: parseAllowList('127.0.0.1'), noticeKeySecret: process.env.NOTICE_KEY_SECRET ?? '' },
  );
  if (!hook.ok) throw new Error(hook.problem.message);
  webhookEndpointId = hook.endpoint.id;
  const { POST } = await import('@/app/api/v1/reminders/route');
  const created = await POST(
    new Request('http://api.test/api/v1/reminders', { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify(validReminder()) }),
  );
  expect(created.status).toBe(201);
  jobId = String(((await created.json()) as { id: string }).id);
  secrets = [
    token,
    hook.secret,
    hook.secret.slice('whsec_'.length),
    process.env.NOTICE_KEY_SECRET ?? '',
    ...Object.values(FUZZ_SECRETS),
    ...(await storedOneTimeCodes(t.pool)),
  ];
});

afterAll(async () => {
  await closeWakeupPublisher();
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
  restoreEnv();
});

function validReminder(): Record<string, unknown> {
  const now = Date.now();
  return {
    type: 'payment_recovery',
    identity: { account_id: 'acct_42', reconciliation_id: 'rec_2026_03_01', exception_id: 'exc_fuzz' },
    revision: 0,
    recipient: { email: 'billing@example.com', timeZone: 'Europe/Berlin' },
    dueAt: new Date(now + 2 * HOUR).toISOString(),
    deadlineAt: new Date(now + 26 * HOUR).toISOString(),
    payload: { customer_name: 'Ana', amount: '49.00', currency: 'EUR', reference: 'exc_fuzz' },
    evidenceRef: 'recon:2026-03-01:exc',
    customerId: 'cus_42',
    source: 'nightly-reconciliation',
  };
}

const year = new Date().getUTCFullYear() + 1;

function validEvent(): Record<string, unknown> {
  return {
    type: 'subscription.renewal',
    identity: { subscription_id: 'sub_fuzz', period_start: `${year}-03-01` },
    revision: 0,
    anchorAt: `${year}-03-01T17:00:00Z`,
    recipient: { email: 'ana@example.com', phone: '+14155550100', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US' },
    contract: { termMonths: 12, trialDays: 31, paymentNetwork: 'visa', priceChange: { effectiveAt: `${year}-03-01T17:00:00Z` } },
    payload: { customer_name: 'Ana', plan_name: 'Coffee Box', amount: '190.00', currency: 'USD' },
    source: 'billing',
  };
}

function anchoredReminder(): Record<string, unknown> {
  return {
    type: 'auto_renewal_notice',
    identity: { subscription_id: 'sub_fuzz', period_start: `${year}-03-01` },
    recipient: { email: 'ana@example.com', timeZone: 'America/Los_Angeles' },
    anchorAt: `${year}-03-01T17:00:00Z`,
    region: 'US-CA',
    contract: { termMonths: 12 },
    dueAt: `${year}-02-01T17:00:00Z`,
    payload: { customer_name: 'Ana', plan_name: 'Coffee Box', amount: '190.00', currency: 'USD' },
    source: 'billing',
  };
}

/** Gives an unpoisoned event (or anchored reminder) a subscription of its own. */
function freshSubscription(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const identity = (body as Record<string, unknown>).identity;
  if (typeof identity !== 'object' || identity === null || (identity as Record<string, unknown>).subscription_id !== 'sub_fuzz') return body;
  freshCounter += 1;
  return { ...body, identity: { ...identity, subscription_id: `sub_fuzz_${freshCounter}` } };
}

type Endpoint = {
  name: string;
  load: () => Promise<Route>;
  method: 'POST' | 'PUT' | 'PATCH';
  template: () => Record<string, unknown>;
  /** `endpoint`: the seeded webhook endpoint's id, as the `id` segment. */
  param?: 'id' | 'ref' | 'endpoint';
  regressions?: () => string[];
  /** Gives an unpoisoned body a new notice key, so it reaches the insert instead of matching the seeded job. */
  freshen?: (body: unknown) => unknown;
};
let freshCounter = 0;
function freshIdentity(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const identity = (body as Record<string, unknown>).identity;
  if (typeof identity !== 'object' || identity === null || (identity as Record<string, unknown>).exception_id !== 'exc_fuzz') return body;
  freshCounter += 1;
  return { ...body, identity: { ...identity, exception_id: `exc_fuzz_${freshCounter}` } };
}
const withReminder = (patch: Record<string, unknown>) => JSON.stringify(freshIdentity({ ...validReminder(), ...patch }));

/** A batch body with each item freshened as its single route's would be. */
const freshItems =
  (freshenItem: (item: unknown) => unknown) =>
  (body: unknown): unknown => {
    if (typeof body !== 'object' || body === null || !('items' in body) || !Array.isArray(body.items)) return body;
    return { ...body, items: body.items.map(freshenItem) };
  };

const endpoints: Endpoint[] = [
  {
    name: 'POST /api/v1/reminders',
    method: 'POST',
    load: async () => (await import('@/app/api/v1/reminders/route')).POST,
    template: validReminder,
    regressions: () => [
      withReminder({ identity: { account_id: 'acct\u0000', reconciliation_id: 'r', exception_id: 'e' } }),
      withReminder({ identity: { account_id: 'acct\uD800', reconciliation_id: 'r', exception_id: 'e' } }),
      withReminder({ payload: { plan: 'Team\u0000' } }),
      withReminder({ payload: { plan: 'Team\uDC00' } }),
      withReminder({ payload: { 'pl\u0000an': 'Team' } }),
      // An inherited property name is not a configured notice type (was a 500).
      withReminder({ type: 'constructor' }),
      withReminder({ type: '__proto__' }),
    ],
  },
  {
    name: 'POST /api/v1/reminders (anchorAt, region, contract)',
    method: 'POST',
    load: async () => (await import('@/app/api/v1/reminders/route')).POST,
    template: anchoredReminder,
    freshen: freshSubscription,
    regressions: () => [
      JSON.stringify(freshSubscription({ ...anchoredReminder(), region: 'us-ca' })),
      JSON.stringify(freshSubscription({ ...anchoredReminder(), anchorAt: '+275760-09-13T00:00:00Z' })),
      JSON.stringify(freshSubscription({ ...anchoredReminder(), dueAt: `${year + 5}-01-01T00:00:00Z` })),
    ],
  },
  {
    name: 'POST /api/v1/events',
    method: 'POST',
    load: async () => (await import('@/app/api/v1/events/route')).POST,
    template: validEvent,
    freshen: freshSubscription,
    regressions: () => [
      JSON.stringify(freshSubscription({ ...validEvent(), identity: { subscription_id: 'sub\u0000', period_start: `${year}-03-01` } })),
      JSON.stringify(freshSubscription({ ...validEvent(), payload: { plan: 'Team\uD800' } })),
      JSON.stringify(freshSubscription({ ...validEvent(), type: 'constructor' })),
      JSON.stringify(freshSubscription({ ...validEvent(), type: '__proto__' })),
      JSON.stringify(freshSubscription({ ...validEvent(), anchorAt: '1970-01-01T00:00:00Z' })),
      JSON.stringify(freshSubscription({ ...validEvent(), revision: 1_000_000 })),
      JSON.stringify(freshSubscription({ ...validEvent(), contract: { cancellationDeadlineAt: '0001-01-01T00:00:00Z', termMonths: 12 } })),
    ],
  },
  {
    name: 'POST /api/v1/reminders/batch',
    method: 'POST',
    load: async () => (await import('@/app/api/v1/reminders/batch/route')).POST,
    template: () => ({ items: [validReminder(), anchoredReminder(), validReminder()] }),
    freshen: freshItems((item) => freshSubscription(freshIdentity(item))),
    regressions: () => [
      JSON.stringify({ items: [null, 1, 'x', [], { items: [] }] }),
      JSON.stringify({
        items: [
          { ...validReminder(), type: 'constructor' },
          { ...anchoredReminder(), anchorAt: '+275760-09-13T00:00:00Z' },
        ],
      }),
      JSON.stringify({ items: [{ ...validReminder(), payload: { plan: 'Team\u0000' } }] }),
    ],
  },
  {
    name: 'POST /api/v1/events/batch',
    method: 'POST',
    load: async () => (await import('@/app/api/v1/events/batch/route')).POST,
    template: () => ({ items: [validEvent(), validEvent()] }),
    freshen: freshItems(freshSubscription),
    regressions: () => [
      JSON.stringify({ items: [null, { ...validEvent(), type: '__proto__' }, { ...validEvent(), revision: 1_000_000 }] }),
      JSON.stringify({ items: [{ ...validEvent(), identity: { subscription_id: 'sub\u0000', period_start: `${year}-03-01` } }] }),
    ],
  },
  {
    name: 'POST /api/v1/reminders/[id]/cancel',
    method: 'POST',
    load: async () => (await import('@/app/api/v1/reminders/[id]/cancel/route')).POST,
    template: () => ({ reason: 'customer paid by wire' }),
    param: 'id',
    regressions: () => [JSON.stringify({ reason: 'paid\u0000' })],
  },
  {
    name: 'POST /api/v1/notices/cancel',
    method: 'POST',
    load: async () => (await import('@/app/api/v1/notices/cancel/route')).POST,
    template: () => ({ type: 'payment_recovery', identity: validReminder().identity, reason: 'customer paid by wire' }),
    regressions: () => [
      JSON.stringify({ type: 'constructor', identity: {} }),
      JSON.stringify({ type: 'payment_recovery', identity: { account_id: 'a\u0000' } }),
      JSON.stringify({ type: 'payment_recovery', identity: validReminder().identity, revision: 1e300 }),
    ],
  },
  {
    name: 'PUT /api/v1/evidence/[ref]',
    method: 'PUT',
    load: async () => (await import('@/app/api/v1/evidence/[ref]/route')).PUT,
    template: () => ({ kind: 'reconciliation_exception', summary: 'open exception', details: { amount: '49.00' } }),
    param: 'ref',
    regressions: () => [
      JSON.stringify({ kind: 'reconciliation_exception', summary: 'a\u0000b' }),
      JSON.stringify({ kind: 'reconciliation_exception', details: { a: '\uD800' } }),
    ],
  },
  {
    name: 'POST /api/v1/evidence/[ref]/resolve',
    method: 'POST',
    load: async () => (await import('@/app/api/v1/evidence/[ref]/resolve/route')).POST,
    template: () => ({ kind: 'reconciliation_exception', reason: 'paid' }),
    param: 'ref',
    regressions: () => [JSON.stringify({ kind: 'reconciliation_exception', reason: 'paid\u0000' })],
  },
  {
    name: 'POST /api/v1/webhook-endpoints',
    method: 'POST',
    load: async () => (await import('@/app/api/v1/webhook-endpoints/route')).POST,
    template: () => ({ url: 'https://hooks.example.com/notice-ledger', description: 'billing', eventTypes: ['notice.sent', 'notice.bounced'], reason: 'fuzz' }),
    regressions: () => [
      JSON.stringify({ url: 'http://[::ffff:127.0.0.1]/x' }),
      JSON.stringify({ url: 'http://0x7f000001/x' }),
      JSON.stringify({ url: 'http://2130706433/x' }),
      JSON.stringify({ url: 'http://localhost/x' }),
      JSON.stringify({ url: 'https://hooks.example.com/\u0000' }),
    ],
  },
  {
    name: 'PATCH /api/v1/webhook-endpoints/[id]',
    method: 'PATCH',
    load: async () => (await import('@/app/api/v1/webhook-endpoints/[id]/route')).PATCH,
    template: () => ({ url: 'https://hooks.example.com/v2', eventTypes: ['notice.failed'], enabled: true, reason: 'fuzz' }),
    param: 'endpoint',
  },
  {
    name: 'POST /api/v1/webhook-endpoints/[id]/rotate-secret',
    method: 'POST',
    load: async () => (await import('@/app/api/v1/webhook-endpoints/[id]/rotate-secret/route')).POST,
    template: () => ({ reason: 'fuzz rotation' }),
    param: 'endpoint',
  },
  {
    name: 'POST /api/v1/webhook-endpoints/[id]/test',
    method: 'POST',
    load: async () => (await import('@/app/api/v1/webhook-endpoints/[id]/test/route')).POST,
    template: () => ({ reason: 'fuzz test send' }),
    param: 'endpoint',
  },
];

/** The seeded value of a path parameter, and the segment it fills. */
function seededParam(param: 'id' | 'ref' | 'endpoint'): { name: string; value: string } {
  if (param === 'endpoint') return { name: 'id', value: webhookEndpointId };
  return { name: param, value: param === 'id' ? jobId : 'recon:2026-03-01:exc' };
}

async function call(
  route: Route,
  { method, body, authorization, params }: { method: string; body: string; authorization: string | null; params: Record<string, string> },
): Promise<Outcome> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== null) headers.authorization = authorization;
  return callHandler((request) => route(request, { params: Promise.resolve(params) }), new Request('http://api.test/api/v1/x', { method, headers, body }));
}

describe('producer API under hostile input', () => {
  for (const endpoint of endpoints) {
    it(`${endpoint.name}: valid token, hostile body and params → never a 5xx; a refusal writes nothing`, async () => {
      const route = await endpoint.load();
      const seeded = endpoint.param ? seededParam(endpoint.param) : null;
      const params = seeded
        ? fc
            .oneof(fc.constant(seeded.value), plausibleString, poisoned(fc.constant(seeded.value)), hostileString)
            .map((value): Record<string, string> => ({ [seeded.name]: value }))
        : fc.constant<Record<string, string>>({});
      const freshen = endpoint.freshen ?? ((value: unknown) => value);
      const bodies = fc.oneof(
        { arbitrary: mutatedObject(endpoint.template()).map((value) => JSON.stringify(freshen(value)) ?? ''), weight: 4 },
        { arbitrary: hostileBodyText, weight: 1 },
      );
      await fc.assert(
        fc.asyncProperty(bodies, params, async (body, routeParams) => {
          const before = await snapshotTables(t.pool);
          const outcome = await call(route, { method: endpoint.method, body, authorization: `Bearer ${token}`, params: routeParams });
          const context = `${endpoint.name} ${JSON.stringify(routeParams).slice(0, 80)} ${body.slice(0, 300)} → ${outcome.status} ${outcome.text.slice(0, 200)}`;
          expectSafe(outcome, { secrets, context });
          if (outcome.status >= 400) expect(await snapshotTables(t.pool), context).toEqual(before);
        }),
        {
          ...fuzzParameters(RUNS),
          examples: (endpoint.regressions?.() ?? []).map((body): [string, Record<string, string>] => [
            body,
            seeded ? { [seeded.name]: seeded.value } : { id: jobId, ref: 'recon:2026-03-01:exc' },
          ]),
        },
      );
    });
  }

  it('hostile Authorization headers → 401 and nothing written, on every endpoint', async () => {
    const routes = await Promise.all(endpoints.map(async (endpoint) => ({ endpoint, route: await endpoint.load() })));
    const authorization = fc.oneof(
      hostileHeaderValue,
      fc.constantFrom(
        `Bearer ${token}x`,
        `Bearer ${token.slice(0, -1)}`,
        `Basic ${token}`,
        `Bearer  ${token} extra`,
        `Bearer nlk_00000000_${'A'.repeat(43)}`,
        token,
      ),
      poisoned(fc.constant(`Bearer ${token}`)).filter((value) => value !== `Bearer ${token}` && isHeaderSafe(value)),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.option(authorization, { freq: 8 }), async ({ endpoint, route }, header) => {
        const before = await snapshotTables(t.pool);
        const outcome = await call(route, {
          method: endpoint.method,
          body: JSON.stringify(endpoint.template()),
          authorization: header,
          params: { id: jobId, ref: 'recon:2026-03-01:exc' },
        });
        const context = `${endpoint.name} authorization ${JSON.stringify(header).slice(0, 120)}`;
        expectSafe(outcome, { secrets, context });
        expect(outcome.status, context).toBe(401);
        expect(await snapshotTables(t.pool), context).toEqual(before);
      }),
      fuzzParameters(RUNS),
    );
  });
});

function isHeaderSafe(value: string): boolean {
  try {
    new Headers({ authorization: value });
    return true;
  } catch {
    return false;
  }
}
