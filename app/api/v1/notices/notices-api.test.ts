import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '@/lib/auth/api-tokens';
import { loadNoticeView } from '@/lib/console/lookup';
import { closeWakeupPublisher } from '@/lib/queue';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertSentNotice } from '@/testing/recipient';
import { POST as scheduleRoute } from '@/app/api/v1/reminders/route';
import { GET as getNoticeRoute } from './[id]/route';
import { POST as cancelNoticeRoute } from './cancel/route';
import { GET as listNoticesRoute } from './route';

type Route = (request: Request, context: { params?: Promise<Record<string, string>> }) => Promise<Response>;

let t: TestDatabase;
let token = '';
let writeOnlyToken = '';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const payload = { customer_name: 'Ada Lovelace', amount: '49.00', currency: 'EUR', reference: 'RC-2026-0042' };

async function call(
  route: Route,
  {
    method = 'GET',
    query = '',
    body,
    params,
    auth = token,
  }: { method?: string; query?: string; body?: unknown; params?: Record<string, string>; auth?: string },
) {
  const request = new Request(`http://localhost/api/v1/notices${query}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const response = await route(request, { params: params ? Promise.resolve(params) : undefined });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

let counter = 0;
async function schedule(overrides: Record<string, unknown> = {}) {
  counter += 1;
  const now = Date.now();
  const result = await call(scheduleRoute, {
    method: 'POST',
    body: {
      type: 'payment_recovery',
      identity: { account_id: 'acct_7', reconciliation_id: 'rec_1', exception_id: `exc_${counter}` },
      revision: 0,
      recipient: { email: 'Status@Example.com', timeZone: 'Europe/Berlin' },
      dueAt: iso(now + 2 * HOUR),
      deadlineAt: iso(now + 26 * HOUR),
      payload,
      source: 'nightly-reconciliation',
      ...overrides,
    },
  });
  expect(result.status).toBe(201);
  return result.json as { id: string; noticeKey: string; identity?: Record<string, string> };
}

async function fingerprint(): Promise<string> {
  const { rows } = await t.pool.query<{ h: string }>(
    `select md5(coalesce((select string_agg(x::text, ',' order by x::text) from reminder_jobs x), '') || coalesce((select string_agg(a::text, ',' order by a::text) from audit_log a), '')) as h`,
  );
  return rows[0]?.h ?? '';
}

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  token = (await createApiToken(t.db, { name: 'billing service', createdBy: null, actor: 'admin@example.com' })).token;
  writeOnlyToken = (await createApiToken(t.db, { name: 'writer', createdBy: null, actor: 'admin@example.com', scopes: ['reminders:write'] })).token;
});

afterAll(async () => {
  await closeWakeupPublisher();
  await t.drop();
});

describe('GET /api/v1/notices/{id}', () => {
  it('answers a pending notice by job id and by notice key, the same both ways', async () => {
    const job = await schedule();
    const byId = await call(getNoticeRoute, { params: { id: job.id } });
    expect(byId.status).toBe(200);
    expect(byId.json).toMatchObject({
      id: job.id,
      noticeKey: job.noticeKey,
      state: 'pending',
      outcome: 'pending',
      ledgerState: null,
      attempts: [],
      event: null,
    });
    expect(byId.json.recipient).toEqual({ channel: 'email', email: 'status@example.com', phone: null });
    const byKey = await call(getNoticeRoute, { params: { id: job.noticeKey } });
    expect(byKey.json).toEqual(byId.json);
  });

  it('a sent notice answers as lookup reads it, with its business event, and without the one-time code or the worker', async () => {
    const sent = await insertSentNotice(t.db, { code: 'QWERTYZX42' });
    const answer = await call(getNoticeRoute, { params: { id: sent.job.noticeKey } });
    expect(answer.status).toBe(200);
    const lookup = await loadNoticeView(t.db, { noticeKey: sent.job.noticeKey, secret: process.env.NOTICE_KEY_SECRET ?? '', messageIdDomain: 'example.test' });
    expect(answer.json).toMatchObject({ outcome: 'sent', state: lookup?.jobState, ledgerState: lookup?.ledgerState, sentAt: lookup?.sentAt });
    expect(answer.json.window).toMatchObject({
      earliest: lookup?.window?.earliest,
      latest: lookup?.window?.latest,
      ruleSetVersion: lookup?.window?.ruleSetVersion,
    });
    expect(answer.json.event).toMatchObject({ id: lookup?.window?.event?.id, type: 'subscription.renewal', revision: 0 });
    const text = JSON.stringify(answer.json);
    expect(text).not.toContain('QWERTYZX42');
    expect(text).not.toContain('test-worker');
    expect(text).not.toContain('payload');
  });

  it('a notice the send path found past its window says window_missed and the rule; a claim settled by provider evidence says so', async () => {
    const missed = await schedule();
    await t.pool.query(`update reminder_jobs set state = 'suppressed', suppression_reason = 'window_missed' where id = $1`, [missed.id]);
    await t.pool.query(
      `insert into delivery_attempts (job_id, notice_key, worker_id, started_at, finished_at, outcome, detail) values ($1, $2, 'w1', now(), now(), 'suppressed_policy', 'deadline_passed')`,
      [missed.id, missed.noticeKey],
    );
    const answer = await call(getNoticeRoute, { params: { id: missed.id } });
    expect(answer.json).toMatchObject({
      outcome: 'window_missed',
      suppressionReason: 'window_missed',
      attempts: [{ outcome: 'suppressed_policy', errorClass: null }],
    });
    expect(answer.json.window).toMatchObject({ missed: { rule: 'deadline_passed' } });
    expect(JSON.stringify(answer.json)).not.toContain('w1');

    const resolved = await insertSentNotice(t.db);
    await t.pool.query(`update notice_ledger set resolution = 'provider_evidence', resolved_at = now(), provider_message_id = 'msg-77' where notice_key = $1`, [
      resolved.job.noticeKey,
    ]);
    const settled = await call(getNoticeRoute, { params: { id: resolved.job.id } });
    expect(settled.json).toMatchObject({ outcome: 'sent', resolution: { text: 'resolved by provider evidence' }, providerMessageIds: ['msg-77'] });
  });

  it('404 for an unknown id, 400 for neither a uuid nor a key, 403 for a token without notices:read', async () => {
    expect((await call(getNoticeRoute, { params: { id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(404);
    expect((await call(getNoticeRoute, { params: { id: 'not-an-id' } })).status).toBe(400);
    const job = await schedule();
    const refused = await call(getNoticeRoute, { params: { id: job.id }, auth: writeOnlyToken });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toBe('missing_scope');
  });
});

describe('GET /api/v1/notices', () => {
  it('filters by type and identity (and revision), by recipient in any case, by state, and pages each notice once', async () => {
    const identity = { account_id: 'acct_list', reconciliation_id: 'rec_list', exception_id: 'exc_list' };
    const first = await schedule({ identity, recipient: { email: 'list@example.com', timeZone: 'UTC' } });
    const second = await schedule({ identity, revision: 1, recipient: { email: 'list@example.com', timeZone: 'UTC' } });
    const third = await schedule({ recipient: { email: 'LIST@example.com', timeZone: 'UTC' } });
    const query = `?type=payment_recovery&identity.account_id=acct_list&identity.reconciliation_id=rec_list&identity.exception_id=exc_list`;
    const byIdentity = await call(listNoticesRoute, { query });
    expect((byIdentity.json.notices as { id: string }[]).map((notice) => notice.id)).toEqual([first.id, second.id]);
    const byRevision = await call(listNoticesRoute, { query: `${query}&revision=1` });
    expect((byRevision.json.notices as { id: string }[]).map((notice) => notice.id)).toEqual([second.id]);

    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 5; page += 1) {
      const answer = await call(listNoticesRoute, { query: `?recipient=List%40Example.com&limit=1${cursor ? `&cursor=${cursor}` : ''}` });
      expect(answer.status).toBe(200);
      seen.push(...(answer.json.notices as { id: string }[]).map((notice) => notice.id));
      if (answer.json.nextCursor === null) break;
      cursor = String(answer.json.nextCursor);
    }
    expect(seen).toEqual([first.id, second.id, third.id]);

    const pending = await call(listNoticesRoute, { query: '?state=cancelled' });
    expect(pending.json.notices).toEqual([]);
  });

  it('refuses identity without type, a partial identity, an unknown filter and a forged cursor (4xx)', async () => {
    expect((await call(listNoticesRoute, { query: '?identity.account_id=a' })).status).toBe(400);
    expect((await call(listNoticesRoute, { query: '?type=payment_recovery&identity.account_id=a' })).status).toBe(422);
    expect((await call(listNoticesRoute, { query: '?colour=red' })).status).toBe(400);
    expect((await call(listNoticesRoute, { query: '?cursor=n1.1' })).status).toBe(400);
    expect((await call(listNoticesRoute, { query: '?recipient=nobody' })).status).toBe(400);
  });
});

describe('POST /api/v1/notices/cancel', () => {
  it('cancels the latest revision without one, a named revision with one; again is the job-id cancel’s 409', async () => {
    const identity = { account_id: 'acct_c', reconciliation_id: 'rec_c', exception_id: 'exc_c' };
    const older = await schedule({ identity });
    const newer = await schedule({ identity, revision: 1 });
    const latest = await call(cancelNoticeRoute, { method: 'POST', body: { type: 'payment_recovery', identity, reason: 'paid by wire' } });
    expect(latest.status).toBe(200);
    expect(latest.json).toMatchObject({ id: newer.id, state: 'cancelled', revision: 1 });
    const named = await call(cancelNoticeRoute, { method: 'POST', body: { type: 'payment_recovery', identity, revision: 0 } });
    expect(named.json).toMatchObject({ id: older.id, state: 'cancelled' });
    const audit = await t.pool.query(`select reason from audit_log where action = 'reminder.cancel' and target_id = $1`, [newer.id]);
    expect(audit.rows).toEqual([{ reason: 'paid by wire' }]);
    const before = await fingerprint();
    const again = await call(cancelNoticeRoute, { method: 'POST', body: { type: 'payment_recovery', identity } });
    expect(again.status).toBe(409);
    expect(again.json.error).toBe('not_pending');
    expect(await fingerprint()).toBe(before);
  });

  it('a claimed notice is refused with the in-flight answer; unknown and malformed identities write nothing', async () => {
    const identity = { account_id: 'acct_f', reconciliation_id: 'rec_f', exception_id: 'exc_f' };
    const job = await schedule({ identity });
    await t.pool.query(`update reminder_jobs set state = 'claimed' where id = $1`, [job.id]);
    const before = await fingerprint();
    const inFlight = await call(cancelNoticeRoute, { method: 'POST', body: { type: 'payment_recovery', identity } });
    expect(inFlight.status).toBe(409);
    expect(inFlight.json.error).toBe('not_pending');
    expect(JSON.stringify(inFlight.json.details)).toContain('may already be on its way');
    const unknown = await call(cancelNoticeRoute, { method: 'POST', body: { type: 'payment_recovery', identity: { ...identity, exception_id: 'exc_none' } } });
    expect(unknown.status).toBe(404);
    const partial = await call(cancelNoticeRoute, { method: 'POST', body: { type: 'payment_recovery', identity: { account_id: 'acct_f' } } });
    expect(partial.status).toBe(422);
    const noType = await call(cancelNoticeRoute, { method: 'POST', body: { type: 'constructor', identity } });
    expect(noType.status).toBe(422);
    const readOnly = (await createApiToken(t.db, { name: 'reader', createdBy: null, actor: 'admin@example.com', scopes: ['notices:read'] })).token;
    const snapshot = await fingerprint();
    expect((await call(cancelNoticeRoute, { method: 'POST', body: { type: 'payment_recovery', identity }, auth: readOnly })).status).toBe(403);
    expect(await fingerprint()).toBe(snapshot);
    expect(snapshot).not.toBe('');
    expect(before).not.toBe('');
  });
});
