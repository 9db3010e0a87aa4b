import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPreferenceChanges, preferenceFor } from '@/db/queries/preferences';
import { createLogger } from '@/lib/log';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createWakeupHandler } from '@/lib/jobs/handle-wakeup';
import { createDomainRateLimiter } from '@/lib/jobs/rate-limit';
import { createMailTransport } from '@/lib/mail/transport';
import { signRecipientToken } from '@/lib/recipient/link';
import { activeNoticeConfig } from '@/lib/windows/active';
import { snapshotTables } from '@/test/fuzz/table-snapshot';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { compactToken } from '@/testing/recipient';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { GET, POST } from './route';

/**
 * RFC 8058 one-click unsubscribe through the route handler as Next calls it: the URI a sent
 * courtesy notice carries, a POST of `List-Unsubscribe=One-Click`, then the send path (worker
 * handler, SMTP sink) with the next courtesy and required notice to that recipient.
 */

let t: TestDatabase;
let sink: SmtpSink;
const secret = process.env.NOTICE_KEY_SECRET ?? '';

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  sink = await startSmtpSink();
});

afterAll(async () => {
  await sink?.stop();
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t?.drop();
});

function tokenPath(url: string): string {
  return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
}

function call(route: typeof GET, token: string, init: RequestInit = {}) {
  return route(new Request(`http://localhost/api/recipient/unsubscribe/${encodeURIComponent(token)}`, init), { params: Promise.resolve({ token }) });
}

const oneClick = (token: string, init: RequestInit = {}) =>
  call(POST, token, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click', ...init });

function handler() {
  return (async () =>
    createWakeupHandler({
      db: t.db,
      mail: createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'n@notices.test', messageIdDomain: 'notices.test' }),
      rateLimiter: await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 }),
      settings: {
        mode: 'enforce',
        noticeConfig: activeNoticeConfig().config,
        retryBaseMs: 1_000,
        retryCapMs: 10_000,
        maxAttempts: 3,
        secret,
        cancelBaseUrl: 'https://notices.test',
        maxTokenWaitMs: 1_000,
      },
      workerId: 'test',
      logger: createLogger('test', 'silent'),
    }))();
}

let wakeups = 0;
const wake = (jobId: string) => ({ wakeup: { jobId }, messageId: `m-${(wakeups += 1)}`, signal: new AbortController().signal });

