import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { encode } from 'next-auth/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertUser } from '@/e2e/fixtures/console-data';
import { enrollTestMfa } from '@/testing/mfa';
import { permissions, type Permission } from '@/lib/auth/permissions';
import { roles, type Role } from '@/lib/auth/roles';
import { parseCsv } from '@/lib/replay/csv';
import { createLogger } from '@/lib/log';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { runReplayToEnd } from '@/testing/replay';
import { insertTestJob } from '@/testing/jobs';
import { createTestDatabase, type TestDatabase } from '@/testing/db';

/**
 * The replay and report route handlers, called with real Requests: every role × endpoint
 * against the permission map, refused calls change nothing, and the four-eyes flow end to end.
 */

type Handler = (request: Request) => Promise<Response>;
type Endpoint = {
  path: string;
  method: 'GET' | 'POST';
  permission: Permission;
  load: () => Promise<Record<string, unknown>>;
  query?: () => string;
  body?: () => unknown;
};

const secret = 'nextauth-replays-secret-0123456789abcdef';
const root = path.resolve(import.meta.dirname, '../../../..');
let t: TestDatabase;
const cookies = new Map<Role | 'operator2' | 'manager2', string>();
const ids = new Map<string, string>();
let requestedId = '';

const endpoints: Endpoint[] = [
  { path: '/api/console/replays', method: 'GET', permission: 'replay.read', load: () => import('./route') },
  // A dry run changes nothing for anyone.
  {
    path: '/api/console/replays/dry-run',
    method: 'POST',
    permission: 'replay.request',
    load: () => import('./dry-run/route'),
    body: () => ({ filter: { source: 'matrix-src' } }),
  },
  { path: '/api/console/replays/status', method: 'GET', permission: 'replay.read', load: () => import('./status/route'), query: () => `?id=${requestedId}` },
  {
    path: '/api/console/replays/rejected',
    method: 'GET',
    permission: 'replay.read',
    load: () => import('./rejected/route'),
    query: () => `?id=${requestedId}`,
  },
  {
    path: '/api/console/reports',
    method: 'GET',
    permission: 'reports.read',
    load: () => import('@/app/api/console/reports/route'),
    query: () => '?granularity=day',
  },
  { path: '/api/console/reports/csv', method: 'GET', permission: 'reports.read', load: () => import('@/app/api/console/reports/csv/route') },
];

/** Mutations: allowed roles pass authorization and reach the domain (2xx or 409), refused ones get 403 and change nothing. */
const mutations: Endpoint[] = [
  {
    path: '/api/console/replays',
    method: 'POST',
    permission: 'replay.request',
    load: () => import('./route'),
    body: () => ({ filter: { source: 'no-such-source' }, reason: 'matrix' }),
  },
  {
    path: '/api/console/replays/decide',
    method: 'POST',
    permission: 'replay.approve',
    load: () => import('./decide/route'),
    body: () => ({ id: '00000000-0000-4000-8000-000000000000', decision: 'reject', reason: 'matrix' }),
  },
  {
    path: '/api/console/replays/run',
    method: 'POST',
    permission: 'replay.request',
    load: () => import('./run/route'),
    body: () => ({ id: '00000000-0000-4000-8000-000000000000' }),
  },
  {
    path: '/api/console/replays/cancel',
    method: 'POST',
    permission: 'replay.request',
    load: () => import('./cancel/route'),
    body: () => ({ id: '00000000-0000-4000-8000-000000000000', reason: 'matrix' }),
  },
];

async function call(
  endpoint: Pick<Endpoint, 'load' | 'method' | 'path'>,
  cookie: string | null,
  { query = '', body }: { query?: string; body?: unknown } = {},
): Promise<Response> {
  const module = await endpoint.load();
  const handler = module[endpoint.method] as Handler;
  const headers: Record<string, string> = { 'content-type': 'application/json', origin: 'http://console.test' };
  if (cookie) headers.cookie = cookie;
  return handler(
    new Request(`http://console.test${endpoint.path}${query}`, {
      method: endpoint.method,
      headers,
      body: endpoint.method === 'POST' ? JSON.stringify(body ?? {}) : undefined,
    }),
  );
}

