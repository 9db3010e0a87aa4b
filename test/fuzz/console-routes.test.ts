import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '@/lib/auth/api-tokens';
import { lookupNotices } from '@/lib/console/lookup';
import { insertClaimedNotice, keyWithCorrelation } from '@/testing/provider-events';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { fuzzParameters, hostileBodyText, hostileHeaderValue, hostileQuery, hostileString, mutatedObject, plausibleString, poisoned } from './arbitraries';
import { consoleHandlers, type ValidIds } from './console-handlers';
import { callHandler, expectSafe, FUZZ_SECRETS, patchEnv, seedConsoleUsers, sessionCookie, snapshotTables, storedOneTimeCodes } from './harness';

/**
 * Every console route handler, called as Next calls it with an admin session (the role that
 * reaches every handler), fed hostile query strings and bodies. Invariants per case: no 5xx
 * (a throw counts), no stack trace or secret or one-time code in the answer, and a refused
 * request (4xx) — or any read — leaves every table byte-identical.
 */

const RUNS_PER_ROUTE = 60;
const base = 'http://console.test';
let t: TestDatabase;
let restoreEnv: () => void;
let cookie: string;
let ids: ValidIds;
let secrets: string[];

beforeAll(async () => {
  t = await createTestDatabase();
  restoreEnv = patchEnv({
    DATABASE_URL: t.url,
    NEXTAUTH_SECRET: FUZZ_SECRETS.NEXTAUTH_SECRET,
    WEBHOOK_SECRET: FUZZ_SECRETS.WEBHOOK_SECRET,
    METRICS_TOKEN: FUZZ_SECRETS.METRICS_TOKEN,
  });
  const { byRole } = await seedConsoleUsers(t.pool);
  const victim = await t.pool.query<{ id: string }>(
    `insert into users (email, name, role) values ('fuzz-victim@example.com', 'Victim', 'support') returning id`,
  );
  const victimUserId = victim.rows[0]?.id;
  if (!victimUserId) throw new Error('victim insert returned nothing');
  const keys = ['0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210', 'aaaaaaaabbbbbbbbccccccccdddddddd'].map((correlation) =>
    keyWithCorrelation(correlation),
  );
  for (const [index, key] of keys.entries()) await insertClaimedNotice(t.db, { noticeKey: key, email: `customer${index}@example.com` });
  await t.pool.query(`update notice_ledger set one_time_code = 'OTC-' || substr(notice_key, 1, 12)`);
  await t.pool.query(
    `insert into audit_log (actor, action, target_type, target_id, reason) select 'fuzz-admin@example.com', 'quarantine.release', 'notice', notice_key, 'seed' from notice_ledger`,
  );
  const victimToken = await createApiToken(t.db, { name: 'fuzz victim', createdBy: null, actor: 'fuzz' });
  ids = { victimUserId, victimNoticeKey: keys[0] ?? '', victimTokenId: victimToken.summary.id };
  cookie = await sessionCookie({ userId: byRole.admin.id });
  secrets = [victimToken.token, process.env.NOTICE_KEY_SECRET ?? '', ...Object.values(FUZZ_SECRETS), ...(await storedOneTimeCodes(t.pool))];
});

afterAll(async () => {
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
  restoreEnv();
});

function requestFor({
  path,
  method,
  query,
  body,
  contentType,
}: {
  path: string;
  method: 'GET' | 'POST';
  query?: Array<[string, string]>;
  body?: string;
  contentType?: string;
}): Request {
  const url = new URL(path, base);
  for (const [name, value] of query ?? []) url.searchParams.append(name, value);
  // The console's own origin, as its pages send it: the bodies reach the parser (lib/http/same-origin.ts).
  const headers: Record<string, string> = method === 'POST' ? { cookie, origin: base } : { cookie };
  if (contentType) headers['content-type'] = contentType;
  return new Request(url, { method, headers, ...(method === 'POST' ? { body: body ?? '' } : {}) });
}

const contentTypes = fc.constantFrom(
  undefined,
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
);

