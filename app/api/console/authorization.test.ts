import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { encode } from 'next-auth/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/test/db';
import { insertUser, seedConsoleScenario, type ConsoleScenario } from '@/e2e/fixtures/console-data';
import { createApiToken } from '@/lib/auth/api-tokens';
import { permissions, type Permission } from '@/lib/auth/permissions';
import { roles, type Role } from '@/lib/auth/roles';
import { resetConfigForTests } from '@/lib/config';

/**
 * Every console route handler × every role and anonymous. The allowed set for each endpoint
 * must equal the permission map's holders of its permission; a refused mutation must leave
 * the database byte-for-byte as it was. The list below is checked against the route files
 * on disk, so a new handler that is not listed here fails this test.
 */

type Handler = (request: Request) => Promise<Response>;
type Context = { scenario: ConsoleScenario; targetUserId: string; tokenIds: string[]; call: number };
type Endpoint = {
  path: string;
  method: 'GET' | 'POST';
  permission: Permission;
  load: () => Promise<Record<string, unknown>>;
  query?: (context: Context) => string;
  body?: (context: Context) => unknown;
};

const endpoints: Endpoint[] = [
  { path: '/api/console/overview/pending', method: 'GET', permission: 'overview.read', load: () => import('./overview/pending/route') },
  { path: '/api/console/overview/series', method: 'GET', permission: 'overview.read', load: () => import('./overview/series/route'), query: () => '?range=24h' },
  { path: '/api/console/overview/status', method: 'GET', permission: 'overview.read', load: () => import('./overview/status/route') },
  { path: '/api/console/lookup', method: 'GET', permission: 'lookup.read', load: () => import('./lookup/route'), query: () => '?q=twice%40example.com' },
  { path: '/api/console/quarantine', method: 'GET', permission: 'quarantine.read', load: () => import('./quarantine/route') },
  { path: '/api/console/quarantine/count', method: 'POST', permission: 'quarantine.resolve', load: () => import('./quarantine/count/route'), body: () => ({ selection: { filter: {} } }) },
  {
    path: '/api/console/quarantine/resolve',
    method: 'POST',
    permission: 'quarantine.resolve',
    load: () => import('./quarantine/resolve/route'),
    body: ({ scenario }) => ({ action: 'suppress', selection: { keys: [scenario.stuckUntouched] }, reason: 'authorization matrix' }),
  },
  { path: '/api/console/audit', method: 'GET', permission: 'audit.read', load: () => import('./audit/route') },
  { path: '/api/console/users', method: 'GET', permission: 'users.manage', load: () => import('./users/route') },
  {
    path: '/api/console/users',
    method: 'POST',
    permission: 'users.manage',
    load: () => import('./users/route'),
    body: ({ call }) => ({ email: `created-${call}@example.com`, name: 'Created', role: 'support', password: 'a-long-password-123', reason: 'matrix' }),
  },
  { path: '/api/console/users/role', method: 'POST', permission: 'users.manage', load: () => import('./users/role/route'), body: ({ targetUserId, call }) => ({ id: targetUserId, role: call % 2 ? 'oncall' : 'operator', reason: 'matrix' }) },
  { path: '/api/console/users/disable', method: 'POST', permission: 'users.manage', load: () => import('./users/disable/route'), body: ({ targetUserId, call }) => ({ id: targetUserId, disabled: call % 2 === 1, reason: 'matrix' }) },
  { path: '/api/console/tokens', method: 'GET', permission: 'tokens.manage', load: () => import('./tokens/route') },
  { path: '/api/console/tokens', method: 'POST', permission: 'tokens.manage', load: () => import('./tokens/route'), body: ({ call }) => ({ name: `producer-${call}`, reason: 'matrix' }) },
  { path: '/api/console/tokens/revoke', method: 'POST', permission: 'tokens.manage', load: () => import('./tokens/revoke/route'), body: ({ tokenIds, call }) => ({ id: tokenIds[call % tokenIds.length], reason: 'matrix' }) },
];

/** Route handlers that are public on purpose, with the reason. */
const publicRoutes: Record<string, string> = {
  'app/api/auth/[...nextauth]/route.ts': 'next-auth sign-in itself',
  'app/api/metrics/route.ts': 'Prometheus, bearer METRICS_TOKEN (tested in app/api/metrics/route.test.ts)',
};

function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return routeFiles(full);
    return name === 'route.ts' ? [full] : [];
  });
}

