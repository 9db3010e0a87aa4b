import { randomUUID } from 'node:crypto';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * POST /api/v1/events through `next start`, as a billing service posts a renewal: the plan (201),
 * the same post again (200, the same plan), a changed body (409), a new revision that re-plans and
 * an older one that arrives late (409), bad input (400) — and for each refusal, nothing written.
 * Also checks that the console started with the notice configuration its instrumentation hook validated.
 */

const year = new Date().getUTCFullYear() + 1;

function renewal(overrides: Record<string, unknown> = {}) {
  return {
    type: 'subscription.renewal',
    identity: { subscription_id: `sub_${randomUUID().slice(0, 8)}`, period_start: `${year}-03-01` },
    revision: 0,
    anchorAt: `${year}-03-01T17:00:00Z`,
    recipient: { email: 'Events.Spec@Example.com', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US' },
    contract: { termMonths: 12 },
    payload: { customer_name: 'Ana Silva', plan_name: 'Coffee Box', amount: '190.00', currency: 'USD' },
    source: 'e2e-events',
    ...overrides,
  };
}

type Answer = { eventId: string; created: boolean; planned: { noticeType: string; jobId: string; ruleIds: string[] }[]; unplanned: unknown[] };

test.describe('events API', () => {
  let auth: Record<string, string>;
  test.beforeEach(({ seed }) => {
    auth = { authorization: `Bearer ${seed.producer.token}` };
  });

  async function counts(sql: <T extends object>(text: string) => Promise<T[]>): Promise<string> {
    const [row] = await sql<{ n: string }>(
      "select (select count(*) from business_events) || ':' || (select count(*) from reminder_jobs) || ':' || (select count(*) from unplanned_notices) as n",
    );
    return row?.n ?? '';
  }

  test('201 plans the notices, 200 for the same body again, 409 for a different body or a stale revision', async ({ request, sql }) => {
    const body = renewal();
    const created = await request.post('/api/v1/events', { headers: auth, data: body });
    expect(created.status()).toBe(201);
    const plan = (await created.json()) as Answer;
    expect(plan.planned.map((notice) => notice.noticeType)).toEqual(['renewal_notice_t72', 'renewal_notice_t24', 'auto_renewal_notice']);
    expect(plan.planned[2]?.ruleIds).toEqual(['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1']);
    const jobs = await sql<{ state: string; event_id: string }>('select state, event_id from reminder_jobs where event_id = $1', [plan.eventId]);
    expect(jobs).toHaveLength(3);

    const again = await request.post('/api/v1/events', { headers: auth, data: body });
    expect(again.status()).toBe(200);
    expect(await again.json()).toEqual({ ...plan, created: false });

    const before = await counts(sql);
    const changed = await request.post('/api/v1/events', { headers: auth, data: { ...body, payload: { ...body.payload, plan_name: 'Other' } } });
    expect(changed.status()).toBe(409);
    expect(await changed.json()).toMatchObject({ error: 'event_conflict' });
    expect(await counts(sql)).toBe(before);

    const revised = await request.post('/api/v1/events', { headers: auth, data: { ...body, revision: 1, anchorAt: `${year}-03-08T17:00:00Z` } });
    expect(revised.status()).toBe(201);
    const old = await sql<{ state: string }>('select distinct state from reminder_jobs where event_id = $1', [plan.eventId]);
    expect(old).toEqual([{ state: 'cancelled' }]);

    const afterRevision = await counts(sql);
    const stale = await request.post('/api/v1/events', { headers: auth, data: { ...body, revision: 0, payload: { ...body.payload, plan_name: 'late' } } });
    expect(stale.status()).toBe(409);
    expect(await counts(sql)).toBe(afterRevision);
  });

  test('422 for a payload the planned notices cannot render, naming each field; nothing written', async ({ request, sql }) => {
    const before = await counts(sql);
    const refused = await request.post('/api/v1/events', {
      headers: auth,
      data: renewal({ payload: { customer_name: 'Ana Silva', plan_name: 'Coffee Box', amount: '190,00', currency: 'usd' } }),
    });
    expect(refused.status()).toBe(422);
    expect(await refused.json()).toMatchObject({ error: 'invalid_payload', details: { fields: ['payload.amount', 'payload.currency'] } });
    expect(await counts(sql)).toBe(before);
  });

  test('400 names the field or the known event types, and writes nothing', async ({ request, sql }) => {
    const before = await counts(sql);
    const unknown = await request.post('/api/v1/events', { headers: auth, data: renewal({ type: 'subscription.paused' }) });
    expect(unknown.status()).toBe(400);
    expect(JSON.stringify(await unknown.json())).toContain('known: subscription.renewal, reconciliation.exception');
    const region = await request.post('/api/v1/events', {
      headers: auth,
      data: renewal({ recipient: { email: 'a@example.com', region: 'california', timeZone: 'America/Los_Angeles', locale: 'en-US' } }),
    });
    expect(region.status()).toBe(400);
    expect(JSON.stringify(await region.json())).toContain('recipient.region');
    expect(await counts(sql)).toBe(before);
  });

  test('a reminder with anchorAt outside its window is 422 naming the rule', async ({ request, sql }) => {
    const before = await counts(sql);
    const response = await request.post('/api/v1/reminders', {
      headers: auth,
      data: {
        type: 'auto_renewal_notice',
        identity: { subscription_id: `sub_${randomUUID().slice(0, 8)}`, period_start: `${year}-03-01` },
        recipient: { email: 'a@example.com', timeZone: 'America/Los_Angeles' },
        anchorAt: `${year}-03-01T17:00:00Z`,
        region: 'US-CA',
        contract: { termMonths: 12 },
        dueAt: `${year}-02-28T17:00:00Z`,
        payload: { customer_name: 'Ana Silva', plan_name: 'Coffee Box', amount: '190.00', currency: 'USD' },
        source: 'e2e-events',
      },
    });
    expect(response.status()).toBe(422);
    expect(await response.json()).toMatchObject({ error: 'outside_window', details: { ruleIds: ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1'] } });
    expect(await counts(sql)).toBe(before);
  });
});
