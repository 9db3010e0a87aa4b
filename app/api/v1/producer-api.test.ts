import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, revokeApiToken } from '@/lib/auth/api-tokens';
import { closeWakeupPublisher } from '@/lib/queue';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { PUT as openEvidenceRoute } from './evidence/[ref]/route';
import { POST as resolveEvidenceRoute } from './evidence/[ref]/resolve/route';
import { POST as cancelRoute } from './reminders/[id]/cancel/route';
import { POST as scheduleRoute } from './reminders/route';
import { GET as listCancellationRequestsRoute } from './cancellation-requests/route';
import { recordCancellationRequest } from '@/db/queries/cancellation-requests';
import { insertSentNotice } from '@/testing/recipient';

type Route = (request: Request, context: { params?: Promise<Record<string, string>> }) => Promise<Response>;

let t: TestDatabase;
let token = '';
let tokenPrefix = '';
let revokedToken = '';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

async function call(route: Route, { body, auth, params = {}, raw }: { body?: unknown; auth?: string | null; params?: Record<string, string>; raw?: string }) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const authorization = auth === undefined ? `Bearer ${token}` : auth;
  if (authorization !== null) headers.authorization = authorization;
  const request = new Request('http://localhost/api/v1/test', {
    method: 'POST',
    headers,
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  // As `next start` calls a handler: a route without dynamic segments gets no params at all.
  const response = await route(request, { params: Object.keys(params).length > 0 ? Promise.resolve(params) : undefined });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** A fingerprint of every table a producer request could touch: equal means nothing changed. */
async function snapshot(): Promise<string> {
  const tables = ['reminder_jobs', 'audit_log', 'evidence', 'api_tokens'];
  const parts: string[] = [];
  for (const table of tables) {
    const { rows } = await t.pool.query<{ n: number; h: string }>(
      `select count(*) as n, md5(coalesce(string_agg(x::text, ',' order by x::text), '')) as h from ${table} x`,
    );
    parts.push(`${table}:${rows[0]?.n}:${rows[0]?.h}`);
  }
  const boss = await t.pool.query<{ exists: boolean }>(`select to_regclass('pgboss.job') is not null as exists`);
  if (boss.rows[0]?.exists) {
    const { rows } = await t.pool.query<{ n: number }>(`select count(*) as n from pgboss.job where name = 'notice-wakeup'`);
    parts.push(`pgboss:${rows[0]?.n}`);
  }
  return parts.join('|');
}

/** What payment_recovery's template declares (config/notice-ledger.json templates). */
const recoveryPayload = { customer_name: 'Ada Lovelace', amount: '49.00', currency: 'EUR', reference: 'RC-2026-0042' };

let exceptionCounter = 0;
function reminder(overrides: Record<string, unknown> = {}) {
  exceptionCounter += 1;
  const now = Date.now();
  return {
    type: 'payment_recovery',
    identity: { account_id: 'acct_42', reconciliation_id: 'rec_2026_03_01', exception_id: `exc_${exceptionCounter}` },
    revision: 0,
    recipient: { email: 'Billing@Example.com', timeZone: 'Europe/Berlin' },
    dueAt: iso(now + 2 * HOUR),
    deadlineAt: iso(now + 26 * HOUR),
    payload: recoveryPayload,
    evidenceRef: 'recon:2026-03-01:exc',
    customerId: 'cus_42',
    source: 'nightly-reconciliation',
    ...overrides,
  };
}

async function expectRefusedWithoutWrites(route: Route, args: Parameters<typeof call>[1], status: number) {
  const before = await snapshot();
  const result = await call(route, args);
  expect(result.status).toBe(status);
  expect(typeof result.json.error).toBe('string');
  expect(await snapshot()).toBe(before);
  return result;
}

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  const created = await createApiToken(t.db, { name: 'billing service', createdBy: null, actor: 'admin@example.com' });
  token = created.token;
  tokenPrefix = created.summary.prefix;
  const revoked = await createApiToken(t.db, { name: 'old service', createdBy: null, actor: 'admin@example.com' });
  revokedToken = revoked.token;
  await revokeApiToken(t.db, { id: revoked.summary.id, actor: 'admin@example.com', reason: 'rotated' });
});