const root = path.resolve(import.meta.dirname, '../../..');
const nextAuthSecret = 'nextauth-matrix-secret-0123456789abcdef';
let t: TestDatabase;
let scenario: ConsoleScenario;
let targetUserId: string;
const tokenIds: string[] = [];
const cookies = new Map<Role, string>();
let calls = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  process.env.NEXTAUTH_SECRET = nextAuthSecret;
  resetConfigForTests();
  scenario = await seedConsoleScenario(t.db, { secret: process.env.NOTICE_KEY_SECRET ?? '' });
  targetUserId = await insertUser(t.db, { email: 'target@example.com', role: 'support', password: 'target-password-1' });
  // Enough live tokens that each allowed revoke call finds one still to revoke.
  for (let index = 0; index < 64; index += 1) tokenIds.push((await createApiToken(t.db, { name: `seed-${index}`, createdBy: null, actor: 'test' })).summary.id);
  for (const role of roles) {
    const id = await insertUser(t.db, { email: `${role}@example.com`, role, password: `${role}-password-1` });
    cookies.set(role, `next-auth.session-token=${await encode({ token: { sub: id, role, email: `${role}@example.com` }, secret: nextAuthSecret })}`);
  }
});

afterAll(async () => {
  const { getDb } = await import('@/db/client');
  await getDb().$client.end();
  await t.drop();
});

/** Everything a console mutation could touch, as one string. */
async function snapshot(): Promise<string> {
  const result = await t.db.execute<{ state: string }>(sql`select concat_ws('|',
    (select string_agg(l::text, ',' order by notice_key) from notice_ledger l),
    (select string_agg(j::text, ',' order by notice_key) from reminder_jobs j),
    (select string_agg(u::text, ',' order by email) from users u),
    (select string_agg(k::text, ',' order by id) from api_tokens k),
    (select count(*)::text from audit_log)) as state`);
  return result.rows[0]?.state ?? '';
}

async function invoke(endpoint: Endpoint, cookie: string | null): Promise<Response> {
  calls += 1;
  const context = { scenario, targetUserId, tokenIds, call: calls };
  const module = await endpoint.load();
  const handler = module[endpoint.method] as Handler;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (cookie) headers.cookie = cookie;
  return handler(
    new Request(`http://console.test${endpoint.path}${endpoint.query?.(context) ?? ''}`, {
      method: endpoint.method,
      headers,
      body: endpoint.method === 'POST' ? JSON.stringify(endpoint.body?.(context) ?? {}) : undefined,
    }),
  );
}

describe('authorization matrix', () => {
  it('lists every console route handler and exported method on disk', () => {
    const onDisk = routeFiles(path.join(root, 'app/api'))
      .map((file) => path.relative(root, file))
      .filter((file) => !file.startsWith('app/api/v1/') && !file.startsWith('app/api/webhooks/'))
      // Replays and reports have their own matrix (same rules, plus four-eyes): app/api/console/replays/replays-routes.test.ts.
      .filter((file) => !file.startsWith('app/api/console/replays/') && !file.startsWith('app/api/console/reports/'));
    const listed = new Set(endpoints.map((endpoint) => `app${endpoint.path}/route.ts`));
    for (const file of onDisk) {
      if (publicRoutes[file]) continue;
      expect(listed.has(file), `${file} is not in the authorization matrix`).toBe(true);
      const source = readFileSync(path.join(root, file), 'utf8');
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        if (!new RegExp(`export const ${method}\\b`).test(source)) continue;
        expect(endpoints.some((endpoint) => `app${endpoint.path}/route.ts` === file && endpoint.method === method), `${method} ${file} is not listed`).toBe(true);
      }
    }
  });

  for (const endpoint of endpoints) {
    it(`${endpoint.method} ${endpoint.path}: allowed roles equal permissions['${endpoint.permission}']`, async () => {
      const allowed: Role[] = [];
      for (const role of roles) {
        const before = endpoint.method === 'POST' ? await snapshot() : '';
        const response = await invoke(endpoint, cookies.get(role) ?? null);
        if (response.status === 403) {
          expect(await response.json()).toMatchObject({ ok: false, error: { code: 'forbidden' } });
          if (endpoint.method === 'POST') expect(await snapshot(), `${role} changed data through a refused ${endpoint.path}`).toBe(before);
          continue;
        }
        expect(response.status, `${role} on ${endpoint.path}: ${await response.clone().text()}`).toBeLessThan(300);
        expect(await response.json()).toMatchObject({ ok: true });
        allowed.push(role);
      }
      expect(allowed).toEqual([...permissions[endpoint.permission]]);

      const before = await snapshot();
      const anonymous = await invoke(endpoint, null);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({ ok: false, error: { code: 'unauthenticated' } });
      const forged = await invoke(endpoint, `next-auth.session-token=${await encode({ token: { sub: targetUserId, role: 'admin' }, secret: 'not-the-console-secret-0123456789abcdef' })}`);
      expect(forged.status).toBe(401);
      expect(await snapshot()).toBe(before);
    });
  }

  it('a bad body is a 400 that changes nothing, even for an allowed role', async () => {
    const resolve = endpoints.find((endpoint) => endpoint.path === '/api/console/quarantine/resolve');
    if (!resolve) throw new Error('resolve endpoint missing');
    const before = await snapshot();
    const response = await invoke({ ...resolve, body: () => ({ action: 'release', selection: { keys: ['not-a-key'] }, reason: '' }) }, cookies.get('admin') ?? null);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect(await snapshot()).toBe(before);
  });
});
