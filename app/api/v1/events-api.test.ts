import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '@/lib/auth/api-tokens';
import { findNotices } from '@/db/queries/lookup';
import { eventRequest } from '@/lib/api/producer';
import { receiveEvent } from '@/lib/planning/receive-event';
import { closeWakeupPublisher } from '@/lib/queue';
import { parseNoticeConfig } from '@/lib/windows/load-config';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { snapshotTables } from '@/test/fuzz/table-snapshot';
import { POST as eventsRoute } from './events/route';
import { POST as scheduleRoute } from './reminders/route';

type Route = (request: Request, context: { params?: Promise<Record<string, string>> }) => Promise<Response>;
type Json = Record<string, unknown>;
type Planned = {
  noticeType: string;
  category: string;
  noticeKey: string;
  jobId: string;
  dueAt: string;
  window: { earliest: string; latest: string };
  ruleIds: string[];
};
type Unplanned = { noticeType: string; category: string; reason: string; ruleIds: string[] };

let t: TestDatabase;
let token = '';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Anchors in the coming year, so every legal window of the tests lies ahead of the real clock. */
const year = new Date().getUTCFullYear() + 1;
const at = (text: string) => `${year}-${text}`;
const ms = (text: string) => new Date(text).getTime();

async function call(route: Route, body: unknown): Promise<{ status: number; json: Json }> {
  const request = new Request('http://localhost/api/v1/test', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const response = await route(request, { params: undefined });
  return { status: response.status, json: (await response.json()) as Json };
}

/** What every subscription.renewal notice type's template declares (config/notice-ledger.json templates). */
const renewalPayload = { customer_name: 'Ana Silva', plan_name: 'Coffee Box', amount: '190.00', currency: 'USD' };

let counter = 0;
function renewal(overrides: Json = {}, recipient: Json = {}): Json {
  counter += 1;
  return {
    type: 'subscription.renewal',
    identity: { subscription_id: `sub_ev_${counter}`, period_start: at('03-01') },
    revision: 0,
    anchorAt: at('03-01T17:00:00Z'),
    recipient: { email: 'Ana@Example.com', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US', ...recipient },
    contract: { termMonths: 12 },
    payload: renewalPayload,
    ...overrides,
  };
}

const plannedOf = (json: Json) => json.planned as Planned[];
const unplannedOf = (json: Json) => json.unplanned as Unplanned[];
const notice = (json: Json, type: string) => plannedOf(json).find((entry) => entry.noticeType === type);

async function expectRefusedWithoutWrites(route: Route, body: unknown, status: number): Promise<Json> {
  const before = await snapshotTables(t.pool);
  const result = await call(route, body);
  expect(result.status, JSON.stringify(result.json)).toBe(status);
  expect(typeof result.json.error).toBe('string');
  expect(await snapshotTables(t.pool)).toEqual(before);
  return result.json;
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

describe('POST /api/v1/events', () => {
  it('plans the courtesy and required notices (201), each a pending job with its window and rules and a wake-up at dueAt', async () => {
    const body = renewal();
    const result = await call(eventsRoute, body);
    expect(result.status, JSON.stringify(result.json)).toBe(201);
    expect(result.json.created).toBe(true);
    expect(plannedOf(result.json).map((entry) => entry.noticeType)).toEqual(['renewal_notice_t72', 'renewal_notice_t24', 'auto_renewal_notice']);
    const arl = notice(result.json, 'auto_renewal_notice');
    expect(arl).toMatchObject({ category: 'required', ruleIds: ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1'] });
    const job = await t.pool.query(
      `select state, window_earliest, deadline_at, due_at, category, region, rule_ids, rule_set_version, event_id, subject_id, recipient_email from reminder_jobs where id = $1`,
      [arl?.jobId],
    );
    expect(job.rows[0]).toMatchObject({
      state: 'pending',
      category: 'required',
      region: 'US-CA',
      rule_ids: ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1'],
      rule_set_version: result.json.ruleSetVersion,
      event_id: result.json.eventId,
      subject_id: (body.identity as Json).subscription_id,
      recipient_email: 'ana@example.com',
    });
    expect((job.rows[0]?.window_earliest as Date).toISOString()).toBe(arl?.window.earliest);
    expect((job.rows[0]?.deadline_at as Date).toISOString()).toBe(arl?.window.latest);
    // Due months out, beyond QUEUE_HORIZON: the row holds the delay and nothing is in the queue
    // until the dispatcher publishes it as it comes within.
    const wake = await t.pool.query(`select start_after from pgboss.job where name = 'notice-wakeup' and data->>'jobId' = $1`, [arl?.jobId]);
    expect(wake.rows).toEqual([]);
    const held = await t.pool.query(`select wakeup_published_at, next_attempt_at from reminder_jobs where id = $1`, [arl?.jobId]);
    expect(held.rows[0]?.wakeup_published_at).toBeNull();
    expect((held.rows[0]?.next_attempt_at as Date).toISOString()).toBe(arl?.dueAt);
    const audit = await t.pool.query(`select action from audit_log where target_id = $1`, [arl?.jobId]);
    expect(audit.rows).toEqual([{ action: 'reminder.schedule' }]);
  });

  it('the same post again answers 200 with the same plan and writes nothing; a different body under the same revision is 409', async () => {
    const body = renewal();
    const first = await call(eventsRoute, body);
    expect(first.status).toBe(201);
    const before = await snapshotTables(t.pool);
    const again = await call(eventsRoute, { ...body, source: 'replay' });
    expect(again.status).toBe(200);
    expect({ ...again.json, created: true }).toEqual(first.json);
    const after = await snapshotTables(t.pool);
    // Only the token's last_used_at moves on a 2xx.
    expect({ ...after, api_tokens: '' }).toEqual({ ...before, api_tokens: '' });
    const changed = await expectRefusedWithoutWrites(eventsRoute, { ...body, payload: { ...renewalPayload, plan_name: 'Other' } }, 409);
    expect(changed.error).toBe('event_conflict');
  });

  it('two identical posts at once make one plan', async () => {
    const body = renewal();
    const [a, b] = await Promise.all([call(eventsRoute, body), call(eventsRoute, body)]);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    expect(a.json.planned).toEqual(b.json.planned);
    const rows = await t.pool.query(`select count(*)::int as n from business_events where identity->>'subscription_id' = $1`, [
      (body.identity as Json).subscription_id,
    ]);
    expect(rows.rows[0]?.n).toBe(1);
    const jobs = await t.pool.query(`select count(*)::int as n from reminder_jobs where subject_id = $1`, [(body.identity as Json).subscription_id]);
    expect(jobs.rows[0]?.n).toBe(3);
  });

  it.each([
    ['an unknown event type, naming the known ones', { type: 'subscription.cancelled' }, /known: subscription\.renewal, reconciliation\.exception/],
    ['an identity field of another event type', { identity: { account_id: 'a' } }, /identity/],
    ['a bad region', { recipient: { email: 'a@example.com', region: 'California', timeZone: 'America/Los_Angeles', locale: 'en-US' } }, /recipient\.region/],
    ['a local anchor', { anchorAt: at('03-01T09:00:00-08:00') }, /anchorAt/],
    ['an unknown time zone', { recipient: { email: 'a@example.com', region: 'US-CA', timeZone: 'Mars/Olympus', locale: 'en-US' } }, /recipient\.timeZone/],
    ['a contract field that does not exist', { contract: { termMonths: 12, autoRenew: true } }, /contract/],
    ['a missing locale', { recipient: { email: 'a@example.com', region: 'US-CA', timeZone: 'America/Los_Angeles' } }, /recipient\.locale/],
  ])('400 for %s; nothing written', async (_name, overrides, pattern) => {
    const json = await expectRefusedWithoutWrites(eventsRoute, renewal(overrides as Json), 400);
    expect(json.error).toBe('invalid_request');
    expect(JSON.stringify(json.details)).toMatch(pattern);
  });

  it.each([
    ['no payload at all', { payload: undefined }, ['payload.customer_name', 'payload.plan_name', 'payload.amount', 'payload.currency']],
    [
      'the old demo keys (plan, charge_at, amount_due)',
      { payload: { plan: 'Pro', charge_at: at('03-01'), amount_due: '49.00', currency: 'USD' } },
      ['payload.customer_name', 'payload.plan_name', 'payload.amount'],
    ],
    ['an amount with a comma', { payload: { ...renewalPayload, amount: '190,00' } }, ['payload.amount']],
    ['an unknown currency', { payload: { ...renewalPayload, currency: 'XYZ' } }, ['payload.currency']],
    ['a plan name that is not a string', { payload: { ...renewalPayload, plan_name: { en: 'Coffee' } } }, ['payload.plan_name']],
  ])('422 for %s, naming each field; nothing written', async (_name, overrides, fields) => {
    const json = await expectRefusedWithoutWrites(eventsRoute, renewal(overrides as Json), 422);
    expect(json.error).toBe('invalid_payload');
    expect((json.details as { fields: string[] }).fields).toEqual(fields);
  });

  it('400 for a locale that is not BCP 47', async () => {
    const json = await expectRefusedWithoutWrites(eventsRoute, renewal({}, { locale: 'en-US-x' }), 400);
    expect(JSON.stringify(json.details)).toMatch(/recipient\.locale/);
  });

  it('the planned jobs carry the customer id the producer gives, so a lookup by customer id finds them (issue 30)', async () => {
    const customerId = `cus_ev_${counter + 1}`;
    const result = await call(eventsRoute, renewal({ customerId }));
    expect(result.status, JSON.stringify(result.json)).toBe(201);
    const keys = plannedOf(result.json).map((entry) => entry.noticeKey);
    expect(keys.length).toBeGreaterThan(0);
    const rows = await t.pool.query<{ notice_key: string; customer_id: string | null }>(
      'select notice_key, customer_id from reminder_jobs where notice_key = any($1)',
      [keys],
    );
    expect(rows.rows.map((row) => row.customer_id)).toEqual(keys.map(() => customerId));
    const found = await findNotices(t.db, { search: { kind: 'id', id: customerId }, limit: 10 });
    expect(found.map((match) => match.noticeKey).sort()).toEqual([...keys].sort());
  });

  it('a reference of dots only is refused (400, nothing written): no URL could address it; dots inside one are fine', async () => {
    for (const ref of ['.', '..', '...']) {
      const json = await expectRefusedWithoutWrites(eventsRoute, renewal({ customerId: ref }), 400);
      expect(JSON.stringify(json.details)).toMatch(/customerId/);
    }
    const result = await call(eventsRoute, renewal({ customerId: `cus.ev.${counter + 1}` }));
    expect(result.status, JSON.stringify(result.json)).toBe(201);
  });

  it('the planned jobs carry the anchor and the canonical locale their templates render with', async () => {
    const created = await call(eventsRoute, renewal({}, { locale: 'en-us' }));
    expect(created.status).toBe(201);
    const { rows } = await t.pool.query<{ anchor_at: Date; recipient_locale: string }>(
      `select anchor_at, recipient_locale from reminder_jobs where event_id = $1`,
      [created.json.eventId],
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.anchor_at.toISOString()).toBe(new Date(at('03-01T17:00:00Z')).toISOString());
      expect(row.recipient_locale).toBe('en-US');
    }
  });
});

describe('each rule family at its boundaries, through the API', () => {
  it('California annual: 15–45 days before the charge, in exact hours where that is stricter (DST in America/Los_Angeles)', async () => {
    // 09:00 PDT, after the March clock change: 15 × 24 h earlier is 08:00 PST on the 5th — an hour
    // earlier than "the same local time, 15 calendar days before". The window never reaches past either reading.
    const anchor = at('03-20T16:00:00Z');
    const result = await call(eventsRoute, renewal({ anchorAt: anchor }));
    const arl = notice(result.json, 'auto_renewal_notice');
    expect(arl?.window.latest).toBe(new Date(ms(anchor) - 15 * DAY).toISOString());
    expect(arl?.window.earliest).toBe(new Date(ms(anchor) - 45 * DAY).toISOString());
  });

  it('California annual: an anchor under the 15-day floor is a compliance gap, recorded, never dropped', async () => {
    const anchor = new Date(Date.now() + 10 * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const result = await call(eventsRoute, renewal({ anchorAt: anchor }));
    expect(result.status).toBe(201);
    expect(unplannedOf(result.json)).toEqual([
      { noticeType: 'auto_renewal_notice', category: 'required', reason: 'window_passed', ruleIds: ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1'] },
    ]);
    const gap = await t.pool.query(`select category, reason, region, resolved_at from unplanned_notices where event_id = $1`, [result.json.eventId]);
    expect(gap.rows).toEqual([{ category: 'required', reason: 'window_passed', region: 'US-CA', resolved_at: null }]);
    expect(plannedOf(result.json).map((entry) => entry.noticeType)).toEqual(['renewal_notice_t72', 'renewal_notice_t24']);
  });

  it('Illinois: 30–60 days before the cancellation deadline', async () => {
    const deadline = at('06-15T12:00:00Z');
    const result = await call(
      eventsRoute,
      renewal(
        { anchorAt: at('06-20T12:00:00Z'), contract: { termMonths: 12, cancellationDeadlineAt: deadline } },
        { region: 'US-IL', timeZone: 'America/Chicago' },
      ),
    );
    const arl = notice(result.json, 'auto_renewal_notice');
    expect(arl?.ruleIds).toEqual(['US-IL/acra-renewal@1']);
    expect(arl?.window.latest).toBe(new Date(ms(deadline) - 30 * DAY).toISOString());
    expect(arl?.window.earliest).toBe(new Date(ms(deadline) - 60 * DAY).toISOString());
  });

  it('France: one to three calendar months before the non-renewal deadline, in Europe/Paris', async () => {
    const deadline = at('05-31T10:00:00Z');
    const result = await call(
      eventsRoute,
      renewal(
        { anchorAt: at('06-01T10:00:00Z'), contract: { termMonths: 12, cancellationDeadlineAt: deadline } },
        { region: 'FR', timeZone: 'Europe/Paris', locale: 'fr-FR' },
      ),
    );
    const arl = notice(result.json, 'auto_renewal_notice');
    expect(arl?.ruleIds).toEqual(['FR/conso-L215-1@1']);
    // 31 May 12:00 CEST minus one month: 30 April (the floor clamps back), same local time; minus
    // three: 31 February does not exist, so the ceiling rolls forward to 1 March, 12:00 CET (11:00Z).
    expect(arl?.window.latest).toBe(new Date(at('04-30T10:00:00Z')).toISOString());
    expect(arl?.window.earliest).toBe(new Date(at('03-01T11:00:00Z')).toISOString());
  });

  it('Visa trial: at least 7 days before the first charge; Mastercard: 3–7 days before the trial ends; neither, no notice', async () => {
    const anchor = at('04-10T08:00:00Z');
    const visa = await call(
      eventsRoute,
      renewal(
        { anchorAt: anchor, contract: { termMonths: 1, trialDays: 14, paymentNetwork: 'visa' } },
        { region: 'DE', timeZone: 'Europe/Berlin', locale: 'de-DE' },
      ),
    );
    const trial = notice(visa.json, 'trial_conversion_notice');
    expect(trial?.ruleIds).toEqual(['visa/trial-promo@1']);
    expect(ms(trial?.window.latest ?? '')).toBeLessThanOrEqual(ms(anchor) - 7 * DAY);
    expect(ms(trial?.window.latest ?? '')).toBeGreaterThan(ms(anchor) - 8 * DAY);
    const mastercard = await call(
      eventsRoute,
      renewal(
        { anchorAt: anchor, contract: { termMonths: 1, trialDays: 14, paymentNetwork: 'mastercard' } },
        { region: 'DE', timeZone: 'Europe/Berlin', locale: 'de-DE' },
      ),
    );
    const mastercardTrial = notice(mastercard.json, 'trial_conversion_notice');
    expect(mastercardTrial?.ruleIds).toEqual(['mastercard/an4934-trial@1']);
    // 10:00 CEST: both exact readings win, 7 and 3 days before the trial's end (the charge).
    expect(mastercardTrial?.window).toMatchObject({
      earliest: new Date(ms(anchor) - 7 * DAY).toISOString(),
      latest: new Date(ms(anchor) - 3 * DAY).toISOString(),
    });
    const other = await call(
      eventsRoute,
      renewal(
        { anchorAt: anchor, contract: { termMonths: 1, trialDays: 14, paymentNetwork: 'amex' } },
        { region: 'DE', timeZone: 'Europe/Berlin', locale: 'de-DE' },
      ),
    );
    expect(notice(other.json, 'trial_conversion_notice')).toBeUndefined();
  });

  it('India pre-debit: at least 24 hours before each debit', async () => {
    const anchor = at('02-10T04:30:00Z');
    const result = await call(
      eventsRoute,
      renewal({ anchorAt: anchor, contract: { termMonths: 1 } }, { region: 'IN', timeZone: 'Asia/Kolkata', locale: 'en-IN' }),
    );
    const preDebit = notice(result.json, 'pre_debit_notice');
    expect(preDebit).toMatchObject({ category: 'required', ruleIds: ['IN/rbi-emandate-pre-debit@1'] });
    expect(preDebit?.window.latest).toBe(new Date(ms(anchor) - DAY).toISOString());
  });
});

describe('a new revision re-plans', () => {
  it("cancels unsent notices of the older revision with an audited reason, keeps sent ones, and follows each type's correction policy", async () => {
    const first = renewal();
    const r0 = await call(eventsRoute, first);
    expect(r0.status).toBe(201);
    // The 72-hour courtesy notice of revision 0 went out; the others are still pending.
    const t72 = notice(r0.json, 'renewal_notice_t72');
    await t.pool.query(`update reminder_jobs set state = 'sent' where id = $1`, [t72?.jobId]);

    const moved = { ...first, revision: 1, anchorAt: at('03-08T17:00:00Z') };
    const r1 = await call(eventsRoute, moved);
    expect(r1.status, JSON.stringify(r1.json)).toBe(201);
    // renewal_notice_t72 is `if_not_sent` and was sent: no corrected one. t24 was not sent: corrected. auto_renewal is `always`.
    expect(plannedOf(r1.json).map((entry) => entry.noticeType)).toEqual(['renewal_notice_t24', 'auto_renewal_notice']);
    expect(unplannedOf(r1.json)).toEqual([{ noticeType: 'renewal_notice_t72', category: 'courtesy', reason: 'earlier_revision_sent', ruleIds: [] }]);

    const old = await t.pool.query<{ notice_type: string; state: string }>(
      `select notice_type, state from reminder_jobs where event_id = $1 order by notice_type`,
      [r0.json.eventId],
    );
    expect(old.rows).toEqual([
      { notice_type: 'auto_renewal_notice', state: 'cancelled' },
      { notice_type: 'renewal_notice_t24', state: 'cancelled' },
      { notice_type: 'renewal_notice_t72', state: 'sent' },
    ]);
    const audit = await t.pool.query(`select reason from audit_log where action = 'reminder.cancel' and target_id = $1`, [
      notice(r0.json, 'auto_renewal_notice')?.jobId,
    ]);
    expect(audit.rows[0]?.reason).toMatch(/^superseded by revision 1 of subscription\.renewal/);
    // The corrected notice has a key of its own (the revision is part of it).
    expect(notice(r1.json, 'auto_renewal_notice')?.noticeKey).not.toBe(notice(r0.json, 'auto_renewal_notice')?.noticeKey);

    // An older revision arriving late is refused and changes nothing; a repeat of revision 0 is still 200.
    const stale = await expectRefusedWithoutWrites(eventsRoute, { ...first, payload: { ...renewalPayload, plan_name: 'late' } }, 409);
    expect(stale.error).toBe('event_conflict');
    // `always`: a corrected auto-renewal notice goes out even though revision 1's was sent.
    await t.pool.query(`update reminder_jobs set state = 'sent' where id = $1`, [notice(r1.json, 'auto_renewal_notice')?.jobId]);
    const late = await call(eventsRoute, { ...first, revision: 2 });
    expect(late.status).toBe(201);
    expect(plannedOf(late.json).map((entry) => entry.noticeType)).toEqual(['renewal_notice_t24', 'auto_renewal_notice']);
    const r1Jobs = await t.pool.query<{ notice_type: string; state: string }>(
      `select notice_type, state from reminder_jobs where event_id = $1 order by notice_type`,
      [r1.json.eventId],
    );
    expect(r1Jobs.rows).toEqual([
      { notice_type: 'auto_renewal_notice', state: 'sent' },
      { notice_type: 'renewal_notice_t24', state: 'cancelled' },
    ]);
    const older = await expectRefusedWithoutWrites(eventsRoute, { ...first, revision: 1, anchorAt: at('03-09T17:00:00Z') }, 409);
    expect(older.error).toBe('event_conflict');
  });

  it('an older revision posted after a newer one is refused (409) and changes nothing', async () => {
    const body = renewal({ revision: 3 });
    expect((await call(eventsRoute, body)).status).toBe(201);
    const json = await expectRefusedWithoutWrites(eventsRoute, { ...body, revision: 2 }, 409);
    expect(json.error).toBe('stale_revision');
    expect(JSON.stringify(json.details)).toMatch(/older than revision 3/);
  });

  it("a gap of an older revision is resolved by the new revision's plan", async () => {
    const close = new Date(Date.now() + 10 * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const r0 = await call(eventsRoute, renewal({ anchorAt: close }));
    expect(unplannedOf(r0.json)).toHaveLength(1);
    const r1 = await call(eventsRoute, {
      ...renewal({ anchorAt: at('03-01T17:00:00Z') }),
      identity: await eventIdentity(String(r0.json.eventId)),
      revision: 1,
    });
    expect(r1.status).toBe(201);
    const gap = await t.pool.query(`select resolved_at, resolution from unplanned_notices where event_id = $1`, [r0.json.eventId]);
    expect(gap.rows[0]?.resolved_at).not.toBeNull();
    expect(gap.rows[0]?.resolution).toMatch(/^superseded by revision 1/);
  });
});

describe('correction policy never', () => {
  it('a new revision cancels the unsent notice and plans no corrected one, recorded as resolved', async () => {
    const shipped = JSON.parse(readFileSync('config/notice-ledger.json', 'utf8')) as { noticeTypes: Record<string, { correction: string }> };
    const t24 = shipped.noticeTypes.renewal_notice_t24;
    if (t24) t24.correction = 'never';
    const notices = parseNoticeConfig(shipped, 'test-never.json');
    const publisher = { publishInTransaction: async () => null, horizonMs: 0 };
    const body = eventRequest.parse(renewal());
    const post = (request: typeof body) =>
      receiveEvent({ db: t.db, publisher, request, actor: 'test', now: new Date(), secret: 's'.repeat(32), maxDelayMs: 400 * DAY, notices });
    const r0 = await post(body);
    if (r0.kind !== 'created') throw new Error(r0.kind);
    const r1 = await post({ ...body, revision: 1 });
    if (r1.kind !== 'created') throw new Error(r1.kind);
    expect(r1.answer.planned.map((entry) => entry.noticeType)).toEqual(['renewal_notice_t72', 'auto_renewal_notice']);
    expect(r1.answer.unplanned).toEqual([{ noticeType: 'renewal_notice_t24', category: 'courtesy', reason: 'correction_policy_never', ruleIds: [] }]);
    const gap = await t.pool.query(`select resolved_at is not null as resolved from unplanned_notices where event_id = $1`, [r1.answer.eventId]);
    expect(gap.rows).toEqual([{ resolved: true }]);
    const old = await t.pool.query(`select state from reminder_jobs where event_id = $1 and notice_type = 'renewal_notice_t24'`, [r0.answer.eventId]);
    expect(old.rows).toEqual([{ state: 'cancelled' }]);
  });
});

async function eventIdentity(eventId: string): Promise<Json> {
  const row = await t.pool.query<{ identity: Json }>(`select identity from business_events where id = $1`, [eventId]);
  return row.rows[0]?.identity ?? {};
}

describe('POST /api/v1/reminders with anchorAt', () => {
  function reminder(overrides: Json = {}): Json {
    counter += 1;
    return {
      type: 'auto_renewal_notice',
      identity: { subscription_id: `sub_rem_${counter}`, period_start: at('03-01') },
      recipient: { email: 'ana@example.com', timeZone: 'America/Los_Angeles' },
      anchorAt: at('03-20T16:00:00Z'),
      region: 'US-CA',
      contract: { termMonths: 12 },
      dueAt: at('02-20T18:00:00Z'),
      payload: renewalPayload,
      source: 'billing',
      ...overrides,
    };
  }
  const latest = new Date(ms(at('03-20T16:00:00Z')) - 15 * DAY).toISOString();

  it('computes the window, defaults deadlineAt to its latest and answers it', async () => {
    const result = await call(scheduleRoute, reminder());
    expect(result.status, JSON.stringify(result.json)).toBe(201);
    expect(result.json.deadlineAt).toBe(latest);
    expect(result.json.window).toMatchObject({ latest, ruleIds: ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1'] });
    const job = await t.pool.query(`select category, region, rule_ids from reminder_jobs where id = $1`, [result.json.id]);
    expect(job.rows[0]).toEqual({ category: 'required', region: 'US-CA', rule_ids: ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1'] });
  });

  it('accepts dueAt at latest and refuses one millisecond later (422 naming the rule), writing nothing', async () => {
    expect((await call(scheduleRoute, reminder({ dueAt: latest }))).status).toBe(201);
    const late = new Date(ms(latest) + 1000).toISOString().replace(/\.000Z$/, 'Z');
    const json = await expectRefusedWithoutWrites(scheduleRoute, reminder({ dueAt: late }), 422);
    expect(json.error).toBe('outside_window');
    expect(JSON.stringify(json.details)).toContain('US-CA/arl-annual@1');
    const early = await expectRefusedWithoutWrites(scheduleRoute, reminder({ dueAt: at('01-01T00:00:00Z') }), 422);
    expect(JSON.stringify(early.details)).toMatch(/before the allowed window.*US-CA\/arl-annual@1/);
  });

  it('accepts dueAt at the 45-day ceiling and refuses one second before it (422 naming the rule)', async () => {
    const earliest = new Date(ms(at('03-20T16:00:00Z')) - 45 * DAY).toISOString().replace(/\.000Z$/, 'Z');
    expect((await call(scheduleRoute, reminder({ dueAt: earliest }))).status).toBe(201);
    const before = new Date(ms(earliest) - 1000).toISOString().replace(/\.000Z$/, 'Z');
    const json = await expectRefusedWithoutWrites(scheduleRoute, reminder({ dueAt: before }), 422);
    expect(json.details).toMatchObject({
      fields: ['dueAt'],
      ruleIds: ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1'],
      window: { earliest: new Date(earliest).toISOString() },
    });
  });

  it('accepts a dueAt already past while the window is open (sent at once)', async () => {
    const anchor = new Date(Date.now() + 2 * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const past = new Date(Date.now() - HOUR).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const result = await call(scheduleRoute, reminder({ type: 'renewal_notice_t72', region: undefined, contract: undefined, anchorAt: anchor, dueAt: past }));
    expect(result.status, JSON.stringify(result.json)).toBe(201);
    expect(result.json.deadlineAt).toBe(new Date(ms(anchor) - DAY).toISOString());
  });

  it('without anchorAt behaves as before and needs deadlineAt (a type whose template shows no anchor)', async () => {
    const recovery = {
      anchorAt: undefined,
      region: undefined,
      contract: undefined,
      type: 'payment_recovery',
      identity: { account_id: 'acct_1', reconciliation_id: 'rec_1', exception_id: `exc_${counter}` },
      payload: { customer_name: 'Ana Silva', amount: '19.00', currency: 'EUR', reference: 'RC-1' },
    };
    const json = await expectRefusedWithoutWrites(scheduleRoute, reminder(recovery), 400);
    expect(JSON.stringify(json.details)).toMatch(/deadlineAt/);
    const ok = await call(scheduleRoute, reminder({ ...recovery, deadlineAt: at('02-21T18:00:00Z') }));
    expect(ok.status).toBe(201);
    expect(ok.json.window).toBeUndefined();
    // A renewal notice's template shows the charge date: without the anchor it is refused, naming it.
    const renewalWithoutAnchor = await expectRefusedWithoutWrites(
      scheduleRoute,
      reminder({ anchorAt: undefined, region: undefined, contract: undefined, type: 'renewal_notice_t72', deadlineAt: at('02-21T18:00:00Z') }),
      422,
    );
    expect(renewalWithoutAnchor.details).toMatchObject({ fields: ['anchorAt'] });
  });
});
