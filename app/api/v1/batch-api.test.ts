import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_MAX_ITEMS } from '@/lib/api/producer';
import { createApiToken } from '@/lib/auth/api-tokens';
import { closeWakeupPublisher } from '@/lib/queue';
import { REMINDER_CHUNK_SIZE } from '@/lib/planning/schedule-batch';
import { EVENT_CHUNK_SIZE } from '@/lib/planning/receive-events';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { snapshotTables } from '@/test/fuzz/table-snapshot';
import { POST as eventsBatchRoute } from './events/batch/route';
import { POST as eventsRoute } from './events/route';
import { POST as remindersBatchRoute } from './reminders/batch/route';
import { POST as scheduleRoute } from './reminders/route';

/**
 * The batch routes against the single ones: the same list of requests (fresh ones, repeats,
 * conflicting repeats, refusals of every kind, keys held before the batch) is posted once as a
 * batch under one set of identities and once item by item to the single route under another,
 * and every answer and every row written must agree but for ids and the set's name.
 */

type Route = (request: Request, context: { params?: Promise<Record<string, string>> }) => Promise<Response>;
type Json = Record<string, unknown>;
type Answer = { status: number; json: unknown };
type ItemResult = { index: number; status: number; body: unknown };

let t: TestDatabase;
let token = '';
let eventsOnlyToken = '';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
// One clock for both sets, whole seconds: every time in a request is the same text in both.
const T0 = Math.floor(Date.now() / 1000) * 1000;
const iso = (ms: number) => new Date(ms).toISOString();
const year = new Date().getUTCFullYear() + 1;

async function post(route: Route, { body, raw, auth = token }: { body?: unknown; raw?: string; auth?: string | null }): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (auth !== null) headers.authorization = `Bearer ${auth}`;
  const request = new Request('http://localhost/api/v1/test', { method: 'POST', headers, body: raw ?? JSON.stringify(body) });
  const response = await route(request, { params: undefined });
  return { status: response.status, json: await response.json() };
}

const recoveryPayload = { customer_name: 'Ada Lovelace', amount: '49.00', currency: 'EUR', reference: 'RC-2026-0042' };

function reminder(set: string, n: number, overrides: Json = {}): Json {
  return {
    type: 'payment_recovery',
    identity: { account_id: `${set}_acct`, reconciliation_id: `${set}_rec`, exception_id: `${set}_exc_${n}` },
    recipient: { email: 'Billing@Example.com', timeZone: 'Europe/Berlin' },
    dueAt: iso(T0 + 2 * HOUR),
    deadlineAt: iso(T0 + 26 * HOUR),
    payload: recoveryPayload,
    customerId: 'cus_42',
    source: 'nightly-reconciliation',
    ...overrides,
  };
}

/** Keys held before the batch (scheduled one at a time beforehand, in both sets). */
const heldBefore = (set: string) => [0, 1, 2].map((n) => reminder(set, 10_000 + n));