async function snapshot(): Promise<string> {
  const result = await t.db.execute<{ state: string }>(sql`select concat_ws('|',
    (select string_agg(r::text, ',' order by id) from replays r),
    (select count(*)::text from replay_items),
    (select count(*)::text from reminder_jobs),
    (select count(*)::text from audit_log)) as state`);
  return result.rows[0]?.state ?? '';
}

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  process.env.NEXTAUTH_SECRET = secret;
  process.env.RATE_LIMIT_PER_DOMAIN = '10000';
  const people: [Role | 'operator2' | 'manager2', Role][] = [
    ...roles.map((role) => [role, role] as [Role, Role]),
    ['operator2', 'operator'],
    ['manager2', 'manager'],
  ];
  for (const [name, role] of people) {
    const email = `${name}@replays.test`;
    const id = await insertUser(t.db, { email, role, password: `${name}-password-1` });
    // Admins and managers with a password act only with an authenticator set up (lib/auth/mfa.ts);
    // manager2 sets theirs up during the flow below.
    if (name !== 'manager2') await enrollTestMfa(t.db, { userId: id });
    ids.set(name, id);
    cookies.set(name, `next-auth.session-token=${await encode({ token: { sub: id, role, email }, secret })}`);
  }
  for (let i = 0; i < 3; i += 1) await insertTestJob(t.db, { source: 'flow-src', state: 'sent' });
  await t.pool.query(
    "insert into notice_ledger (notice_key, notice_type, identity, job_id, state, sent_at) select notice_key, notice_type, identity, id, 'sent', now() from reminder_jobs where source = 'flow-src'",
  );
  const response = await call({ path: '/api/console/replays', method: 'POST', load: () => import('./route') }, cookies.get('operator') ?? null, {
    body: { filter: { source: 'flow-src' }, reason: 'seed for the matrix' },
  });
  requestedId = ((await response.json()) as { data: { id: string } }).data.id;
});

afterAll(async () => {
  const { closeWakeupPublisher } = await import('@/lib/queue');
  await closeWakeupPublisher();
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
});

describe('replay and report routes: authorization', () => {
  it('every route file under app/api/console/{replays,reports} is covered here', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) =>
        statSync(path.join(dir, name)).isDirectory() ? files(path.join(dir, name)) : name === 'route.ts' ? [path.join(dir, name)] : [],
      );
    const onDisk = [...files(path.join(root, 'app/api/console/replays')), ...files(path.join(root, 'app/api/console/reports'))]
      .map((file) => path.relative(root, file))
      .sort();
    const listed = [...new Set([...endpoints, ...mutations].map((endpoint) => `app${endpoint.path}/route.ts`))].sort();
    expect(onDisk).toEqual(listed);
  });

  for (const endpoint of [...endpoints, ...mutations]) {
    it(`${endpoint.method} ${endpoint.path}: allowed roles equal permissions['${endpoint.permission}'], refusals change nothing`, async () => {
      const allowed: Role[] = [];
      for (const role of roles) {
        const before = await snapshot();
        const response = await call(endpoint, cookies.get(role) ?? null, { query: endpoint.query?.(), body: endpoint.body?.() });
        if (response.status === 403) {
          expect(await response.json()).toMatchObject({ ok: false, error: { code: 'forbidden' } });
          expect(await snapshot()).toBe(before);
          continue;
        }
        expect([200, 201, 202, 409], `${role}: ${await response.clone().text()}`).toContain(response.status);
        if (endpoint.method === 'POST') expect(await snapshot()).toBe(before);
        allowed.push(role);
      }
      expect(allowed).toEqual([...permissions[endpoint.permission]]);
      const before = await snapshot();
      expect((await call(endpoint, null, { query: endpoint.query?.(), body: endpoint.body?.() })).status).toBe(401);
      expect(await snapshot()).toBe(before);
    });
  }

  it('a bad body is a 400 that changes nothing', async () => {
    const before = await snapshot();
    const response = await call({ path: '/api/console/replays', method: 'POST', load: () => import('./route') }, cookies.get('operator') ?? null, {
      body: { filter: {}, reason: '' },
    });
    expect(response.status).toBe(400);
    expect(await snapshot()).toBe(before);
  });
});

