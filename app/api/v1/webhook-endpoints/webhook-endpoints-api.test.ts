import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '@/lib/auth/api-tokens';
import { createLogger } from '@/lib/log';
import { dispatchDue } from '@/lib/webhooks/dispatcher';
import { parseAllowList } from '@/lib/webhooks/url';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { GET as getOne, PATCH as patchOne } from './[id]/route';
import { POST as rotate } from './[id]/rotate-secret/route';
import { POST as testSend } from './[id]/test/route';
import { GET as list, POST as create } from './route';

/**
 * `/api/v1/webhook-endpoints` through its route handlers and real PostgreSQL: the scope, the URL
 * rules at save, bad input refused with nothing changed, audit rows, and the secret in the create
 * and rotate answers only — never in a later GET, the audit log, the stored row or the logs.
 */

type Route = (request: Request, context: { params?: Promise<Record<string, string>> }) => Promise<Response>;

let t: TestDatabase;
let token = '';
let producerOnly = '';
let receiver: http.Server;
let receiverUrl = '';
const logged: string[] = [];
const restore: (() => void)[] = [];

async function call(
  route: Route,
  { method = 'GET', body, raw, params, auth = token }: { method?: string; body?: unknown; raw?: string; params?: Record<string, string>; auth?: string } = {},
) {
  const request = new Request('http://localhost/api/v1/webhook-endpoints', {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const response = await route(request, { params: params ? Promise.resolve(params) : undefined });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

async function fingerprint(): Promise<string> {
  const { rows } = await t.pool.query<{ h: string }>(
    `select md5(coalesce((select string_agg(x::text, ',' order by x::text) from webhook_endpoints x), '') || '|' ||
                coalesce((select string_agg(a::text, ',' order by a::text) from audit_log a), '') || '|' ||
                coalesce((select string_agg(d::text, ',' order by d::text) from webhook_deliveries d), '')) as h`,
  );
  return rows[0]?.h ?? '';
}

/** Everything written to fd 1 and 2 while the file runs: pino writes there through fs. */
function captureOutput() {
  const writeSync = fs.writeSync;
  const write = fs.write;
  const stdout = process.stdout.write.bind(process.stdout);
  const keep = (fd: unknown, data: unknown) => {
    if ((fd === 1 || fd === 2) && (typeof data === 'string' || Buffer.isBuffer(data))) logged.push(data.toString());
  };
  fs.writeSync = ((fd: number, data: never, ...rest: never[]) => {
    keep(fd, data);
    return writeSync(fd, data, ...rest);
  }) as typeof fs.writeSync;
  fs.write = ((fd: number, data: never, ...rest: never[]) => {
    keep(fd, data);
    return (write as (...args: unknown[]) => void)(fd, data, ...rest);
  }) as typeof fs.write;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    logged.push(chunk.toString());
    return stdout(chunk, ...rest);
  }) as typeof process.stdout.write;
  restore.push(() => {
    fs.writeSync = writeSync;
    fs.write = write;
    process.stdout.write = stdout;
  });
}

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  process.env.WEBHOOK_ALLOWED_PRIVATE = '127.0.0.1';
  token = (await createApiToken(t.db, { name: 'hooks admin', createdBy: null, actor: 'admin@example.com', scopes: ['webhooks:manage'] })).token;
  producerOnly = (await createApiToken(t.db, { name: 'billing', createdBy: null, actor: 'admin@example.com' })).token;
  receiver = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(500).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  captureOutput();
});

afterAll(async () => {
  for (const undo of restore) undo();
  delete process.env.WEBHOOK_ALLOWED_PRIVATE;
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await t.drop();
});

