import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '@/lib/auth/api-tokens';
import { closeWakeupPublisher } from '@/lib/queue';
import { activeNoticeConfig } from '@/lib/windows/active';
import { noticeKeyFor } from '@/lib/windows/keys';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { snapshotTables } from '@/test/fuzz/table-snapshot';
import { POST as eventsRoute } from './events/route';
import { POST as scheduleRoute } from './reminders/route';

/**
 * The channel at scheduling: payment recovery goes by SMS when the recipient has a phone number
 * (else email), renewal notices by email; the phone is normalised to E.164 or refused 422 naming
 * the field; and the channel is no input of the notice key.
 */
type Route = (request: Request, context: { params?: Promise<Record<string, string>> }) => Promise<Response>;
type Json = Record<string, unknown>;

let t: TestDatabase;
let token = '';
const year = new Date().getUTCFullYear() + 1;

async function call(route: Route, body: unknown): Promise<{ status: number; json: Json }> {
  const request = new Request('http://localhost/api/v1/test', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const response = await route(request, { params: undefined });
  return { status: response.status, json: (await response.json()) as Json };
}

let counter = 0;
function recovery(recipient: Json = {}): Json {
  counter += 1;
  const due = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    type: 'payment_recovery',
    identity: { account_id: `acct_${counter}`, reconciliation_id: `rec_${counter}`, exception_id: `exc_${counter}` },
    recipient: { email: 'ana@example.com', ...recipient },
    dueAt: due,
    deadlineAt: new Date(Date.now() + 48 * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
    payload: { customer_name: 'Ana Lima', amount: '42.00', currency: 'EUR', reference: 'RC-2026-0042' },
    source: 'billing',
  };
}

async function job(id: unknown) {
  const result = await t.pool.query<{ channel: string; recipient_phone: string | null; notice_key: string }>(
    'select channel, recipient_phone, notice_key from reminder_jobs where id = $1',
    [id],
  );
  return result.rows[0];
}

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  token = (await createApiToken(t.db, { name: 'billing', createdBy: null, actor: 'admin@example.com' })).token;
});
afterAll(async () => {
  await closeWakeupPublisher();
  await t.drop();
});

describe('POST /api/v1/reminders with a phone', () => {
  it('payment recovery with a phone goes by SMS, the phone stored in E.164; the key is the one without any channel', async () => {
    const body = recovery({ phone: '+1 (415) 555-0100' });
    const result = await call(scheduleRoute, body);
    expect(result.status, JSON.stringify(result.json)).toBe(201);
    const row = await job(result.json.id);
    expect(row).toMatchObject({ channel: 'sms', recipient_phone: '+14155550100' });
    const expectedKey = noticeKeyFor(process.env.NOTICE_KEY_SECRET ?? '', activeNoticeConfig().config, {
      noticeType: 'payment_recovery',
      identity: body.identity as Record<string, string>,
      revision: 0,
    });
    expect(row?.notice_key).toBe(expectedKey);
    // A retry writing the number another way is the same request.
    expect((await call(scheduleRoute, { ...body, recipient: { email: 'ana@example.com', phone: '+14155550100' } })).status).toBe(200);
    // A retry with another number, or none, is a different notice body: 409 naming the field, never a second notice.
    const other = await call(scheduleRoute, { ...body, recipient: { email: 'ana@example.com', phone: '+14155550199' } });
    expect(other.status).toBe(409);
    expect(JSON.stringify(other.json)).toContain('recipient.phone');
  });

  it('payment recovery without a phone falls back to email', async () => {
    const result = await call(scheduleRoute, recovery());
    expect(result.status).toBe(201);
    expect(await job(result.json.id)).toMatchObject({ channel: 'email', recipient_phone: null });
  });

  it('a renewal notice goes by email even with a phone', async () => {
    counter += 1;
    const due = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const result = await call(scheduleRoute, {
      type: 'renewal_notice_t72',
      identity: { subscription_id: `sub_sms_${counter}`, period_start: `${year}-03-01` },
      recipient: { email: 'ana@example.com', phone: '+14155550100' },
      anchorAt: new Date(Date.now() + 72 * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
      payload: { customer_name: 'Ana Lima', plan_name: 'Pro annual', amount: '49.00', currency: 'EUR' },
      dueAt: due,
      deadlineAt: new Date(Date.now() + 48 * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
      source: 'billing',
    });
    expect(result.status, JSON.stringify(result.json)).toBe(201);
    expect(await job(result.json.id)).toMatchObject({ channel: 'email', recipient_phone: '+14155550100' });
  });

  it.each(['12345', '+1 555', 'not a number', '+999999999999999'])('%s → 422 invalid_phone naming recipient.phone, nothing written', async (phone) => {
    const before = await snapshotTables(t.pool);
    const result = await call(scheduleRoute, recovery({ phone }));
    expect(result.status).toBe(422);
    expect(result.json).toMatchObject({ error: 'invalid_phone' });
    expect(JSON.stringify(result.json)).toContain('recipient.phone');
    expect(await snapshotTables(t.pool)).toEqual(before);
  });
});

describe('POST /api/v1/events with a phone', () => {
  function exception(recipient: Json): Json {
    counter += 1;
    return {
      type: 'reconciliation.exception',
      identity: { account_id: `acct_ev_${counter}`, reconciliation_id: `rec_ev_${counter}`, exception_id: `exc_ev_${counter}` },
      anchorAt: new Date(Date.now() + 60_000).toISOString().replace(/\.\d+Z$/, 'Z'),
      recipient: { email: 'ana@example.com', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US', ...recipient },
      payload: { customer_name: 'Ana Lima', amount: '42.00', currency: 'USD', reference: 'RC-2026-0042' },
    };
  }

  it('a national number is read in the recipient region; payment recovery is planned by SMS', async () => {
    const result = await call(eventsRoute, exception({ phone: '(415) 555-0100' }));
    expect(result.status, JSON.stringify(result.json)).toBe(201);
    const planned = (result.json.planned as { noticeType: string; jobId: string }[]).find((p) => p.noticeType === 'payment_recovery');
    expect(await job(planned?.jobId)).toMatchObject({ channel: 'sms', recipient_phone: '+14155550100' });
  });

  it('an invalid number → 422 invalid_phone, nothing written', async () => {
    const before = await snapshotTables(t.pool);
    const result = await call(eventsRoute, exception({ phone: '+1 555' }));
    expect(result.status).toBe(422);
    expect(result.json).toMatchObject({ error: 'invalid_phone' });
    expect(await snapshotTables(t.pool)).toEqual(before);
  });
});