afterAll(async () => {
  await closeWakeupPublisher();
  await t.drop();
});

describe('POST /api/v1/reminders', () => {
  it('creates a job (201), publishes its wake-up for dueAt in the same transaction, audits as the token', async () => {
    // Due within QUEUE_HORIZON (15 min): the wake-up enters the queue at scheduling.
    const body = reminder({ dueAt: iso(Date.now() + 10 * 60_000) });
    const result = await call(scheduleRoute, { body });
    expect(result.status).toBe(201);
    expect(result.json).toMatchObject({ created: true, state: 'pending', type: 'payment_recovery', revision: 0, dueAt: body.dueAt });
    const id = String(result.json.id);
    const job = await t.pool.query(`select recipient_email, wakeup_published_at, next_attempt_at from reminder_jobs where id = $1`, [id]);
    expect(job.rows[0]?.recipient_email).toBe('billing@example.com');
    expect(job.rows[0]?.wakeup_published_at).not.toBeNull();
    const wake = await t.pool.query(`select start_after from pgboss.job where name = 'notice-wakeup' and data->>'jobId' = $1`, [id]);
    expect(wake.rows).toHaveLength(1);
    expect((wake.rows[0]?.start_after as Date).toISOString()).toBe(body.dueAt);
    const audit = await t.pool.query(`select actor, action from audit_log where target_id = $1`, [id]);
    expect(audit.rows).toEqual([{ actor: `token:${tokenPrefix}`, action: 'reminder.schedule' }]);
    const used = await t.pool.query(`select last_used_at from api_tokens where prefix = $1`, [tokenPrefix]);
    expect(used.rows[0]?.last_used_at).not.toBeNull();
  });

  it('a job due beyond the hot-queue horizon (2 h) is created with nothing in the queue: its row holds the delay for the dispatcher', async () => {
    const body = reminder();
    const result = await call(scheduleRoute, { body });
    expect(result.status).toBe(201);
    const id = String(result.json.id);
    const job = await t.pool.query(`select wakeup_published_at, next_attempt_at from reminder_jobs where id = $1`, [id]);
    expect(job.rows[0]?.wakeup_published_at).toBeNull();
    expect((job.rows[0]?.next_attempt_at as Date).toISOString()).toBe(body.dueAt);
    const wake = await t.pool.query(`select 1 from pgboss.job where name = 'notice-wakeup' and data->>'jobId' = $1`, [id]);
    expect(wake.rows).toHaveLength(0);
  });

  it('a retry with the same body returns the existing job (200) and writes nothing', async () => {
    const body = reminder();
    const first = await call(scheduleRoute, { body });
    expect(first.status).toBe(201);
    const before = await snapshot();
    const again = await call(scheduleRoute, { body: { ...body, recipient: { ...body.recipient, email: 'billing@example.com' }, source: 'replay-7' } });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ id: first.json.id, created: false });
    expect(await snapshot()).toBe(before);
  });

  it('two concurrent retries of one notice make one job: one 201, one 200', async () => {
    // Due within QUEUE_HORIZON, so its one wake-up is in the queue to count.
    const body = reminder({ dueAt: iso(Date.now() + 10 * 60_000) });
    const results = await Promise.all([call(scheduleRoute, { body }), call(scheduleRoute, { body })]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 201]);
    expect(results[0]?.json.id).toBe(results[1]?.json.id);
    const jobs = await t.pool.query(`select count(*)::int as n from reminder_jobs where id = $1`, [results[0]?.json.id]);
    expect(jobs.rows[0]?.n).toBe(1);
    const wakeups = await t.pool.query(`select count(*)::int as n from pgboss.job where data->>'jobId' = $1`, [results[0]?.json.id]);
    expect(wakeups.rows[0]?.n).toBe(1);
  });

  it('the same notice with a different body is a 409 naming the fields, and nothing changes', async () => {
    const body = reminder();
    const first = await call(scheduleRoute, { body });
    expect(first.status).toBe(201);
    const result = await expectRefusedWithoutWrites(
      scheduleRoute,
      { body: { ...body, dueAt: iso(Date.now() + 3 * HOUR), payload: { ...recoveryPayload, reference: 'RC-2026-0043' } } },
      409,
    );
    expect(result.json.error).toBe('notice_conflict');
    expect(result.json.details).toMatchObject({ jobId: first.json.id, fields: ['dueAt', 'payload'] });
  });

  it('a revision bump is a new notice: a second job', async () => {
    const body = reminder();
    const first = await call(scheduleRoute, { body });
    const bumped = await call(scheduleRoute, { body: { ...body, revision: 1, payload: { ...recoveryPayload, reference: 'RC-2026-0043' } } });
    expect(bumped.status).toBe(201);
    expect(bumped.json.id).not.toBe(first.json.id);
    expect(bumped.json.revision).toBe(1);
  });

  it.each([
    ['no Authorization header', null],
    ['a non-bearer scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['a malformed token', 'Bearer not-a-token'],
    ['an unknown token', `Bearer nlk_00000000_${'A'.repeat(43)}`],
  ])('401 for %s, nothing written', async (_name, auth) => {
    const result = await expectRefusedWithoutWrites(scheduleRoute, { body: reminder(), auth }, 401);
    expect(result.json.error).toBe('unauthorized');
  });

  it('401 for a revoked token, nothing written', async () => {
    const result = await expectRefusedWithoutWrites(scheduleRoute, { body: reminder(), auth: `Bearer ${revokedToken}` }, 401);
    expect(result.json.details).toMatch(/revoked/);
  });

  it('400 for malformed JSON and for an empty body, not 500', async () => {
    const malformed = await expectRefusedWithoutWrites(scheduleRoute, { raw: '{"type": "payment_recovery",' }, 400);
    expect(malformed.json.error).toBe('invalid_json');
    await expectRefusedWithoutWrites(scheduleRoute, { raw: '' }, 400);
    await expectRefusedWithoutWrites(scheduleRoute, { raw: '[1,2]' }, 400);
  });

  const now = Date.now();
  it.each([
    ['dueAt with an offset', { dueAt: '2030-01-01T10:00:00+02:00' }, 'dueAt'],
    ['dueAt without a zone', { dueAt: '2030-01-01T10:00:00' }, 'dueAt'],
    ['dueAt as a date only', { dueAt: '2030-01-01' }, 'dueAt'],
    ['deadlineAt before dueAt', { deadlineAt: iso(now + HOUR) }, 'deadlineAt'],
    ['an unknown notice type', { type: 'birthday_card' }, ''],
    ['identity missing a field', { identity: { account_id: 'a', reconciliation_id: 'r' } }, ''],
    ['an identity value with a space', { identity: { account_id: 'a b', reconciliation_id: 'r', exception_id: 'e' } }, ''],
    ['a negative revision', { revision: -1 }, 'revision'],
    ['an invalid email', { recipient: { email: 'not-an-email', timeZone: 'UTC' } }, 'recipient.email'],
    ['an unknown time zone', { recipient: { email: 'a@example.com', timeZone: 'Mars/Olympus' } }, 'recipient.timeZone'],
    ['a payload carrying a body', { payload: { html: '<p>hi</p>' } }, 'payload'],
    ['a payload carrying card data', { payload: { card: { card_number: '4242' } } }, 'payload'],
    ['an oversized payload', { payload: { notes: 'x'.repeat(5_000) } }, 'payload'],
    ['an unknown field', { priority: 'high' }, ''],
    ['a missing source', { source: undefined }, 'source'],
    ['a deadline already passed', { dueAt: iso(now - 3 * HOUR), deadlineAt: iso(now - HOUR) }, ''],
    ['dueAt beyond MAX_DELAY (400 days)', { dueAt: iso(now + 401 * 24 * HOUR), deadlineAt: iso(now + 402 * 24 * HOUR) }, ''],
  ])('400 for %s, nothing written', async (_name, overrides, path) => {
    const result = await expectRefusedWithoutWrites(scheduleRoute, { body: reminder(overrides) }, 400);
    expect(result.json.error).toBe('invalid_request');
    if (path) expect(JSON.stringify(result.json.details)).toContain(path);
  });

  it.each([
    [
      'a declared variable missing',
      { payload: { customer_name: 'Ada', currency: 'EUR', reference: 'RC-1' } },
      'payload.amount',
      /payload\.amount: is required \(decimal\)/,
    ],
    ['an amount that is a number', { payload: { ...recoveryPayload, amount: 49 } }, 'payload.amount', /payload\.amount: must be a decimal string/],
    ['an amount with its currency in it', { payload: { ...recoveryPayload, amount: '49.00 EUR' } }, 'payload.amount', /must be a decimal string such as/],
    ['a currency that is not ISO 4217', { payload: { ...recoveryPayload, currency: 'EURO' } }, 'payload.currency', /ISO 4217/],
    ['a lower-case currency', { payload: { ...recoveryPayload, currency: 'eur' } }, 'payload.currency', /ISO 4217/],
    ['an empty customer name', { payload: { ...recoveryPayload, customer_name: '  ' } }, 'payload.customer_name', /must not be empty/],
    [
      'the old demo keys',
      { payload: { plan: 'Team', amount_due: '49.00', charge_at: '2026-03-01' } },
      'payload.customer_name',
      /payload\.customer_name: is required/,
    ],
  ])('422 for %s, naming the field; nothing written', async (_name, overrides, field, message) => {
    const result = await expectRefusedWithoutWrites(scheduleRoute, { body: reminder(overrides) }, 422);
    expect(result.json.error).toBe('invalid_payload');
    expect((result.json.details as { fields: string[] }).fields).toContain(field);
    expect(JSON.stringify(result.json.details)).toMatch(message);
  });

  it('422 for a renewal notice without anchorAt: its template shows the charge date, which only the anchor gives', async () => {
    const now = Date.now();
    const body = {
      type: 'renewal_notice_t24',
      identity: { subscription_id: `sub_anchorless_${exceptionCounter++}`, period_start: '2030-01-01' },
      recipient: { email: 'a@example.com', timeZone: 'UTC' },
      dueAt: iso(now + HOUR),
      deadlineAt: iso(now + 2 * HOUR),
      payload: { customer_name: 'Ada', plan_name: 'Pro', amount: '49.00', currency: 'EUR' },
      source: 'billing',
    };
    const result = await expectRefusedWithoutWrites(scheduleRoute, { body }, 422);
    expect((result.json.details as { fields: string[] }).fields).toEqual(['anchorAt']);
  });

  it('stores the recipient locale canonicalised and refuses one that is not BCP 47 (400)', async () => {
    const created = await call(scheduleRoute, { body: reminder({ recipient: { email: 'a@example.com', timeZone: 'Europe/Berlin', locale: 'de-at' } }) });
    expect(created.status).toBe(201);
    const { rows } = await t.pool.query<{ recipient_locale: string | null }>('select recipient_locale from reminder_jobs where id = $1', [created.json.id]);
    expect(rows[0]?.recipient_locale).toBe('de-AT');
    const refused = await expectRefusedWithoutWrites(
      scheduleRoute,
      { body: reminder({ recipient: { email: 'a@example.com', timeZone: 'UTC', locale: 'not a locale!' } }) },
      400,
    );
    expect(JSON.stringify(refused.json.details)).toContain('recipient.locale');
  });
});

