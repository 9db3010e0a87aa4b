import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPreferenceChanges } from '@/db/queries/preferences';
import { addRecipientSuppression } from '@/db/queries/suppressions';
import { createApiToken } from '@/lib/auth/api-tokens';
import { snapshotTables } from '@/test/fuzz/table-snapshot';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { GET, PUT } from './route';

let t: TestDatabase;
let token = '';
let prefix = '';

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  const created = await createApiToken(t.db, { name: 'crm', createdBy: null, actor: 'admin@example.com' });
  token = created.token;
  prefix = created.summary.prefix;
});

afterAll(async () => {
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
});

async function call(
  method: 'PUT' | 'GET',
  email: string,
  { body, raw, auth = `Bearer ${token}` }: { body?: unknown; raw?: string; auth?: string | null } = {},
) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (auth) headers.authorization = auth;
  const request = new Request(`http://localhost/api/v1/recipients/${encodeURIComponent(email)}/preferences`, {
    method,
    headers,
    body: method === 'GET' ? undefined : (raw ?? JSON.stringify(body)),
  });
  const response = await (method === 'PUT' ? PUT : GET)(request, { params: Promise.resolve({ email: encodeURIComponent(email) }) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const optOut = { preferences: [{ category: 'courtesy', channel: 'email', state: 'opted_out' }] };

describe('PUT/GET /api/v1/recipients/{email}/preferences', () => {
  it('opts a recipient out (200, changed 1), idempotently (changed 0), with history as the token; GET reads it back', async () => {
    const first = await call('PUT', 'Ana@Example.com', { body: { ...optOut, reason: 'asked on the phone' } });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      recipient: 'ana@example.com',
      changed: 1,
      preferences: [
        { category: 'courtesy', channel: 'email', state: 'opted_out', source: 'producer_api' },
        { category: 'required', channel: 'email', state: 'required', source: null, changedAt: null },
      ],
      suppression: null,
    });
    const again = await call('PUT', 'ana@example.com', { body: optOut });
    expect(again).toMatchObject({ status: 200, json: { changed: 0 } });
    expect(await listPreferenceChanges(t.db, { recipient: 'ana@example.com', channel: 'email' })).toMatchObject([
      { toState: 'opted_out', source: 'producer_api', actor: `token:${prefix}`, reason: 'asked on the phone' },
    ]);
    const read = await call('GET', 'ana@example.com');
    expect(read.status).toBe(200);
    expect(read.json.preferences).toEqual(first.json.preferences);
    const back = await call('PUT', 'ana@example.com', { body: { preferences: [{ category: 'courtesy', channel: 'email', state: 'opted_in' }] } });
    expect(back.json).toMatchObject({ changed: 1, preferences: [{ state: 'opted_in' }, { state: 'required' }] });
  });

  it('GET of an unknown address: opted in by default; the suppression list is shown', async () => {
    expect((await call('GET', 'nobody@example.com')).json).toMatchObject({
      preferences: [{ state: 'opted_in', source: null }, { state: 'required' }],
      suppression: null,
    });
    await addRecipientSuppression(t.db, { email: 'gone@example.com', reason: 'hard_bounce', sourceEventId: null });
    expect((await call('GET', 'gone@example.com')).json).toMatchObject({ suppression: { reason: 'hard_bounce' } });
  });

  it.each([
    ['a required category', 'ana@example.com', { preferences: [{ category: 'required', channel: 'email', state: 'opted_out' }] }, 422, 'required_category'],
    ['an SMS channel on an email', 'ana@example.com', { preferences: [{ category: 'courtesy', channel: 'sms', state: 'opted_out' }] }, 422, 'channel_mismatch'],
    [
      'two states for one preference',
      'ana@example.com',
      {
        preferences: [
          { category: 'courtesy', channel: 'email', state: 'opted_out' },
          { category: 'courtesy', channel: 'email', state: 'opted_in' },
        ],
      },
      422,
      'conflicting_preferences',
    ],
    ['a bad email', 'not-an-email', optOut, 400, 'invalid_request'],
    ['an unknown state', 'ana@example.com', { preferences: [{ category: 'courtesy', channel: 'email', state: 'maybe' }] }, 400, 'invalid_request'],
    ['no preferences', 'ana@example.com', { preferences: [] }, 400, 'invalid_request'],
    ['an unknown field', 'ana@example.com', { ...optOut, extra: 1 }, 400, 'invalid_request'],
  ] as const)('refuses %s (%i) and writes nothing', async (_name, email, body, status, error) => {
    const before = await snapshotTables(t.pool);
    const result = await call('PUT', email, { body });
    expect(result.status).toBe(status);
    expect(result.json.error).toBe(error);
    expect(await snapshotTables(t.pool)).toEqual(before);
  });

  it('refuses a missing token (401) and writes nothing', async () => {
    const before = await snapshotTables(t.pool);
    expect((await call('PUT', 'ana@example.com', { body: optOut, auth: null })).status).toBe(401);
    expect((await call('GET', 'ana@example.com', { auth: null })).status).toBe(401);
    expect(await snapshotTables(t.pool)).toEqual(before);
  });
});
