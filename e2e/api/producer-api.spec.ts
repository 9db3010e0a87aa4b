import { randomUUID } from 'node:crypto';
import type { APIRequestContext } from '@playwright/test';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * The producer API through `next start`, as another service calls it: every route, every status
 * it documents (README "For producers"), and for each refusal the proof that nothing changed.
 * Before this spec, every POST /api/v1/reminders answered 500 under `next start` while the
 * handler-level tests, which hand-make Next's route context, passed.
 */

const hours = (n: number) => new Date(Date.now() + n * 3_600_000).toISOString();

function reminder(overrides: Record<string, unknown> = {}) {
  return {
    type: 'renewal_notice_t72',
    identity: { subscription_id: `sub_${randomUUID().slice(0, 8)}`, period_start: '2027-01-01' },
    recipient: { email: 'Producer.Spec@Example.com', timeZone: 'Europe/Berlin' },
    dueAt: hours(2),
    deadlineAt: hours(26),
    // The charge a day after the deadline: its template shows the charge date (t72 window −72 h…−24 h).
    anchorAt: hours(50),
    payload: { customer_name: 'Ana Silva', plan_name: 'Pro', amount: '49.00', currency: 'EUR' },
    source: 'e2e-producer',
    ...overrides,
  };
}

test.describe('producer API', () => {
  let auth: Record<string, string>;
  test.beforeEach(({ seed }) => {
    auth = { authorization: `Bearer ${seed.producer.token}` };
  });

  async function jobCount(sql: <T extends object>(text: string) => Promise<T[]>): Promise<number> {
    const [row] = await sql<{ n: string }>('select count(*)::text as n from reminder_jobs');
    return Number(row?.n);
  }

  test('POST /api/v1/reminders: 201 created, 200 for the same body again, 409 for a different body', async ({ request, sql }) => {
    const body = reminder();
    const created = await request.post('/api/v1/reminders', { headers: auth, data: body });
    expect(created.status()).toBe(201);
    const job = (await created.json()) as Record<string, unknown>;
    expect(job).toMatchObject({
      created: true,
      type: 'renewal_notice_t72',
      revision: 0,
      state: 'pending',
      source: 'e2e-producer',
      dueAt: body.dueAt,
      deadlineAt: body.deadlineAt,
    });
    expect(job.noticeKey).toMatch(/^[0-9a-f]{64}$/);
    expect(created.headers()['cache-control']).toBe('no-store');
    const [row] = await sql<{ state: string; recipient_email: string }>('select state, recipient_email from reminder_jobs where id = $1', [job.id]);
    expect(row).toEqual({ state: 'pending', recipient_email: 'producer.spec@example.com' });

    const again = await request.post('/api/v1/reminders', { headers: auth, data: body });
    expect(again.status()).toBe(200);
    expect(await again.json()).toMatchObject({ id: job.id, noticeKey: job.noticeKey, created: false });

    const before = await jobCount(sql);
    const different = await request.post('/api/v1/reminders', {
      headers: auth,
      data: { ...body, recipient: { email: 'someone.else@example.com', timeZone: 'Europe/Berlin' } },
    });
    expect(different.status()).toBe(409);
    expect(await different.json()).toMatchObject({ error: 'notice_conflict', details: { jobId: job.id, fields: ['recipient.email'] } });
    expect(await jobCount(sql)).toBe(before);

    const revised = await request.post('/api/v1/reminders', { headers: auth, data: { ...body, revision: 1 } });
    expect(revised.status()).toBe(201);
    expect(((await revised.json()) as { noticeKey: string }).noticeKey).not.toBe(job.noticeKey);
  });

  test('POST /api/v1/reminders refuses bad input with a 400 naming the field, and writes nothing', async ({ request, sql }) => {
    const before = await jobCount(sql);
    const notJson = await request.post('/api/v1/reminders', { headers: { ...auth, 'content-type': 'application/json' }, data: Buffer.from('{"type":') });
    expect(notJson.status()).toBe(400);
    expect(await notJson.json()).toEqual({ error: 'invalid_json', details: 'the body is not valid JSON' });

    const empty = await request.post('/api/v1/reminders', { headers: auth });
    expect(empty.status()).toBe(400);
    expect(await empty.json()).toEqual({ error: 'invalid_json', details: 'a JSON body is required' });

    const badFields = await request.post('/api/v1/reminders', {
      headers: auth,
      data: reminder({ dueAt: '2027-01-01T10:00:00+01:00', recipient: { email: 'not-an-email' } }),
    });
    expect(badFields.status()).toBe(400);
    const details = ((await badFields.json()) as { error: string; details: { path: string }[] }).details.map((issue) => issue.path);
    expect(details).toEqual(expect.arrayContaining(['dueAt', 'recipient.email']));

    const unknownType = await request.post('/api/v1/reminders', { headers: auth, data: reminder({ type: 'no_such_notice' }) });
    expect(unknownType.status()).toBe(400);
    expect(await unknownType.json()).toMatchObject({ error: 'invalid_request' });

    const badIdentity = await request.post('/api/v1/reminders', { headers: auth, data: reminder({ identity: { subscription_id: 'sub_1' } }) });
    expect(badIdentity.status()).toBe(400);

    const tooLarge = await request.post('/api/v1/reminders', {
      headers: { ...auth, 'content-type': 'application/json' },
      data: Buffer.from(JSON.stringify(reminder({ payload: { blob: 'x'.repeat(70_000) } }))),
    });
    expect(tooLarge.status()).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ error: 'body_too_large' });

    expect(await jobCount(sql)).toBe(before);
  });

  test('POST /api/v1/reminders refuses a payload its template cannot render with a 422 naming each field, and writes nothing', async ({ request, sql }) => {
    const before = await jobCount(sql);
    const oldKeys = await request.post('/api/v1/reminders', {
      headers: auth,
      data: reminder({ payload: { plan: 'Pro', amount_due: '49.00', charge_at: hours(50) } }),
    });
    expect(oldKeys.status()).toBe(422);
    expect(await oldKeys.json()).toMatchObject({
      error: 'invalid_payload',
      details: { fields: ['payload.customer_name', 'payload.plan_name', 'payload.amount', 'payload.currency'] },
    });
    const wrongType = await request.post('/api/v1/reminders', {
      headers: auth,
      data: reminder({ payload: { customer_name: 'Ana', plan_name: 'Pro', amount: 49, currency: 'euro' } }),
    });
    expect(wrongType.status()).toBe(422);
    const refused = (await wrongType.json()) as { details: { message: string; fields: string[] } };
    expect(refused.details.fields).toEqual(['payload.amount', 'payload.currency']);
    expect(refused.details.message).toMatch(/payload\.amount: must be a decimal string/);
    const noAnchor = await request.post('/api/v1/reminders', { headers: auth, data: reminder({ anchorAt: undefined }) });
    expect(noAnchor.status()).toBe(422);
    expect(await noAnchor.json()).toMatchObject({ error: 'invalid_payload', details: { fields: ['anchorAt'] } });
    expect(await jobCount(sql)).toBe(before);
  });

  test('every route answers 401 with a Bearer challenge to a missing, malformed, unknown or revoked token, and writes nothing', async ({
    request,
    seed,
    sql,
  }) => {
    const routes: { method: 'post' | 'put'; path: string }[] = [
      { method: 'post', path: '/api/v1/reminders' },
      { method: 'post', path: `/api/v1/reminders/${randomUUID()}/cancel` },
      { method: 'put', path: '/api/v1/evidence/recon-401' },
      { method: 'post', path: '/api/v1/evidence/recon-401/resolve' },
      { method: 'post', path: '/api/v1/events' },
    ];
    const tokens: [string, Record<string, string>, string][] = [
      ['missing', {}, 'send Authorization: Bearer <token>'],
      ['malformed', { authorization: 'Bearer not-a-token' }, 'the bearer token is not a notice-ledger API token'],
      ['unknown', { authorization: `Bearer ${seed.producer.token.slice(0, -4)}AAAA` }, 'the bearer token is not known'],
      ['revoked', { authorization: `Bearer ${seed.producer.revokedToken}` }, 'the bearer token has been revoked'],
    ];
    const [beforeJobs] = await sql<{ n: string }>('select (select count(*) from reminder_jobs) + (select count(*) from evidence) as n');
    const [beforeToken] = await sql<{ last_used_at: Date | null }>("select last_used_at from api_tokens where name = 'e2e revoked producer'");
    for (const route of routes) {
      for (const [name, headers, detail] of tokens) {
        const response = await request[route.method](route.path, { headers, data: reminder() });
        expect(response.status(), `${route.path} with a ${name} token`).toBe(401);
        expect(response.headers()['www-authenticate']).toBe('Bearer realm="notice-ledger"');
        expect(await response.json()).toEqual({ error: 'unauthorized', details: detail });
      }
    }
    const [afterJobs] = await sql<{ n: string }>('select (select count(*) from reminder_jobs) + (select count(*) from evidence) as n');
    expect(afterJobs).toEqual(beforeJobs);
    expect(await sql("select last_used_at from api_tokens where name = 'e2e revoked producer'")).toEqual([beforeToken]);
  });

  async function schedule(
    request: APIRequestContext,
    headers: Record<string, string>,
    overrides: Record<string, unknown> = {},
  ): Promise<{ id: string; noticeKey: string }> {
    const response = await request.post('/api/v1/reminders', { headers, data: reminder(overrides) });
    expect(response.status()).toBe(201);
    return (await response.json()) as { id: string; noticeKey: string };
  }

  test('POST /api/v1/reminders/{id}/cancel: 200, then 409 once cancelled; 404 for an unknown id; 400 for a malformed id', async ({ request, sql }) => {
    const job = await schedule(request, auth);
    const cancelled = await request.post(`/api/v1/reminders/${job.id}/cancel`, { headers: auth, data: { reason: 'customer cancelled the subscription' } });
    expect(cancelled.status()).toBe(200);
    expect(await cancelled.json()).toMatchObject({ id: job.id, state: 'cancelled' });
    const [audit] = await sql<{ reason: string }>("select reason from audit_log where action = 'reminder.cancel' and target_id = $1", [job.id]);
    expect(audit?.reason).toBe('customer cancelled the subscription');

    const twice = await request.post(`/api/v1/reminders/${job.id}/cancel`, { headers: auth });
    expect(twice.status()).toBe(409);
    expect(await twice.json()).toMatchObject({ error: 'not_pending', details: { state: 'cancelled' } });

    const unknown = await request.post(`/api/v1/reminders/${randomUUID()}/cancel`, { headers: auth });
    expect(unknown.status()).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'not_found', details: 'no reminder job with that id' });

    const other = await schedule(request, auth);
    const [before] = await sql('select * from reminder_jobs where id = $1', [other.id]);
    for (const malformed of ['not-a-uuid', '-'.repeat(36), `${other.id}x`]) {
      const response = await request.post(`/api/v1/reminders/${encodeURIComponent(malformed)}/cancel`, { headers: auth });
      expect(response.status(), malformed).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_request', details: [{ path: 'id' }] });
    }
    const badBody = await request.post(`/api/v1/reminders/${other.id}/cancel`, { headers: auth, data: { reason: 'x', extra: true } });
    expect(badBody.status()).toBe(400);
    expect(await sql('select * from reminder_jobs where id = $1', [other.id])).toEqual([before]);
  });

  test('evidence: PUT opens (201, then 200), a different kind is 409, resolve suppresses the jobs that name it (200), again alreadyResolved', async ({
    request,
    sql,
  }) => {
    const ref = `recon-${randomUUID().slice(0, 8)}`;
    const opened = await request.put(`/api/v1/evidence/${ref}`, { headers: auth, data: { kind: 'reconciliation_exception', summary: 'card declined' } });
    expect(opened.status()).toBe(201);
    expect(await opened.json()).toMatchObject({ ref, kind: 'reconciliation_exception', state: 'open', created: true, resolvedAt: null });
    const reopened = await request.put(`/api/v1/evidence/${ref}`, { headers: auth, data: { kind: 'reconciliation_exception', summary: 'card declined' } });
    expect(reopened.status()).toBe(200);
    expect(await reopened.json()).toMatchObject({ ref, created: false });
    const conflicting = await request.put(`/api/v1/evidence/${ref}`, { headers: auth, data: { kind: 'chargeback' } });
    expect(conflicting.status()).toBe(409);
    expect(await conflicting.json()).toMatchObject({ error: 'evidence_conflict' });

    const job = await schedule(request, auth, {
      type: 'payment_recovery',
      identity: { account_id: 'acct_e2e', reconciliation_id: ref, exception_id: 'exc_1' },
      anchorAt: undefined,
      payload: { customer_name: 'Ana Silva', amount: '49.00', currency: 'EUR', reference: 'RC-2026-0042' },
      evidenceRef: ref,
    });
    const resolved = await request.post(`/api/v1/evidence/${ref}/resolve`, { headers: auth, data: { reason: 'customer paid' } });
    expect(resolved.status()).toBe(200);
    expect(await resolved.json()).toMatchObject({ ref, state: 'resolved', alreadyResolved: false, suppressedJobIds: [job.id] });
    expect(await sql('select state from reminder_jobs where id = $1', [job.id])).toEqual([{ state: 'suppressed' }]);
    const again = await request.post(`/api/v1/evidence/${ref}/resolve`, { headers: auth });
    expect(again.status()).toBe(200);
    expect(await again.json()).toMatchObject({ alreadyResolved: true, suppressedJobIds: [] });

    const [before] = await sql<{ n: string }>('select count(*)::text as n from evidence');
    const badRef = await request.put(`/api/v1/evidence/${encodeURIComponent('bad ref!')}`, { headers: auth, data: { kind: 'reconciliation_exception' } });
    expect(badRef.status()).toBe(400);
    expect(await badRef.json()).toMatchObject({ error: 'invalid_request', details: [{ path: 'ref' }] });
    const badKind = await request.put(`/api/v1/evidence/recon-${randomUUID().slice(0, 8)}`, { headers: auth, data: { kind: '' } });
    expect(badKind.status()).toBe(400);
    const noBody = await request.put(`/api/v1/evidence/recon-${randomUUID().slice(0, 8)}`, { headers: auth });
    expect(noBody.status()).toBe(400);
    expect(await sql<{ n: string }>('select count(*)::text as n from evidence')).toEqual([before]);
  });

  test('a route answers 405 to a method it does not serve', async ({ request }) => {
    expect((await request.get('/api/v1/reminders', { headers: auth })).status()).toBe(405);
  });
});