describe('/api/v1/webhook-endpoints', () => {
  let id = '';
  let secret = '';
  let rotatedSecret = '';

  it('creates an endpoint with the secret in that answer only, and audits it', async () => {
    const created = await call(create, {
      method: 'POST',
      body: { url: receiverUrl, description: 'billing', eventTypes: ['notice.sent', 'notice.bounced'], reason: 'billing listens' },
    });
    expect(created.status).toBe(201);
    const body = created.json as { endpoint: { id: string; eventTypes: string[]; enabled: boolean; keys: unknown[] }; secret: string };
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    expect(body.endpoint).toMatchObject({ eventTypes: ['notice.sent', 'notice.bounced'], enabled: true, createdBy: expect.stringMatching(/^token:/) });
    id = body.endpoint.id;
    secret = body.secret;
    const { rows } = await t.pool.query<{ action: string; reason: string; actor: string }>(`select action, reason, actor from audit_log where target_id = $1`, [
      id,
    ]);
    expect(rows).toEqual([{ action: 'webhook_endpoint.create', reason: 'billing listens', actor: expect.stringMatching(/^token:/) }]);
  });

  it('never answers the secret again: GET one, GET list; nor stores it in clear or audits it', async () => {
    const one = await call(getOne, { params: { id } });
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ id, url: receiverUrl, enabled: true });
    const all = await call(list);
    expect(all.status).toBe(200);
    expect((all.json.endpoints as { id: string }[]).map((e) => e.id)).toEqual([id]);
    const raw = secret.slice('whsec_'.length);
    for (const text of [one.text, all.text]) {
      expect(text).not.toContain('whsec_');
      expect(text).not.toContain(raw);
      expect(text).not.toContain('sealed');
    }
    const { rows } = await t.pool.query<{ dump: string }>(
      `select (select string_agg(e::text, '') from webhook_endpoints e) || (select string_agg(a::text, '') from audit_log a) as dump`,
    );
    expect(rows[0]?.dump).not.toContain(raw);
  });

  it('refuses a token without webhooks:manage with 403 on every route, and changes nothing', async () => {
    const before = await fingerprint();
    const answers = await Promise.all([
      call(list, { auth: producerOnly }),
      call(create, { method: 'POST', body: { url: receiverUrl }, auth: producerOnly }),
      call(getOne, { params: { id }, auth: producerOnly }),
      call(patchOne, { method: 'PATCH', params: { id }, body: { enabled: false }, auth: producerOnly }),
      call(rotate, { method: 'POST', params: { id }, auth: producerOnly }),
      call(testSend, { method: 'POST', params: { id }, auth: producerOnly }),
    ]);
    expect(answers.map((a) => [a.status, a.json.error])).toEqual(Array.from({ length: 6 }, () => [403, 'missing_scope']));
    expect((await call(list, { auth: 'nlk_00000000_' + 'a'.repeat(43) })).status).toBe(401);
    expect(await fingerprint()).toBe(before);
  });

  it('refuses bad input with a 4xx naming the problem, and changes nothing', async () => {
    const before = await fingerprint();
    const cases: [Route, { method: string; body?: unknown; raw?: string; params?: Record<string, string> }, number, string][] = [
      [create, { method: 'POST', body: { url: 'http://10.0.0.7/hooks' } }, 422, 'url_refused'],
      [create, { method: 'POST', body: { url: 'http://169.254.169.254/latest' } }, 422, 'url_refused'],
      [create, { method: 'POST', body: { url: 'http://[::1]:8080/hooks' } }, 422, 'url_refused'],
      [create, { method: 'POST', body: { url: 'ftp://billing.example.com/hooks' } }, 422, 'url_refused'],
      [create, { method: 'POST', body: { url: 'http://user:pw@127.0.0.1/hooks' } }, 422, 'url_refused'],
      [create, { method: 'POST', body: { url: 'not a url' } }, 422, 'url_refused'],
      [create, { method: 'POST', body: { url: receiverUrl, eventTypes: ['notice.teleported'] } }, 400, 'invalid_request'],
      [create, { method: 'POST', body: { url: receiverUrl, eventTypes: [] } }, 400, 'invalid_request'],
      [create, { method: 'POST', body: { url: receiverUrl, secret: 'whsec_mine' } }, 400, 'invalid_request'],
      [create, { method: 'POST', raw: '{"url":' }, 400, 'invalid_json'],
      [create, { method: 'POST', body: [] }, 400, 'invalid_request'],
      [patchOne, { method: 'PATCH', params: { id }, body: {} }, 400, 'invalid_request'],
      [patchOne, { method: 'PATCH', params: { id }, body: { url: 'http://192.168.1.10/' } }, 422, 'url_refused'],
      [patchOne, { method: 'PATCH', params: { id }, body: { enabled: 'no' } }, 400, 'invalid_request'],
      [patchOne, { method: 'PATCH', params: { id: 'not-a-uuid' }, body: { enabled: false } }, 400, 'invalid_request'],
      [patchOne, { method: 'PATCH', params: { id: '00000000-0000-4000-8000-000000000000' }, body: { enabled: false } }, 404, 'not_found'],
      [getOne, { method: 'GET', params: { id: '00000000-0000-4000-8000-000000000000' } }, 404, 'not_found'],
      [rotate, { method: 'POST', params: { id: '00000000-0000-4000-8000-000000000000' } }, 404, 'not_found'],
      [rotate, { method: 'POST', params: { id }, body: { reason: 'x' } }, 400, 'invalid_request'],
      [testSend, { method: 'POST', params: { id: '00000000-0000-4000-8000-000000000000' } }, 404, 'not_found'],
    ];
    const answers = [];
    for (const [route, request, status, error] of cases) {
      const answer = await call(route, request);
      answers.push({ request, status: answer.status, error: answer.json.error });
      expect({ request, status: answer.status, error: answer.json.error }).toEqual({ request, status, error });
    }
    expect(answers.find((a) => a.status >= 500)).toBeUndefined();
    expect(await fingerprint()).toBe(before);
  });

  it('changes event types and URL, disables and enables, each audited with before and after', async () => {
    const changed = await call(patchOne, { method: 'PATCH', params: { id }, body: { eventTypes: ['notice.failed'], reason: 'only failures now' } });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ eventTypes: ['notice.failed'], enabled: true });
    const disabled = await call(patchOne, { method: 'PATCH', params: { id }, body: { enabled: false, reason: 'receiver moving' } });
    expect(disabled.json).toMatchObject({ enabled: false, disabledReason: 'manual' });
    expect((await call(testSend, { method: 'POST', params: { id } })).json.error).toBe('endpoint_disabled');
    // Disabled by the ledger (410), then by a person: the reason becomes theirs (the console banner ends), the time stays.
    await t.pool.query(`update webhook_endpoints set disabled_at = now() - interval '1 day', disabled_reason = 'gone' where id = $1`, [id]);
    const acknowledged = await call(patchOne, { method: 'PATCH', params: { id }, body: { enabled: false, reason: 'receiver retired' } });
    expect(acknowledged.json).toMatchObject({ enabled: false, disabledReason: 'manual' });
    expect(Date.parse(String(acknowledged.json.disabledAt))).toBeLessThan(Date.now() - 3_600_000);
    const enabled = await call(patchOne, { method: 'PATCH', params: { id }, body: { enabled: true, eventTypes: ['notice.sent'] } });
    expect(enabled.json).toMatchObject({ enabled: true, disabledAt: null, disabledReason: null, failingSince: null, eventTypes: ['notice.sent'] });
    const { rows } = await t.pool.query<{ action: string; before: { eventTypes: string[] }; after: { eventTypes: string[]; enabled: boolean } }>(
      `select action, before, after from audit_log where target_id = $1 and action <> 'webhook_endpoint.create' order by id`,
      [id],
    );
    expect(rows.map((r) => r.action)).toEqual(['webhook_endpoint.update', 'webhook_endpoint.disable', 'webhook_endpoint.disable', 'webhook_endpoint.enable']);
    expect(rows[0]).toMatchObject({ before: { eventTypes: ['notice.sent', 'notice.bounced'] }, after: { eventTypes: ['notice.failed'] } });
    expect(rows[1]?.after.enabled).toBe(false);
  });

  it('rotates: a new secret once, two keys signing during the overlap, neither secret in a later GET', async () => {
    const rotated = await call(rotate, { method: 'POST', params: { id }, body: { reason: 'yearly rotation' } });
    expect(rotated.status).toBe(200);
    const body = rotated.json as {
      secret: string;
      keyId: string;
      previousKeysSignUntil: string;
      endpoint: { keys: { keyId: string; expiresAt: string | null }[] };
    };
    expect(body.secret).toMatch(/^whsec_/);
    expect(body.secret).not.toBe(secret);
    rotatedSecret = body.secret;
    expect(body.endpoint.keys).toHaveLength(2);
    expect(body.endpoint.keys[0]).toMatchObject({ keyId: body.keyId, expiresAt: null });
    expect(body.endpoint.keys[1]?.expiresAt).toBe(body.previousKeysSignUntil);
    const later = await call(getOne, { params: { id } });
    for (const s of [secret, rotatedSecret]) expect(later.text).not.toContain(s.slice('whsec_'.length));
    const { rows } = await t.pool.query<{ n: number }>(
      `select count(*)::int as n from audit_log where target_id = $1 and action = 'webhook_endpoint.rotate_secret'`,
      [id],
    );
    expect(rows[0]?.n).toBe(1);
  });

  it('test send: one webhook.test delivery to this endpoint alone, whose failed attempt is logged without any secret', async () => {
    const other = await call(create, { method: 'POST', body: { url: receiverUrl } });
    expect(other.status).toBe(201);
    const sent = await call(testSend, { method: 'POST', params: { id } });
    expect(sent.status).toBe(201);
    expect(sent.json).toMatchObject({ type: 'webhook.test', webhookId: expect.stringMatching(/^msg_[0-9a-f]{32}$/) });
    const { rows } = await t.pool.query<{ endpoint_id: string; type: string }>(
      `select d.endpoint_id, o.type from webhook_deliveries d join outbox_events o on o.id = d.event_id`,
    );
    expect(rows).toEqual([{ endpoint_id: id, type: 'webhook.test' }]);
    // The dispatcher attempts it (the receiver answers 500) and logs the attempt at info.
    const settings = {
      everyMs: 1_000,
      timeoutMs: 2_000,
      scheduleMs: [0, 60_000],
      disableAfterMs: 86_400_000,
      allow: parseAllowList('127.0.0.1'),
      noticeKeySecret: process.env.NOTICE_KEY_SECRET ?? '',
    };
    expect(await dispatchDue(t.db, settings, createLogger('webhooks-api-test', 'trace'))).toBe(1);
    const attempts = await t.pool.query<{ status: number }>(`select status from webhook_attempts where endpoint_id = $1`, [id]);
    expect(attempts.rows).toEqual([{ status: 500 }]);
    const output = logged.join('');
    expect(output, 'the capture saw the dispatcher log line, so it would see a secret').toContain('webhook attempt not delivered');
    expect(output).not.toContain('whsec_');
    for (const s of [secret, rotatedSecret, (other.json as { secret: string }).secret]) expect(output).not.toContain(s.slice('whsec_'.length));
  });
});