/** 1 000 requests of every kind, under the identities of `set`. */
function reminderItems(set: string): unknown[] {
  const items: unknown[] = [];
  for (let i = 0; i < BATCH_MAX_ITEMS; i += 1) {
    const k = i % 20;
    const round = Math.floor(i / 20);
    const earlier = (back: number) => items[i - back] as Json;
    switch (k) {
      case 10: // the same request again: a retry (200)
        items.push(earlier(10));
        break;
      case 11: // the same key, another due time: 409 notice_conflict
        items.push({ ...earlier(11), dueAt: iso(T0 + 3 * HOUR) });
        break;
      case 12: // the same key, another source: provenance is not compared (200)
        items.push({ ...earlier(12), source: 'replay' });
        break;
      case 13: // no source: 400 from the schema
        items.push({ ...reminder(set, i), source: undefined });
        break;
      case 14: // not a request at all: 400
        items.push([null, 42, 'text', [], { items: [] }][round % 5]);
        break;
      case 15: // the template's variable missing: 422 invalid_payload
        items.push(reminder(set, i, { payload: { amount: '49.00', currency: 'EUR', reference: 'RC-1' } }));
        break;
      case 16: // a phone that is no number: 422 invalid_phone
        items.push(reminder(set, i, { recipient: { email: 'a@example.com', phone: '12345', timeZone: 'UTC' } }));
        break;
      case 17: // a deadline already past, on a key nobody holds: 400 ...
        items.push(reminder(set, i, { dueAt: iso(T0 - 2 * HOUR), deadlineAt: iso(T0 - HOUR) }));
        break;
      case 18: // ... and the same key with good times after it: 201
        items.push(reminder(set, i - 1));
        break;
      case 19:
        items.push(
          round % 2 === 0
            ? // dueAt after the window its anchor sets: 422 outside_window
              {
                type: 'renewal_notice_t72',
                identity: { subscription_id: `${set}_sub_${i}`, period_start: `${year}-03-01` },
                recipient: { email: 'ana@example.com', timeZone: 'UTC' },
                anchorAt: iso(T0 + 72 * HOUR),
                dueAt: iso(T0 + 60 * HOUR),
                payload: { customer_name: 'Ana Lima', plan_name: 'Pro annual', amount: '49.00', currency: 'EUR' },
                source: 'billing',
              }
            : // a type the configuration does not have: 400
              reminder(set, i, { type: 'no_such_notice' }),
        );
        break;
      default:
        // Fresh (201); some due within the queue's horizon, whose wake-up is published with the job.
        items.push(reminder(set, i, k === 0 ? { dueAt: iso(T0 + 10 * MINUTE) } : {}));
    }
  }
  // Keys held before the batch: the same request (200) and another body (409).
  const [first, second] = heldBefore(set);
  items[5] = first;
  items[6] = { ...second, deadlineAt: iso(T0 + 30 * HOUR) };
  // A body over the single route's 64 KiB: 413 as it would be alone.
  items[7] = reminder(set, 7, { payload: { ...recoveryPayload, customer_name: 'x'.repeat(70_000) } });
  // Repeats across chunks: the first chunk's items again in the second.
  items[REMINDER_CHUNK_SIZE] = items[1];
  items[REMINDER_CHUNK_SIZE + 1] = { ...(items[2] as Json), dueAt: iso(T0 + 4 * HOUR) };
  return items;
}

/** Ids and keys by order of first appearance, and the set's name, so two sets' answers compare. */
function normalise(value: unknown, set: string): unknown {
  const names = new Map<string, string>();
  const text = JSON.stringify(value)
    .replaceAll(set, 'SET')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{64}/g, (id) => {
      if (!names.has(id)) names.set(id, `#${names.size}`);
      return names.get(id) ?? id;
    });
  return JSON.parse(text);
}

/** What the set's jobs hold, with their audit rows and wake-ups, in identity order. */
async function rowsOf(set: string): Promise<unknown> {
  const jobs = await t.pool.query(
    `select j.notice_type, j.identity, j.revision, j.recipient_email, j.recipient_phone, j.channel, j.due_at, j.deadline_at, j.payload, j.state,
            j.source, j.category, j.window_earliest, j.rule_ids, j.evidence_ref, j.customer_id, j.subject_id, j.event_id is not null as from_event,
            j.wakeup_published_at is not null as woken,
            (select count(*)::int from audit_log a where a.target_id = j.id::text and a.action = 'reminder.schedule') as audits,
            (select count(*)::int from pgboss.job w where w.name = 'notice-wakeup' and w.data->>'jobId' = j.id::text) as wakeups
     from reminder_jobs j where j.identity::text like $1 order by j.identity::text, j.notice_type, j.revision`,
    [`%${set}\\_%`],
  );
  return normalise(jobs.rows, set);
}

async function singly(route: Route, items: unknown[]): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const item of items) answers.push(await post(route, { raw: JSON.stringify(item) }));
  return answers;
}

function resultsOf(answer: Answer): ItemResult[] {
  expect(answer.status, JSON.stringify(answer.json).slice(0, 500)).toBe(200);
  return (answer.json as { results: ItemResult[] }).results;
}

