import type { APIRequestContext } from '@playwright/test';
import pg from 'pg';
import { can } from '@/lib/auth/permissions';
import { roles, type Role } from '@/lib/auth/roles';
import { consoleHandlers, type ConsoleHandler } from '@/test/fuzz/console-handlers';
import { snapshotTables } from '@/test/fuzz/table-snapshot';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * The console's route handlers through `next start`, walked from the same list the fuzz suite
 * and the handler-level matrix use: anonymous is 401, a role the permission map does not list
 * is 403 with the typed refusal, and a permitted role gets past the guard (a body the schema
 * refuses is then a 400). The tables are byte-identical after the whole sweep.
 */

function call(context: APIRequestContext, handler: ConsoleHandler) {
  return handler.method === 'GET' ? context.get(handler.path) : context.post(handler.path, { data: { surely: 'not a valid body' } });
}

test('every console route: 401 anonymous, 403 for roles without the permission, past the guard for the others; nothing changes', async ({ request, apiAs }) => {
  test.setTimeout(120_000);
  const contexts = new Map<Role, APIRequestContext>();
  for (const role of roles) contexts.set(role, await apiAs(role));
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  try {
    const before = await snapshotTables(pool);
    for (const handler of consoleHandlers) {
      const anonymous = await call(request, handler);
      expect(anonymous.status(), `${handler.name} anonymous`).toBe(401);
      expect(await anonymous.json()).toMatchObject({ ok: false, error: { code: 'unauthenticated' } });
      for (const role of roles) {
        const context = contexts.get(role);
        if (!context) throw new Error(`no session for ${role}`);
        const response = await call(context, handler);
        const label = `${handler.name} as ${role}`;
        if (!can(role, handler.permission)) {
          expect(response.status(), label).toBe(403);
          expect(await response.json()).toMatchObject({ ok: false, error: { code: 'forbidden' } });
        } else if (handler.method === 'POST') {
          expect(response.status(), label).toBe(400);
          expect(await response.json()).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
        } else {
          expect(response.status(), label).toBeLessThan(500);
          expect([401, 403], label).not.toContain(response.status());
        }
      }
    }
    expect(await snapshotTables(pool)).toEqual(before);
  } finally {
    await pool.end();
  }
});

test('a producer token is no console credential, and a console session is no producer credential', async ({ request, apiAs, seed }) => {
  for (const handler of consoleHandlers) {
    const response =
      handler.method === 'GET'
        ? await request.get(handler.path, { headers: { authorization: `Bearer ${seed.producer.token}` } })
        : await request.post(handler.path, { headers: { authorization: `Bearer ${seed.producer.token}` }, data: {} });
    expect(response.status(), handler.name).toBe(401);
  }
  const admin = await apiAs('admin');
  expect((await admin.post('/api/v1/reminders', { data: {} })).status()).toBe(401);
});

test('/api/metrics: 401 without the bearer token or with another, 200 in the Prometheus text format with it', async ({ request, seed }) => {
  const without = await request.get('/api/metrics');
  expect(without.status()).toBe(401);
  expect((await request.get('/api/metrics', { headers: { authorization: 'Bearer wrong-metrics-token-000000' } })).status()).toBe(401);
  expect((await request.get('/api/metrics', { headers: { authorization: `Bearer ${seed.producer.token}` } })).status()).toBe(401);
  const response = await request.get('/api/metrics', { headers: { authorization: 'Bearer e2e-metrics-token-0123456789' } });
  expect(response.status()).toBe(200);
  expect(response.headers()['content-type']).toContain('text/plain');
  const text = await response.text();
  expect(text).toMatch(/^# TYPE notice_ledger_quarantined_claims gauge$/m);
  expect(text).toMatch(/^notice_ledger_pending_jobs\{/m);
});
