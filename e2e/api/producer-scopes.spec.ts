import { randomUUID } from 'node:crypto';
import { expect, test } from '@/e2e/fixtures/test';
import { mintApiToken } from '@/lib/auth/api-tokens';

/**
 * Producer tokens hold scopes and may expire, through `next start`: a token scoped to
 * `reminders:write` schedules a reminder (the control) but is refused 403 naming the missing
 * scope on events, evidence, preferences and the cancellation-request listing, with no row
 * written and its last use unrecorded; an expired token is 401. Tokens are inserted as the
 * service stores them (SHA-256 only), so the spec sets the scopes and the expiry it tests.
 */

const year = new Date().getUTCFullYear() + 1;
const hours = (n: number) => new Date(Date.now() + n * 3_600_000).toISOString();

type Sql = <T extends object>(text: string, values?: unknown[]) => Promise<T[]>;

async function insertToken(sql: Sql, { scopes, expiresAt = null }: { scopes: string[]; expiresAt?: string | null }) {
  const minted = mintApiToken();
  const [row] = await sql<{ id: string }>('insert into api_tokens (name, prefix, token_hash, scopes, expires_at) values ($1, $2, $3, $4, $5) returning id', [
    `scopes ${randomUUID().slice(0, 8)}`,
    minted.prefix,
    minted.tokenHash,
    scopes,
    expiresAt,
  ]);
  return { id: row?.id ?? '', header: { authorization: `Bearer ${minted.token}` } };
}

async function tableCounts(sql: Sql): Promise<string> {
  const [row] = await sql<{ n: string }>(
    `select (select count(*) from business_events) || ':' || (select count(*) from reminder_jobs) || ':' || (select count(*) from evidence)
       || ':' || (select count(*) from recipient_preferences) as n`,
  );
  return row?.n ?? '';
}

function reminder() {
  return {
    type: 'renewal_notice_t72',
    identity: { subscription_id: `sub_${randomUUID().slice(0, 8)}`, period_start: `${year}-01-01` },
    recipient: { email: 'scopes.spec@example.com', timeZone: 'Europe/Berlin' },
    dueAt: hours(2),
    deadlineAt: hours(26),
    anchorAt: hours(50),
    payload: { customer_name: 'Ana Silva', plan_name: 'Pro', amount: '49.00', currency: 'EUR' },
    source: 'e2e-scopes',
  };
}

test.describe('producer token scopes and expiry', () => {
  test('a token scoped to reminders:write schedules, and is refused 403 naming the scope everywhere else, writing nothing', async ({ request, sql }) => {
    const token = await insertToken(sql, { scopes: ['reminders:write'] });
    const before = await tableCounts(sql);
    const outside = [
      {
        scope: 'events:write',
        call: () =>
          request.post('/api/v1/events', {
            headers: token.header,
            data: {
              type: 'subscription.renewal',
              identity: { subscription_id: `sub_${randomUUID().slice(0, 8)}`, period_start: `${year}-03-01` },
              revision: 0,
              anchorAt: `${year}-03-01T17:00:00Z`,
              recipient: { email: 'scopes.spec@example.com', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US' },
              contract: { termMonths: 12 },
              payload: { customer_name: 'Ana Silva', plan_name: 'Coffee Box', amount: '190.00', currency: 'USD' },
              source: 'e2e-scopes',
            },
          }),
      },
      // The batch has its single route's scope.
      { scope: 'events:write', call: () => request.post('/api/v1/events/batch', { headers: token.header, data: { items: [] } }) },
      {
        scope: 'evidence:write',
        call: () => request.put(`/api/v1/evidence/scope-${randomUUID().slice(0, 8)}`, { headers: token.header, data: { kind: 'dispute' } }),
      },
      {
        scope: 'preferences:write',
        call: () =>
          request.put('/api/v1/recipients/scopes.spec%40example.com/preferences', {
            headers: token.header,
            data: { preferences: [{ category: 'courtesy', channel: 'email', state: 'opted_out' }], reason: 'asked' },
          }),
      },
      { scope: 'notices:read', call: () => request.get('/api/v1/recipients/scopes.spec%40example.com/preferences', { headers: token.header }) },
      { scope: 'notices:read', call: () => request.get('/api/v1/cancellation-requests', { headers: token.header }) },
    ];
    for (const { scope, call } of outside) {
      const refused = await call();
      expect(refused.status(), scope).toBe(403);
      const body = (await refused.json()) as { error: string; details: string };
      expect(body.error).toBe('missing_scope');
      expect(body.details).toContain(scope);
    }
    expect(await tableCounts(sql)).toBe(before);
    const [unused] = await sql<{ last_used_at: Date | null }>('select last_used_at from api_tokens where id = $1', [token.id]);
    expect(unused?.last_used_at).toBeNull();

    // The control: inside its scope the same token schedules.
    const created = await request.post('/api/v1/reminders', { headers: token.header, data: reminder() });
    expect(created.status()).toBe(201);
  });

  test('an expired token is 401 and writes nothing; the same scopes unexpired are served', async ({ request, sql }) => {
    const expired = await insertToken(sql, { scopes: ['reminders:write'], expiresAt: new Date(Date.now() - 60_000).toISOString() });
    const before = await tableCounts(sql);
    const refused = await request.post('/api/v1/reminders', { headers: expired.header, data: reminder() });
    expect(refused.status()).toBe(401);
    expect(refused.headers()['www-authenticate']).toContain('Bearer');
    expect(((await refused.json()) as { details: string }).details).toContain('expired');
    expect(await tableCounts(sql)).toBe(before);

    const current = await insertToken(sql, { scopes: ['reminders:write'], expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await request.post('/api/v1/reminders', { headers: current.header, data: reminder() })).status()).toBe(201);
  });

  test('an admin creates a scoped, expiring token on the console; it is listed with both', async ({ apiAs, baseURL }) => {
    const admin = await apiAs('admin');
    const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const created = await admin.post('/api/console/tokens', {
      headers: { origin: baseURL ?? '' },
      data: { name: 'scoped billing', reason: 'billing posts events only', scopes: ['events:write', 'notices:read'], expiresAt },
    });
    expect(created.status()).toBe(201);
    const { data } = (await created.json()) as { data: { token: string; summary: { id: string; scopes: string[]; expiresAt: string } } };
    expect(data.summary.scopes).toEqual(['events:write', 'notices:read']);
    expect(data.summary.expiresAt).toBe(expiresAt);
    const past = await admin.post('/api/console/tokens', {
      headers: { origin: baseURL ?? '' },
      data: { name: 'past', reason: 'an expiry in the past', scopes: ['events:write'], expiresAt: new Date(Date.now() - 1000).toISOString() },
    });
    expect(past.status()).toBe(400);
    const none = await admin.post('/api/console/tokens', { headers: { origin: baseURL ?? '' }, data: { name: 'none', reason: 'no scope', scopes: [] } });
    expect(none.status()).toBe(400);
    const listed = (await (await admin.get('/api/console/tokens')).json()) as { data: { id: string; scopes: string[]; expiresAt: string | null }[] };
    expect(listed.data.find((token) => token.id === data.summary.id)).toMatchObject({ scopes: ['events:write', 'notices:read'], expiresAt });
  });
});
