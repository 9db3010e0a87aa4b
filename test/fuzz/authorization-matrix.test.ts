import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '@/lib/auth/api-tokens';
import { permissions } from '@/lib/auth/permissions';
import { roles, type Role } from '@/lib/auth/roles';
import { producerRouteContracts, publicRouteContracts } from '@/lib/api/routes';
import { closeWakeupPublisher } from '@/lib/queue';
import { loadRouteHandler } from '@/testing/route-handlers';
import { insertClaimedNotice, keyWithCorrelation } from '@/testing/provider-events';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { consoleHandlers, type ConsoleHandler, type ValidIds } from './console-handlers';
import { callHandler, FUZZ_SECRETS, patchEnv, seedConsoleUsers, sessionCookie, snapshotTables, unknownUserId, type SeededUser } from './harness';

/**
 * Every console route handler (the route list's console part, lib/api/routes.ts, which
 * lib/api/routes.test.ts checks against the route files on disk) × every role, anonymous, an expired session, a disabled user, a deleted user,
 * a cookie signed with another secret, and a producer API token presented as a bearer header
 * or as the session cookie. The roles that get past the guard must be exactly the permission
 * map's holders; everything else is 401/403 and leaves every table as it was. And the other
 * way round: a console session opens no producer API route.
 *
 * Allowed-ness is read with a body the schema refuses ({"matrix": true} → 400 once past the
 * guard), so it never depends on domain outcomes; refused callers also send the valid body.
 */

let t: TestDatabase;
let restoreEnv: () => void;
let ids: ValidIds;
let users: Record<Role, SeededUser>;
let disabledAdmin: SeededUser;
let producerToken = '';

beforeAll(async () => {
  t = await createTestDatabase();
  restoreEnv = patchEnv({ DATABASE_URL: t.url, NEXTAUTH_SECRET: FUZZ_SECRETS.NEXTAUTH_SECRET });
  ({ byRole: users, disabledAdmin } = await seedConsoleUsers(t.pool));
  const victim = await t.pool.query<{ id: string }>(
    `insert into users (email, name, role) values ('matrix-victim@example.com', 'Victim', 'support') returning id`,
  );
  const noticeKey = keyWithCorrelation('0123456789abcdef0123456789abcdef');
  await insertClaimedNotice(t.db, { noticeKey, email: 'customer@example.com' });
  const victimToken = await createApiToken(t.db, { name: 'matrix victim', createdBy: null, actor: 'matrix' });
  producerToken = (await createApiToken(t.db, { name: 'matrix producer', createdBy: null, actor: 'matrix' })).token;
  ids = { victimUserId: victim.rows[0]?.id ?? '', victimNoticeKey: noticeKey, victimTokenId: victimToken.summary.id };
});

afterAll(async () => {
  await closeWakeupPublisher();
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
  restoreEnv();
});

function requestFor(route: ConsoleHandler, { headers, body }: { headers: Record<string, string>; body: 'refused' | 'valid' }): Request {
  const url = new URL(route.path, 'http://console.test');
  if (route.method === 'GET') return new Request(url, { headers });
  const payload = body === 'valid' ? (route.validBody?.(ids) ?? {}) : { matrix: true };
  return new Request(url, { method: 'POST', headers: { 'content-type': 'application/json', origin: url.origin, ...headers }, body: JSON.stringify(payload) });
}

const passedGuard = (status: number) => status !== 401 && status !== 403;