describe('console route handlers under hostile input', () => {
  for (const route of consoleHandlers.filter((entry) => entry.method === 'GET')) {
    it(`GET ${route.path}: never a 5xx, a leak or a changed row`, async () => {
      const handler = await route.load();
      await fc.assert(
        fc.asyncProperty(hostileQuery(route.queryNames ?? []), async (query) => {
          const before = await snapshotTables(t.pool);
          const outcome = await callHandler(handler, requestFor({ path: route.path, method: 'GET', query }));
          expectSafe(outcome, { secrets, context: `GET ${route.path} ${JSON.stringify(query).slice(0, 200)}` });
          expect(await snapshotTables(t.pool)).toEqual(before);
        }),
        {
          ...fuzzParameters(RUNS_PER_ROUTE),
          examples: (route.regressions ?? []).map((query) => [query.map(([name, value]): [string, string] => [name, value])]),
        },
      );
    });
  }

  for (const route of consoleHandlers.filter((entry) => entry.method === 'POST')) {
    it(`POST ${route.path}: never a 5xx or a leak; a refused body changes nothing`, async () => {
      const handler = await route.load();
      const valid = route.validBody?.(ids) ?? {};
      const bodies = fc.oneof(
        { arbitrary: mutatedObject(valid).map((value) => JSON.stringify(value) ?? 'null'), weight: 3 },
        { arbitrary: hostileBodyText, weight: 1 },
        ...(route.extraBodies ? [{ arbitrary: route.extraBodies, weight: 4 }] : []),
      );
      await fc.assert(
        fc.asyncProperty(bodies, contentTypes, async (body, contentType) => {
          const before = await snapshotTables(t.pool);
          const outcome = await callHandler(handler, requestFor({ path: route.path, method: 'POST', body, contentType }));
          const context = `POST ${route.path} ${body.slice(0, 200)}`;
          expectSafe(outcome, { secrets, context });
          const unchanged = (snapshot: Record<string, string>) =>
            Object.fromEntries(Object.entries(snapshot).filter(([table]) => !(route.refusalWrites ?? []).includes(table)));
          if (outcome.status >= 400 || !route.mutates) expect(unchanged(await snapshotTables(t.pool)), context).toEqual(unchanged(before));
        }),
        { ...fuzzParameters(RUNS_PER_ROUTE), examples: (route.regressionBodies ?? []).map((body): [string, string | undefined] => [body, 'application/json']) },
      );
    });
  }
});

describe('GET /api/metrics under hostile Authorization headers', () => {
  it('answers 401 to anything but the exact bearer token, never leaks it, writes nothing', async () => {
    const { GET } = await import('@/app/api/metrics/route');
    const exact = `Bearer ${FUZZ_SECRETS.METRICS_TOKEN}`;
    const headers = fc
      .oneof(
        hostileHeaderValue,
        fc.constantFrom(
          `${exact}x`,
          exact.slice(0, -1),
          `Basic ${FUZZ_SECRETS.METRICS_TOKEN}`,
          `bearer  ${FUZZ_SECRETS.METRICS_TOKEN.toUpperCase()}`,
          `Bearer ${FUZZ_SECRETS.NEXTAUTH_SECRET}`,
        ),
        poisoned(fc.constant(exact)).filter((value) => value !== exact),
      )
      .filter((value) => {
        try {
          new Headers({ authorization: value });
          return value.trim() !== exact;
        } catch {
          return false;
        }
      });
    await fc.assert(
      fc.asyncProperty(fc.option(headers, { freq: 8 }), async (authorization) => {
        const before = await snapshotTables(t.pool);
        const request = new Request(`${base}/api/metrics`, { headers: authorization === null ? {} : { authorization } });
        const outcome = await callHandler(GET, request);
        expectSafe(outcome, { secrets, context: `metrics ${JSON.stringify(authorization).slice(0, 100)}` });
        expect(outcome.status).toBe(401);
        expect(await snapshotTables(t.pool)).toEqual(before);
      }),
      fuzzParameters(RUNS_PER_ROUTE),
    );
    const allowed = await callHandler(GET, new Request(`${base}/api/metrics`, { headers: { authorization: exact } }));
    expectSafe(allowed, { secrets, context: 'metrics with the token' });
    expect(allowed.status).toBe(200);
  });
});

describe('lookupNotices, which the /lookup page calls with ?q= and no route schema', () => {
  it('never throws, and answers an error or results', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostileString, plausibleString, poisoned(plausibleString)), async (q) => {
        const query = q.trim().slice(0, 320);
        let result: Awaited<ReturnType<typeof lookupNotices>>;
        try {
          result = await lookupNotices(t.db, { query, secret: process.env.NOTICE_KEY_SECRET ?? '', messageIdDomain: 'notices.localhost' });
        } catch (error) {
          throw new Error(`lookupNotices threw (the page would 500): ${error instanceof Error ? error.message.slice(0, 200) : String(error)}`);
        }
        expect(!result.ok || Array.isArray(result.data.matches)).toBe(true);
      }),
      { ...fuzzParameters(RUNS_PER_ROUTE), examples: [['a\u0000b'], ['0123456789abcdef\u0000']] },
    );
  });
});