describe('the notice type filter is the configured list', () => {
  const dryRun = { path: '/api/console/replays/dry-run', method: 'POST', load: () => import('./dry-run/route') } as const;

  it('refuses a type that is not configured with the configured names, and changes nothing', async () => {
    const before = await snapshot();
    const response = await call(dryRun, cookies.get('operator') ?? null, { body: { filter: { noticeType: 'renewal_notice_t48' } } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toContain(
      'Invalid option: expected one of "renewal_notice_t72"|"renewal_notice_t24"|"payment_recovery"|"auto_renewal_notice"|"trial_conversion_notice"|"price_change_notice"|"pre_debit_notice"|"billing_reminder"',
    );
    expect(await snapshot()).toBe(before);
  });

  it('dry-runs a required type the code registry never had', async () => {
    const job = await insertTestJob(t.db, {
      fact: { type: 'price_change_notice', identity: { subscription_id: 'sub_price_filter', period_start: '2026-10-01' }, revision: 0 },
      category: 'required',
      source: 'price-filter-src',
    });
    const response = await call(dryRun, cookies.get('operator') ?? null, {
      body: { filter: { noticeType: 'price_change_notice', source: 'price-filter-src' } },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { counts: { total: number } } };
    expect(body.data.counts.total).toBe(1);
    expect(job.noticeType).toBe('price_change_notice');
  });
});

describe('replay flow over HTTP', () => {
  it('request → a second operator and the requester are refused → a manager approves → run publishes every job with the batch id', async () => {
    const create = await call({ path: '/api/console/replays', method: 'POST', load: () => import('./route') }, cookies.get('manager') ?? null, {
      body: { filter: { source: 'flow-src' }, reason: 'failover window' },
    });
    expect(create.status).toBe(201);
    const created = (await create.json()) as { data: { id: string; batchId: string; dryRun: { counts: unknown; verdict: { kind: string } } } };
    expect(created.data.dryRun.counts).toEqual({ total: 3, newKeys: 0, existing: { sent: 3 }, blocked: {} });
    expect(created.data.dryRun.verdict.kind).toBe('already_delivered');
    const id = created.data.id;
    const decide = { path: '/api/console/replays/decide', method: 'POST' as const, load: () => import('./decide/route') };
    const before = await snapshot();
    const byOperator = await call(decide, cookies.get('operator2') ?? null, { body: { id, decision: 'approve', reason: 'looks fine' } });
    expect(byOperator.status).toBe(403);
    const own = await call(decide, cookies.get('manager') ?? null, { body: { id, decision: 'approve', reason: 'mine' } });
    expect(own.status).toBe(403);
    expect(await own.json()).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringMatching(/Four-eyes/) } });
    // A manager without an authenticator is sent to the Account page, and nothing changes.
    const notEnrolled = await call(decide, cookies.get('manager2') ?? null, { body: { id, decision: 'approve', reason: 'second pair of eyes' } });
    expect(notEnrolled.status).toBe(403);
    expect(await notEnrolled.json()).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringMatching(/Account page/) } });
    expect(await snapshot()).toBe(before);
    await enrollTestMfa(t.db, { userId: ids.get('manager2') ?? '' });
    const approved = await call(decide, cookies.get('manager2') ?? null, { body: { id, decision: 'approve', reason: 'second pair of eyes' } });
    expect(approved.status).toBe(200);

    const run = await call({ path: '/api/console/replays/run', method: 'POST', load: () => import('./run/route') }, cookies.get('operator') ?? null, {
      body: { id },
    });
    expect(run.status).toBe(202);
    const queue = createPgBossQueue({ url: t.url, queueName: 'replays-routes', visibilityTimeoutMs: 30_000 });
    await queue.start();
    try {
      // The console only moved the replay: nothing is published until a worker's runner claims it.
      const queued = await t.pool.query("select 1 from pgboss.job where data->>'batchId' = $1", [created.data.batchId]);
      expect(queued.rowCount).toBe(0);
      expect(await runReplayToEnd({ db: t.db, queue, replayId: id, logger: createLogger('test', 'silent') })).toEqual({ state: 'completed', published: 3 });
    } finally {
      await queue.stop();
    }
    const status = await call({ path: '/api/console/replays/status', method: 'GET', load: () => import('./status/route') }, cookies.get('support') ?? null, {
      query: `?id=${id}`,
    });
    expect(await status.json()).toMatchObject({ ok: true, data: { state: 'completed', progress: { total: 3, published: 3 } } });
    const wakeups = await t.pool.query<{ batch: string }>("select data->>'batchId' as batch from pgboss.job where data->>'batchId' = $1", [
      created.data.batchId,
    ]);
    expect(wakeups.rowCount).toBe(3);
  });

  it('an uploaded CSV: the dry run lists rejected rows and the rejected-rows download returns them', async () => {
    const csv =
      'notice_type,subscription_id,period_start,recipient_email,due_at,deadline_at,anchor_at,payload\n' +
      'renewal_notice_t72,sub_csv_1,2026-12-01,a@b.test,2026-11-28T08:00:00Z,2026-11-29T08:00:00Z,2026-12-01T00:00:00Z,"{""customer_name"":""Ada"",""plan_name"":""Pro"",""amount"":""49.00"",""currency"":""EUR""}"\n' +
      'renewal_notice_t72,sub_csv_2,2026-12-01,nope,2026-11-28T08:00:00Z,2026-11-29T08:00:00Z,2026-12-01T00:00:00Z,"{}"\n' +
      'renewal_notice_t72,sub_csv_3,2026-12-01,c@b.test,2026-11-28T08:00:00Z,2026-11-29T08:00:00Z,2026-12-01T00:00:00Z,"{""customer_name"":""Ada""}"\n';
    const dry = await call({ path: '/api/console/replays/dry-run', method: 'POST', load: () => import('./dry-run/route') }, cookies.get('operator') ?? null, {
      body: { csv },
    });
    expect(await dry.json()).toMatchObject({
      ok: true,
      data: {
        accepted: 1,
        counts: { total: 1, newKeys: 1 },
        rejections: [
          { line: 3, reason: expect.stringMatching(/recipient_email/) },
          { line: 4, reason: expect.stringMatching(/^payload\.plan_name: is required \(string\); payload\.amount: is required/) },
        ],
      },
    });
    const create = await call({ path: '/api/console/replays', method: 'POST', load: () => import('./route') }, cookies.get('operator') ?? null, {
      body: { csv, reason: 'upstream export' },
    });
    const id = ((await create.json()) as { data: { id: string } }).data.id;
    const download = await call(
      { path: '/api/console/replays/rejected', method: 'GET', load: () => import('./rejected/route') },
      cookies.get('support') ?? null,
      { query: `?id=${id}` },
    );
    expect(download.headers.get('content-type')).toMatch(/text\/csv/);
    expect(parseCsv(await download.text()).map((r) => r.fields.slice(0, 2))).toEqual([
      ['line', 'reason'],
      ['3', expect.stringMatching(/recipient_email "nope"/)],
      ['4', expect.stringMatching(/^payload\.plan_name: is required/)],
    ]);
  });

  it('the report CSV is exactly the tables the JSON (and the page) shows', async () => {
    const json = await call(
      { path: '/api/console/reports', method: 'GET', load: () => import('@/app/api/console/reports/route') },
      cookies.get('manager') ?? null,
      { query: '?granularity=day' },
    );
    const { data } = (await json.json()) as { data: { tables: { title: string; header: string[]; rows: string[][] }[] } };
    const csv = await call(
      { path: '/api/console/reports/csv', method: 'GET', load: () => import('@/app/api/console/reports/csv/route') },
      cookies.get('manager') ?? null,
      { query: '?granularity=day' },
    );
    const parsed = parseCsv(await csv.text())
      .map((r) => r.fields)
      .filter((row) => row.length > 1);
    expect(parsed).toEqual(data.tables.flatMap((table) => [table.header, ...table.rows]));
    expect(data.tables[0]?.rows.at(-1)?.[0]).toBe('Total');
  });
});