describe('POST /api/v1/reminders/{id}/cancel', () => {
  it('cancels a pending job (200) with an audit row; a second cancel is a 409 that changes nothing', async () => {
    const created = await call(scheduleRoute, { body: reminder() });
    const id = String(created.json.id);
    const cancelled = await call(cancelRoute, { params: { id }, body: { reason: 'customer paid by wire' } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.state).toBe('cancelled');
    const audit = await t.pool.query(`select actor, reason from audit_log where target_id = $1 and action = 'reminder.cancel'`, [id]);
    expect(audit.rows).toEqual([{ actor: `token:${tokenPrefix}`, reason: 'customer paid by wire' }]);
    const again = await expectRefusedWithoutWrites(cancelRoute, { params: { id } }, 409);
    expect(again.json.details).toMatchObject({ state: 'cancelled' });
  });

  it('404 for an unknown id, 400 for a malformed id or a bad body, 401 without a token — nothing written', async () => {
    await expectRefusedWithoutWrites(cancelRoute, { params: { id: '00000000-0000-4000-8000-000000000000' } }, 404);
    const malformed = await expectRefusedWithoutWrites(cancelRoute, { params: { id: 'drop table' } }, 400);
    expect(malformed.json.details).toEqual([{ path: 'id', message: expect.stringContaining('reminder job id') }]);
    // Passed the query layer's shape check and failed PostgreSQL's uuid cast: a 500 until the route checked it.
    await expectRefusedWithoutWrites(cancelRoute, { params: { id: '-'.repeat(36) } }, 400);
    const created = await call(scheduleRoute, { body: reminder() });
    const id = String(created.json.id);
    await expectRefusedWithoutWrites(cancelRoute, { params: { id }, raw: '{reason' }, 400);
    await expectRefusedWithoutWrites(cancelRoute, { params: { id }, body: { reason: 'x', extra: 1 } }, 400);
    await expectRefusedWithoutWrites(cancelRoute, { params: { id }, auth: null }, 401);
  });
});

describe('evidence', () => {
  it('PUT opens (201), repeats (200), refuses a different kind (409) without writing', async () => {
    const opened = await call(openEvidenceRoute, { params: { ref: 'recon:open-1' }, body: { kind: 'reconciliation_exception', summary: 'unmatched payout' } });
    expect(opened.status).toBe(201);
    expect(opened.json).toMatchObject({ ref: 'recon:open-1', state: 'open', created: true });
    const before = await snapshot();
    const again = await call(openEvidenceRoute, { params: { ref: 'recon:open-1' }, body: { kind: 'reconciliation_exception' } });
    expect(again.status).toBe(200);
    expect(await snapshot()).toBe(before);
    await expectRefusedWithoutWrites(openEvidenceRoute, { params: { ref: 'recon:open-1' }, body: { kind: 'chargeback' } }, 409);
  });

  it('400 for a bad ref or body, 401 without a token — nothing written', async () => {
    await expectRefusedWithoutWrites(openEvidenceRoute, { params: { ref: 'has space' }, body: { kind: 'x' } }, 400);
    await expectRefusedWithoutWrites(openEvidenceRoute, { params: { ref: 'recon:x' }, raw: 'nope' }, 400);
    await expectRefusedWithoutWrites(openEvidenceRoute, { params: { ref: 'recon:x' }, body: { kind: 'x', details: { body: 'mail' } } }, 400);
    await expectRefusedWithoutWrites(openEvidenceRoute, { params: { ref: 'recon:x' }, body: {} }, 400);
    await expectRefusedWithoutWrites(openEvidenceRoute, { params: { ref: 'recon:x' }, body: { kind: 'x' }, auth: `Bearer ${revokedToken}` }, 401);
    await expectRefusedWithoutWrites(resolveEvidenceRoute, { params: { ref: 'recon:x' }, raw: '{' }, 400);
    await expectRefusedWithoutWrites(resolveEvidenceRoute, { params: { ref: 'recon:x' }, auth: null }, 401);
  });

  it('resolving suppresses the pending reminders that cite it, once; a resolved record cannot be reopened', async () => {
    const ref = 'recon:2026-03-02:exc-9';
    await call(openEvidenceRoute, { params: { ref }, body: { kind: 'reconciliation_exception' } });
    const pending = await call(scheduleRoute, { body: reminder({ evidenceRef: ref }) });
    const toCancel = await call(scheduleRoute, { body: reminder({ evidenceRef: ref }) });
    await call(cancelRoute, { params: { id: String(toCancel.json.id) } });

    const resolved = await call(resolveEvidenceRoute, { params: { ref }, body: { reason: 'payout matched' } });
    expect(resolved.status).toBe(200);
    expect(resolved.json).toMatchObject({ state: 'resolved', alreadyResolved: false, suppressedJobIds: [pending.json.id] });
    const job = await t.pool.query(`select state, suppression_reason from reminder_jobs where id = $1`, [pending.json.id]);
    expect(job.rows[0]).toEqual({ state: 'suppressed', suppression_reason: 'evidence_resolved' });
    const cancelled = await t.pool.query(`select state from reminder_jobs where id = $1`, [toCancel.json.id]);
    expect(cancelled.rows[0]?.state).toBe('cancelled');

    const before = await snapshot();
    const again = await call(resolveEvidenceRoute, { params: { ref } });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ alreadyResolved: true, suppressedJobIds: [] });
    expect(await snapshot()).toBe(before);
    await expectRefusedWithoutWrites(openEvidenceRoute, { params: { ref }, body: { kind: 'reconciliation_exception' } }, 409);
  });

  it('resolving a reference nobody opened records it resolved', async () => {
    const result = await call(resolveEvidenceRoute, { params: { ref: 'recon:never-opened' }, body: { kind: 'reconciliation_exception' } });
    expect(result.status).toBe(200);
    expect(result.json).toMatchObject({ ref: 'recon:never-opened', state: 'resolved', kind: 'reconciliation_exception' });
  });
});