/**
 * The whole batch posted again answers as its single requests posted again: every 201 is now the
 * 200 of a retry with the same job, nothing is created, and nothing is written (but the token's
 * last use). A refusal may turn into a conflict (a key a later item made), as it would singly.
 */
async function expectRetriedAsSingles({
  batchRoute,
  singleRoute,
  items,
  batch,
  others,
  sets: [set, otherSet],
}: {
  batchRoute: Route;
  singleRoute: Route;
  items: unknown[];
  batch: ItemResult[];
  others: unknown[];
  sets: [string, string];
}): Promise<void> {
  const before = await snapshotTables(t.pool);
  const retried = resultsOf(await post(batchRoute, { body: { items } }));
  expect({ ...(await snapshotTables(t.pool)), api_tokens: '' }).toEqual({ ...before, api_tokens: '' });
  const singleRetries = await singly(singleRoute, others);
  expect(
    normalise(
      retried.map((result) => ({ status: result.status, json: result.body })),
      set,
    ),
  ).toEqual(normalise(singleRetries, otherSet));
  expect(retried.filter((result) => result.status === 201)).toEqual([]);
  for (const first of batch.filter((result) => result.status === 201))
    expect(retried[first.index]).toEqual({ ...first, status: 200, body: { ...(first.body as Json), created: false } });
}

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  token = (await createApiToken(t.db, { name: 'billing', createdBy: null, actor: 'admin@example.com' })).token;
  eventsOnlyToken = (await createApiToken(t.db, { name: 'planner', createdBy: null, actor: 'admin@example.com', scopes: ['events:write'] })).token;
});

afterAll(async () => {
  await closeWakeupPublisher();
  await t.drop();
});

describe('POST /api/v1/reminders/batch', () => {
  it('answers each of 1 000 items (repeats, conflicts, refusals, held keys) as the single route answers it, and writes the same rows', async () => {
    for (const held of [...heldBefore('setA'), ...heldBefore('setB')]) expect((await post(scheduleRoute, { body: held })).status).toBe(201);

    const items = reminderItems('setA');
    expect(new Blob([JSON.stringify({ items })]).size).toBeLessThan(8 * 1024 * 1024);
    const batch = resultsOf(await post(remindersBatchRoute, { body: { items } }));
    const single = await singly(scheduleRoute, reminderItems('setB'));

    expect(batch.map((result) => result.index)).toEqual(items.map((_, index) => index));
    expect(
      normalise(
        batch.map((result) => ({ status: result.status, json: result.body })),
        'setA',
      ),
    ).toEqual(normalise(single, 'setB'));
    // Every kind of answer is in the list (so the comparison covered each).
    const statuses = new Set(batch.map((result) => `${result.status} ${(result.body as { error?: string }).error ?? ''}`.trim()));
    expect([...statuses].sort()).toEqual(
      [
        '200',
        '201',
        '400 invalid_request',
        '409 notice_conflict',
        '413 body_too_large',
        '422 invalid_payload',
        '422 invalid_phone',
        '422 outside_window',
      ].sort(),
    );
    expect(await rowsOf('setA')).toEqual(await rowsOf('setB'));
    // The jobs due within the horizon had their wake-up published in the transaction, once each.
    const woken = await t.pool.query<{ n: number }>(
      `select count(*)::int as n from reminder_jobs j join pgboss.job w on w.name = 'notice-wakeup' and w.data->>'jobId' = j.id::text
       where j.identity::text like '%setA\\_%' and j.due_at = $1`,
      [new Date(T0 + 10 * MINUTE)],
    );
    expect(woken.rows[0]?.n).toBe(BATCH_MAX_ITEMS / 20);

    await expectRetriedAsSingles({
      batchRoute: remindersBatchRoute,
      singleRoute: scheduleRoute,
      items,
      batch,
      others: reminderItems('setB'),
      sets: ['setA', 'setB'],
    });
  }, 240_000); // thousands of single posts beside the batch: minutes on a loaded 2-core machine

  it('refuses 1 001 items whole (413 batch_too_large) and writes nothing', async () => {
    const items = Array.from({ length: BATCH_MAX_ITEMS + 1 }, (_, n) => reminder('setC', n));
    const before = await snapshotTables(t.pool);
    const answer = await post(remindersBatchRoute, { body: { items } });
    expect(answer.status).toBe(413);
    expect(answer.json).toMatchObject({ error: 'batch_too_large', details: { limit: BATCH_MAX_ITEMS, items: BATCH_MAX_ITEMS + 1 } });
    expect(await snapshotTables(t.pool)).toEqual(before);
  });

  it.each([
    ['no token', { auth: null, body: { items: [reminder('setD', 1)] } }, 401, 'unauthorized'],
    ['a token without reminders:write', { auth: 'events-only', body: { items: [reminder('setD', 2)] } }, 403, 'missing_scope'],
    ['malformed JSON', { raw: '{"items": [' }, 400, 'invalid_json'],
    ['an empty body', { raw: '' }, 400, 'invalid_json'],
    ['a bare array', { body: [reminder('setD', 3)] }, 400, 'invalid_request'],
    ['items that is no array', { body: { items: { 0: reminder('setD', 4) } } }, 400, 'invalid_request'],
    ['no items', { body: {} }, 400, 'invalid_request'],
    ['a field beside items', { body: { items: [], dryRun: true } }, 400, 'invalid_request'],
  ])('%s: one refusal (%i), nothing written', async (_name, args, status, error) => {
    const before = await snapshotTables(t.pool);
    const auth = 'auth' in args ? (args.auth === 'events-only' ? eventsOnlyToken : args.auth) : token;
    const answer = await post(remindersBatchRoute, { ...args, auth });
    expect(answer.status).toBe(status);
    expect(answer.json).toMatchObject({ error });
    expect(await snapshotTables(t.pool)).toEqual(before);
  });

  it('an empty list answers an empty list', async () => {
    expect(await post(remindersBatchRoute, { body: { items: [] } })).toEqual({ status: 200, json: { results: [] } });
  });
});