describe('authorization matrix (console handlers × callers)', () => {
  for (const route of consoleHandlers) {
    it(`${route.method} ${route.path}: allowed = permissions['${route.permission}'], everyone else refused without a change`, async () => {
      const handler = await route.load();
      const allowed: Role[] = [];
      for (const role of roles) {
        const cookie = await sessionCookie({ userId: users[role].id });
        const outcome = await callHandler(handler, requestFor(route, { headers: { cookie }, body: 'refused' }));
        expect(outcome.status, `${role}: ${outcome.text.slice(0, 200)}`).toBeLessThan(500);
        if (passedGuard(outcome.status)) allowed.push(role);
      }
      expect(allowed).toEqual([...permissions[route.permission]]);

      const refusedCallers: Array<[string, Record<string, string>]> = [
        ['anonymous', {}],
        ['expired session', { cookie: await sessionCookie({ userId: users.admin.id, maxAgeSeconds: -3_600 }) }],
        ['disabled admin', { cookie: await sessionCookie({ userId: disabledAdmin.id }) }],
        ['deleted user', { cookie: await sessionCookie({ userId: unknownUserId() }) }],
        ['cookie signed with another secret', { cookie: await sessionCookie({ userId: users.admin.id, secret: 'not-the-console-secret-0123456789abcdef' }) }],
        ['producer token as bearer', { authorization: `Bearer ${producerToken}` }],
        ['producer token as the session cookie', { cookie: `next-auth.session-token=${producerToken}`, authorization: `Bearer ${producerToken}` }],
        ...roles.filter((role) => !allowed.includes(role)).map((role): [string, Record<string, string>] => [role, {}]),
      ];
      for (const [caller, headers] of refusedCallers) {
        const roleCookie: Record<string, string> = (roles as readonly string[]).includes(caller)
          ? { cookie: await sessionCookie({ userId: users[caller as Role].id }) }
          : {};
        const before = await snapshotTables(t.pool);
        const outcome = await callHandler(handler, requestFor(route, { headers: { ...headers, ...roleCookie }, body: 'valid' }));
        expect(passedGuard(outcome.status), `${caller} got ${outcome.status}: ${outcome.text.slice(0, 200)}`).toBe(false);
        expect(outcome.status, caller).toBe(roleCookie.cookie === undefined ? 401 : 403);
        expect(await snapshotTables(t.pool), `${caller} changed data through a refused ${route.method} ${route.path}`).toEqual(before);
      }
    });
  }
});

describe('a console session opens no producer API route', () => {
  // The route list's producer part: each route's own export, as next start serves it.
  const producerRoutes = producerRouteContracts.map((contract) => ({
    name: `${contract.method} ${contract.path}`,
    method: contract.method,
    load: () => loadRouteHandler(contract),
  }));

  for (const route of producerRoutes) {
    it(`${route.name}: admin session cookie, with or without a bogus bearer → 401, nothing written`, async () => {
      const handler = await route.load();
      const cookie = await sessionCookie({ userId: users.admin.id });
      const variants: Record<string, string>[] = [{ cookie }, { cookie, authorization: `Bearer ${cookie.split('=')[1] ?? ''}` }];
      for (const headers of variants) {
        const before = await snapshotTables(t.pool);
        const outcome = await callHandler(
          (request) => handler(request, { params: Promise.resolve({ id: '00000000-0000-4000-8000-000000000000', ref: 'recon:1' }) }),
          new Request('http://api.test/api/v1/x', {
            method: route.method,
            headers: { 'content-type': 'application/json', ...headers },
            // A GET (the recipient preferences read) carries no body.
            ...(route.method === 'GET' ? {} : { body: JSON.stringify({ kind: 'reconciliation_exception' }) }),
          }),
        );
        expect(outcome.status).toBe(401);
        expect(await snapshotTables(t.pool)).toEqual(before);
      }
    });
  }
});

describe('the public probes (health, ready) answer anyone the same, and change nothing', () => {
  for (const contract of publicRouteContracts) {
    it(`${contract.method} ${contract.path}: anonymous, an admin session and a producer token get the same 200`, async () => {
      const handler = await loadRouteHandler(contract);
      const callers: Record<string, string>[] = [{}, { cookie: await sessionCookie({ userId: users.admin.id }) }, { authorization: `Bearer ${producerToken}` }];
      const before = await snapshotTables(t.pool);
      const answers = [];
      for (const headers of callers) {
        const outcome = await callHandler(handler, new Request(new URL(contract.path, 'http://console.test'), { headers }));
        answers.push({ status: outcome.status, text: outcome.text });
      }
      expect(answers[0]?.status).toBe(200);
      expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
      expect(await snapshotTables(t.pool)).toEqual(before);
    });
  }
});