describe('GET /api/v1/cancellation-requests', () => {
  async function list(query: string, auth: string | null = `Bearer ${token}`) {
    const request = new Request(`http://localhost/api/v1/cancellation-requests${query}`, { headers: auth ? { authorization: auth } : {} });
    const response = await listCancellationRequestsRoute(request, { params: undefined });
    return {
      status: response.status,
      json: (await response.json()) as { requests?: { noticeKey: string; requestedAt: string; type: string }[]; nextCursor?: string | null; error?: string },
    };
  }

  it('pages the customers’ requests oldest first with a cursor, from `since`, only once settled; refuses without a token or with a bad query', async () => {
    await t.pool.query('delete from cancellation_requests');
    const keys: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const notice = await insertSentNotice(t.db);
      await recordCancellationRequest(t.db, {
        noticeKey: notice.job.noticeKey,
        jobId: notice.job.id,
        noticeType: notice.job.noticeType,
        identity: notice.job.identity,
        subjectId: notice.job.subjectId,
        customerId: null,
        source: 'recipient_page',
        codeVerified: false,
      });
      await t.pool.query(`update cancellation_requests set requested_at = now() - make_interval(mins => $2) where notice_key = $1`, [
        notice.job.noticeKey,
        60 - i,
      ]);
      keys.push(notice.job.noticeKey);
    }
    // Just made: not listed until it has surely committed (LISTING_SETTLE_MS).
    const fresh = await insertSentNotice(t.db);
    await recordCancellationRequest(t.db, {
      noticeKey: fresh.job.noticeKey,
      jobId: fresh.job.id,
      noticeType: fresh.job.noticeType,
      identity: fresh.job.identity,
      subjectId: fresh.job.subjectId,
      customerId: null,
      source: 'recipient_page',
      codeVerified: true,
    });

    const first = await list('?limit=2');
    expect(first.status).toBe(200);
    expect(first.json.requests?.map((r) => r.noticeKey)).toEqual(keys.slice(0, 2));
    expect(first.json.requests?.[0]).toMatchObject({ type: 'renewal_notice_t72', source: 'recipient_page', codeVerified: false, identity: expect.any(Object) });
    const second = await list(`?limit=2&cursor=${first.json.nextCursor ?? ''}`);
    expect(second.json.requests?.map((r) => r.noticeKey)).toEqual(keys.slice(2, 4));
    const third = await list(`?limit=2&cursor=${second.json.nextCursor ?? ''}`);
    expect(third.json.requests?.map((r) => r.noticeKey)).toEqual(keys.slice(4));
    const end = await list(`?cursor=${third.json.nextCursor ?? ''}`);
    expect(end.json).toEqual({ requests: [], nextCursor: third.json.nextCursor });

    const since = (await t.pool.query<{ at: Date }>('select requested_at as at from cancellation_requests where notice_key = $1', [keys[3]])).rows[0]?.at;
    expect((await list(`?since=${since?.toISOString() ?? ''}`)).json.requests?.map((r) => r.noticeKey)).toEqual(keys.slice(3));

    expect((await list('', null)).status).toBe(401);
    for (const query of ['?cursor=123', '?limit=0', '?limit=501', '?since=yesterday', '?other=1']) {
      const refused = await list(query);
      expect(refused.status, query).toBe(400);
      expect(refused.json.error).toBe('invalid_request');
    }
  });
});