const renewalPayload = { customer_name: 'Ana Silva', plan_name: 'Coffee Box', amount: '190.00', currency: 'USD' };

function renewal(set: string, n: number, overrides: Json = {}, recipient: Json = {}): Json {
  return {
    type: 'subscription.renewal',
    identity: { subscription_id: `${set}_sub_${n}`, period_start: `${year}-03-01` },
    revision: 0,
    anchorAt: `${year}-03-01T17:00:00Z`,
    recipient: { email: 'Ana@Example.com', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US', ...recipient },
    contract: { termMonths: 12 },
    payload: renewalPayload,
    ...overrides,
  };
}

/** Events of every kind: new ones, repeats, corrections in the same batch, stale revisions, refusals; `rounds` × 24 + 1. */
function eventItems(set: string, rounds: number): unknown[] {
  const items: unknown[] = [];
  for (let r = 0; r < rounds; r += 1) {
    const id = (n: number) => r * 100 + n;
    for (let n = 0; n < 10; n += 1) items.push(renewal(set, id(n)));
    items.push(
      renewal(set, id(0), { source: 'replay' }), // the same event again: 200
      renewal(set, id(1), { payload: { ...renewalPayload, plan_name: 'Other' } }), // same revision, other body: 409 event_conflict
      renewal(set, id(2), { revision: 1, payload: { ...renewalPayload, amount: '210.00' } }), // a correction: 201, revision 0's notices cancelled
      renewal(set, id(2)), // revision 0 again after it: 200, as received
      renewal(set, id(3), { revision: 2 }), // 201 ...
      renewal(set, id(3), { revision: 1 }), // ... then an older revision never received: 409 stale_revision
      renewal(set, id(4), {}, { locale: undefined }), // 400 from the schema
      renewal(set, id(5), { payload: { plan_name: 'Coffee Box' } }), // 422 invalid_payload
      renewal(set, id(6), {}, { phone: '12345' }), // 422 invalid_phone
      renewal(set, id(7), { type: 'subscription.cancelled' }), // 400: no such event type
      {
        type: 'reconciliation.exception',
        identity: { account_id: `${set}_acct_${r}`, reconciliation_id: `${set}_rec_${r}`, exception_id: `${set}_exc_${r}` },
        anchorAt: iso(T0 + MINUTE),
        recipient: { email: 'ana@example.com', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US' },
        payload: { customer_name: 'Ana Lima', amount: '42.00', currency: 'USD', reference: 'RC-2026-0042' },
      },
      null, // 400
      renewal(set, id(8), { revision: 1 }), // 201, correcting an event of this round
      renewal(set, id(9), { anchorAt: `${year}-03-01T09:00:00-08:00` }), // 400: a local anchor
    );
  }
  // Across a chunk: the first event again at the end.
  items.push(items[0]);
  return items;
}

describe('POST /api/v1/events/batch', () => {
  it('answers each event (repeats, corrections, stale revisions, refusals, across chunks) as single posts do, and writes the same rows', async () => {
    const rounds = Math.ceil((EVENT_CHUNK_SIZE + 1) / 24);
    const items = eventItems('evA', rounds);
    expect(items.length).toBeGreaterThan(EVENT_CHUNK_SIZE);
    const batch = resultsOf(await post(eventsBatchRoute, { body: { items } }));
    const single = await singly(eventsRoute, eventItems('evB', rounds));
    expect(
      normalise(
        batch.map((result) => ({ status: result.status, json: result.body })),
        'evA',
      ),
    ).toEqual(normalise(single, 'evB'));
    const kinds = new Set(batch.map((result) => `${result.status} ${(result.body as { error?: string }).error ?? ''}`.trim()));
    expect([...kinds].sort()).toEqual(
      ['200', '201', '400 invalid_request', '409 event_conflict', '409 stale_revision', '422 invalid_payload', '422 invalid_phone'].sort(),
    );
    expect(await rowsOf('evA')).toEqual(await rowsOf('evB'));
    const events = async (set: string) =>
      normalise(
        (
          await t.pool.query(
            `select type, identity, revision, body_sha256, source, (select count(*)::int from unplanned_notices u where u.event_id = e.id) as unplanned
             from business_events e where identity::text like $1 order by identity::text, revision`,
            [`%${set}\\_%`],
          )
        ).rows,
        set,
      );
    expect(await events('evA')).toEqual(await events('evB'));

    await expectRetriedAsSingles({
      batchRoute: eventsBatchRoute,
      singleRoute: eventsRoute,
      items,
      batch,
      others: eventItems('evB', rounds),
      sets: ['evA', 'evB'],
    });
  }, 240_000); // thousands of single posts beside the batch: minutes on a loaded 2-core machine

  it('refuses 1 001 events whole and a token without events:write, writing nothing', async () => {
    const before = await snapshotTables(t.pool);
    const tooMany = await post(eventsBatchRoute, { body: { items: Array.from({ length: BATCH_MAX_ITEMS + 1 }, (_, n) => renewal('evC', n)) } });
    expect(tooMany).toMatchObject({ status: 413, json: { error: 'batch_too_large' } });
    const remindersOnly = (await createApiToken(t.db, { name: 'scheduler', createdBy: null, actor: 'admin@example.com', scopes: ['reminders:write'] })).token;
    const mid = await snapshotTables(t.pool);
    expect(await post(eventsBatchRoute, { body: { items: [renewal('evC', 1)] }, auth: remindersOnly })).toMatchObject({
      status: 403,
      json: { error: 'missing_scope' },
    });
    expect(await post(eventsBatchRoute, { raw: 'not json' })).toMatchObject({ status: 400, json: { error: 'invalid_json' } });
    expect(await snapshotTables(t.pool)).toEqual(mid);
    expect({ ...mid, api_tokens: '', audit_log: '' }).toEqual({ ...before, api_tokens: '', audit_log: '' });
  });
});