describe('one-click unsubscribe (RFC 8058)', () => {
  it('the URI of a sent courtesy notice unsubscribes on the RFC POST; the next courtesy notice is suppressed, a required one is sent', async () => {
    const email = `ana-${Date.now()}@example.test`;
    const first = await insertTestJob(t.db, { recipientEmail: email });
    const handle = await handler();
    await handle(wake(first.id));
    const [mail] = sink.messages().filter((m) => m.correlation === correlationOf(first.noticeKey));
    const uri = /^<([^>]+)>$/.exec(mail?.headers['list-unsubscribe'] ?? '')?.[1] ?? '';
    expect(uri).toMatch(/^https:\/\/notices\.test\/api\/recipient\/unsubscribe\/0u[A-Za-z0-9_-]{32}$/);
    const token = tokenPath(uri);

    // A GET (a link scanner, a prefetch) shows the button and changes nothing.
    const before = await snapshotTables(t.pool);
    const page = await call(GET, token);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('name="List-Unsubscribe" value="One-Click"');
    expect(html).toContain('a•••@example.test');
    expect(html).not.toContain(email);
    expect(page.headers.get('set-cookie')).toBeNull();
    const after = await snapshotTables(t.pool);
    delete before.rate_limit_domains;
    delete after.rate_limit_domains;
    expect(after).toEqual(before);
    expect(await preferenceFor(t.db, { recipient: email, category: 'courtesy', channel: 'email' })).toBe('opted_in');

    const response = await oneClick(token);
    expect(response.status).toBe(200);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toContain('You are unsubscribed');
    expect(await preferenceFor(t.db, { recipient: email, category: 'courtesy', channel: 'email' })).toBe('opted_out');
    expect(await listPreferenceChanges(t.db, { recipient: email, channel: 'email' })).toMatchObject([
      { category: 'courtesy', fromState: null, toState: 'opted_out', source: 'one_click', actor: correlationOf(first.noticeKey) },
    ]);

    // Replayed (providers retry): still 200, no second history row.
    expect((await oneClick(token)).status).toBe(200);
    expect(await listPreferenceChanges(t.db, { recipient: email, channel: 'email' })).toHaveLength(1);

    const courtesy = await insertTestJob(t.db, { recipientEmail: email });
    const required = await insertTestJob(t.db, { recipientEmail: email, category: 'required' });
    await handle(wake(courtesy.id));
    await handle(wake(required.id));
    expect(await readJob(t.db, courtesy.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'unsubscribed' });
    expect(sink.countByCorrelation(correlationOf(courtesy.noticeKey))).toBe(0);
    expect(await readJob(t.db, required.id)).toMatchObject({ state: 'sent' });
    expect(sink.countByCorrelation(correlationOf(required.noticeKey))).toBe(1);
  });

  it('accepts the multipart/form-data body RFC 8058 also allows', async () => {
    const job = await insertTestJob(t.db);
    const token = signRecipientToken({ secret, noticeKey: job.noticeKey, purpose: 'unsubscribe', expiresAt: new Date(Date.now() + 86_400_000) });
    const form = new FormData();
    form.set('List-Unsubscribe', 'One-Click');
    const response = await call(POST, token, { method: 'POST', body: form });
    expect(response.status).toBe(200);
    expect(await preferenceFor(t.db, { recipient: job.recipientEmail ?? '', category: 'courtesy', channel: 'email' })).toBe('opted_out');
  });

  it('refuses a tampered, expired, wrong-purpose or body-less request and changes no row', async () => {
    const job = await insertTestJob(t.db);
    const valid = signRecipientToken({ secret, noticeKey: job.noticeKey, purpose: 'unsubscribe', expiresAt: new Date(Date.now() + 86_400_000) });
    const expired = signRecipientToken({ secret, noticeKey: job.noticeKey, purpose: 'unsubscribe', expiresAt: new Date(Date.now() - 1_000) });
    const page = signRecipientToken({ secret, noticeKey: job.noticeKey, purpose: 'page', expiresAt: new Date(Date.now() + 86_400_000) });
    const tampered = `${valid.slice(0, -2)}${valid.endsWith('A') ? 'B' : 'A'}A`;
    const unknown = signRecipientToken({ secret, noticeKey: 'f'.repeat(64), purpose: 'unsubscribe', expiresAt: new Date(Date.now() + 86_400_000) });
    const cases: [string, () => Promise<Response>, number][] = [
      ['tampered', () => oneClick(tampered), 400],
      ['expired', () => oneClick(expired), 410],
      ['wrong purpose', () => oneClick(page), 400],
      ['unknown notice', () => oneClick(unknown), 404],
      ['no body', () => call(POST, valid, { method: 'POST' }), 415],
      ['JSON', () => call(POST, valid, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"List-Unsubscribe":"One-Click"}' }), 415],
      ['other value', () => oneClick(valid, { body: 'List-Unsubscribe=Yes' }), 400],
      ['too large', () => oneClick(valid, { body: `List-Unsubscribe=One-Click&x=${'a'.repeat(10_000)}` }), 413],
      ['garbage token', () => oneClick('<script>'), 400],
    ];
    for (const [name, request, status] of cases) {
      const before = await snapshotTables(t.pool);
      const response = await request();
      expect(response.status, name).toBe(status);
      expect(response.headers.get('content-type'), name).toContain('text/html');
      expect(await response.text(), name).toContain('Nothing was changed');
      const after = await snapshotTables(t.pool);
      // Rate-limit counters aside (a genuine token is counted before its body is read).
      delete before.rate_limit_domains;
      delete after.rate_limit_domains;
      expect(after, name).toEqual(before);
    }
    expect(await preferenceFor(t.db, { recipient: job.recipientEmail ?? '', category: 'courtesy', channel: 'email' })).toBe('opted_in');
  });

  it('a compact link: refused when tampered, of another purpose, for no notice or a year after its window closed, changing no row', async () => {
    const job = await insertTestJob(t.db);
    const valid = compactToken(job.noticeKey, 'unsubscribe');
    const stale = await insertTestJob(t.db);
    // The window closed 366 days ago: a year after the latest the notice could have been sent.
    const closeWindow = (days: number) =>
      t.pool.query(
        `update reminder_jobs set deadline_at = now() - make_interval(days => $2), due_at = now() - make_interval(days => $2 + 1),
           window_earliest = now() - make_interval(days => $2 + 1) where id = $1`,
        [stale.id, days],
      );
    await closeWindow(366);
    const cases: [string, string, number][] = [
      ['tampered', `${valid.slice(0, -2)}${valid.endsWith('AA') ? 'BB' : 'AA'}`, 400],
      ['wrong purpose', compactToken(job.noticeKey, 'page'), 400],
      ['unknown notice', compactToken('f'.repeat(64), 'unsubscribe'), 404],
      ['a year after the window', compactToken(stale.noticeKey, 'unsubscribe'), 410],
    ];
    for (const [name, token, status] of cases) {
      const before = await snapshotTables(t.pool);
      for (const response of [await call(GET, token), await oneClick(token)]) {
        expect(response.status, name).toBe(status);
        expect(await response.text(), name).toContain('Nothing was changed');
      }
      const after = await snapshotTables(t.pool);
      delete before.rate_limit_domains;
      delete after.rate_limit_domains;
      expect(after, name).toEqual(before);
    }
    // 364 days after the window closed it still works.
    await closeWindow(364);
    expect((await oneClick(compactToken(stale.noticeKey, 'unsubscribe'))).status).toBe(200);
    expect(await preferenceFor(t.db, { recipient: stale.recipientEmail ?? '', category: 'courtesy', channel: 'email' })).toBe('opted_out');
    expect((await oneClick(valid)).status).toBe(200);
  });

  it('rate limits a genuine link hammered in a loop (429 with Retry-After)', async () => {
    const job = await insertTestJob(t.db);
    const token = signRecipientToken({ secret, noticeKey: job.noticeKey, purpose: 'unsubscribe', expiresAt: new Date(Date.now() + 86_400_000) });
    const statuses: number[] = [];
    for (let i = 0; i < 22; i += 1) statuses.push((await call(GET, token)).status);
    expect(statuses.slice(0, 20).every((status) => status === 200)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429]);
    const limited = await call(GET, token);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
