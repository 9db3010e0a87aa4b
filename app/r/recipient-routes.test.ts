import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { signCompactToken } from '@/lib/recipient/link';
import { compactToken, insertSentNotice, pageToken, type SentTestNotice } from '@/testing/recipient';
import { patchEnv, snapshotTables } from '@/test/fuzz/harness';
import { POST as cancelRoute } from './[token]/cancel/route';
import { POST as preferencesRoute } from './[token]/preferences/route';
import { GET as pageRoute } from './[token]/route';

/**
 * The recipient page and its two actions as Next calls them, against a real database: what the
 * page shows, each refusal's page and status with every table unchanged (the rate-limit counters
 * aside), the idempotent cancellation request, the one-time code check and its limit, the
 * configured merchant redirect (never taken from the request), and the courtesy preferences.
 */

type Route = (request: Request, context?: { params?: Promise<Record<string, string | string[]> | undefined> }) => Promise<Response>;

const base = 'https://notices.test';
let t: TestDatabase;
let restoreEnv: () => void;

/** The shipped configuration plus a type whose cancellation is the merchant's own page. */
function writeConfigWithRedirect(): string {
  const shipped = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../config/notice-ledger.json'), 'utf8')) as {
    noticeTypes: Record<string, Record<string, unknown>>;
  };
  shipped.noticeTypes.renewal_merchant_cancel = {
    ...shipped.noticeTypes.renewal_notice_t72,
    label: 'Renewal notice (merchant cancels)',
    template: 'renewal_notice_t72',
    cancel: { requiresCode: false, redirect: 'https://merchant.example/account/cancel?subscription={subscription_id}&c={customer_id}' },
  };
  const file = path.join(os.tmpdir(), `recipient-routes-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(shipped));
  return file;
}

async function call(
  route: Route,
  token: string,
  {
    method = 'GET',
    body,
    json = false,
    query = '',
    headers = {},
  }: { method?: string; body?: string; json?: boolean; query?: string; headers?: Record<string, string> } = {},
) {
  const suffix = route === cancelRoute ? '/cancel' : route === preferencesRoute ? '/preferences' : '';
  const request = new Request(`${base}/r/${encodeURIComponent(token)}${suffix}${query}`, {
    method,
    headers: {
      ...(body !== undefined ? { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' } : {}),
      accept: json ? 'application/json' : 'text/html',
      ...headers,
    },
    body,
  });
  const response = await route(request, { params: Promise.resolve({ token }) });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** Every table but the rate-limit counters, which a refused request may move. */
async function productTables(): Promise<Record<string, string>> {
  const { rate_limit_domains: _counters, ...rest } = await snapshotTables(t.pool);
  return rest;
}

async function requestsFor(notice: SentTestNotice) {
  return (await t.pool.query('select id, requested_at, code_verified from cancellation_requests where notice_key = $1', [notice.job.noticeKey])).rows;
}

beforeAll(async () => {
  t = await createTestDatabase();
  restoreEnv = patchEnv({ DATABASE_URL: t.url, PUBLIC_BASE_URL: base, NOTICE_CONFIG: writeConfigWithRedirect(), RECIPIENT_CODE_ATTEMPTS: '3' });
});

afterAll(async () => {
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
  restoreEnv();
});

describe('GET /r/{token}', () => {
  it('shows what the notice is about in the recipient’s zone and offers cancel and preferences, never the code', async () => {
    const notice = await insertSentNotice(t.db, { anchorAt: new Date('2027-03-04T09:30:00Z'), timeZone: 'Europe/Berlin' });
    const page = await call(pageRoute, pageToken(notice.job.noticeKey));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.text).toContain('Your Coffee Box subscription');
    expect(page.text).toContain('€19.00');
    // 09:30 UTC is 10:30 in Berlin in March (CET).
    expect(page.text).toContain('Mar 4, 2027, 10:30 AM');
    expect(page.text).toContain('Central European Standard Time (Europe/Berlin)');
    expect(page.text).toContain('data-testid="cancel-button"');
    expect(page.text).not.toContain('data-testid="code-input"');
    expect(page.text).toContain(`action="${base}/r/${encodeURIComponent(pageToken(notice.job.noticeKey))}/cancel"`.slice(0, 40));
    expect(page.text).toContain('data-testid="preference-email"');
    expect(page.text).not.toContain('preference-sms');
    expect(page.text).not.toContain(notice.code);
    expect(page.text).not.toContain(notice.job.noticeKey);
  });

  it('a required notice asks for the code and says why it cannot be unsubscribed', async () => {
    const notice = await insertSentNotice(t.db, { type: 'auto_renewal_notice', phone: '+4915112345642' });
    const page = await call(pageRoute, pageToken(notice.job.noticeKey));
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-testid="code-input"');
    expect(page.text).toContain('Required by law');
    expect(page.text).toContain('Automatic-renewal laws require us to tell you before your subscription renews.');
    expect(page.text).toContain('data-testid="preference-sms"');
    expect(page.text).toContain('+49 ••• 42');
  });

  it('refuses malformed, tampered, expired, foreign-purpose and unknown-notice links with their page and status, changing nothing', async () => {
    const notice = await insertSentNotice(t.db);
    const good = pageToken(notice.job.noticeKey);
    const [version, body, signature] = good.split('.') as [string, string, string];
    const tampered = `${version}.${body}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    const cases: [string, string, number, string][] = [
      ['malformed', 'not-a-token', 400, 'This link is incomplete'],
      ['truncated', good.slice(0, 40), 400, 'This link is incomplete'],
      ['tampered', tampered, 403, 'This link does not work'],
      ['expired', pageToken(notice.job.noticeKey, { expiresAt: new Date(Date.now() - 1_000) }), 410, 'This link has expired'],
      ['unsubscribe purpose', pageToken(notice.job.noticeKey, { purpose: 'unsubscribe' }), 400, 'This link is incomplete'],
      ['unknown notice', pageToken('f'.repeat(64)), 404, 'We could not find this notice'],
    ];
    for (const [name, token, status, title] of cases) {
      for (const [route, method, formBody] of [
        [pageRoute, 'GET', undefined],
        [cancelRoute, 'POST', 'code=ABCDEFGH23'],
        [preferencesRoute, 'POST', 'channel=email&state=opted_out'],
      ] as const) {
        const before = await productTables();
        const answer = await call(route, token, { method, body: formBody });
        expect(answer.status, `${name} ${method}`).toBe(status);
        expect(answer.text, name).toContain(title);
        expect(answer.text, name).toContain('Nothing was changed.');
        expect(await productTables(), `${name} ${method} changed a table`).toEqual(before);
        const json = await call(route, token, { method, body: formBody === undefined ? undefined : '{}', json: true });
        expect(json.status, `${name} json`).toBe(status);
        expect(JSON.parse(json.text)).toMatchObject({ ok: false, error: { code: expect.stringMatching(/^(link_|notice_)/) } });
      }
    }
  });
});

describe('compact links (every notice carries one now; the v1 cases above are the mails already sent)', () => {
  const routes = [
    [pageRoute, 'GET', undefined],
    [cancelRoute, 'POST', 'code=ABCDEFGH23'],
    [preferencesRoute, 'POST', 'channel=email&state=opted_out'],
  ] as const;

  async function expectRefused(name: string, token: string, status: number, title: string) {
    for (const [route, method, formBody] of routes) {
      const before = await productTables();
      const answer = await call(route, token, { method, body: formBody });
      expect(answer.status, `${name} ${method}`).toBe(status);
      expect(answer.text, name).toContain(title);
      expect(answer.text, name).toContain('Nothing was changed.');
      expect(await productTables(), `${name} ${method} changed a table`).toEqual(before);
    }
  }

  it('opens the page, forms post below it; refused: tampered 403, past the anchor 410, another purpose 400, no such notice 404, changing nothing', async () => {
    const notice = await insertSentNotice(t.db);
    const token = compactToken(notice.job.noticeKey);
    const page = await call(pageRoute, token);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`action="${base}/r/${token}/cancel"`);
    expect(page.text).not.toContain(notice.job.noticeKey);

    await expectRefused('tampered', `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`, 403, 'This link does not work');
    await expectRefused('one character short', token.slice(0, -1), 400, 'This link is incomplete');
    await expectRefused('unsubscribe purpose', compactToken(notice.job.noticeKey, 'unsubscribe'), 400, 'This link is incomplete');
    await expectRefused('unknown notice', compactToken('f'.repeat(64)), 404, 'We could not find this notice');
    // Its expiry is the notice's: the charge (its anchor) has passed, so has the link; no date in the token.
    const charged = await insertSentNotice(t.db, { anchorAt: new Date(Date.now() - 60_000) });
    await expectRefused('past the anchor', compactToken(charged.job.noticeKey), 410, 'This link has expired');
  });

  it('a prefix two notices share names neither: 404, never a guess between them', async () => {
    const first = await insertSentNotice(t.db);
    const second = await insertSentNotice(t.db, { withLedger: false });
    expect((await call(pageRoute, compactToken(second.job.noticeKey))).status).toBe(200);
    const twin = `${first.job.noticeKey.slice(0, 24)}${second.job.noticeKey.slice(24)}`;
    await t.pool.query('update reminder_jobs set notice_key = $1 where id = $2', [twin, second.job.id]);
    await expectRefused('shared prefix', compactToken(first.job.noticeKey), 404, 'We could not find this notice');
    await expectRefused('shared prefix, the other', compactToken(twin), 404, 'We could not find this notice');
  });

  it('keys rotate: a link signed with the old key works during the overlap, is expired after its date and refused once unlisted; new links carry the new key id', async () => {
    const notice = await insertSentNotice(t.db);
    const oldCompact = compactToken(notice.job.noticeKey);
    const oldV1 = pageToken(notice.job.noticeKey);
    const withKeys = async (value: string, check: () => Promise<void>) => {
      const restore = patchEnv({ RECIPIENT_LINK_KEYS: value });
      try {
        await check();
      } finally {
        restore();
      }
    };
    const fresh = `2:${'r'.repeat(48)}`;
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const today = new Date().toISOString().slice(0, 10);
    await withKeys(`${fresh},0:derived:${tomorrow}`, async () => {
      expect((await call(pageRoute, oldCompact)).status).toBe(200);
      expect((await call(pageRoute, oldV1)).status).toBe(200);
      const { config, recipientLinkKeys } = await import('@/lib/config');
      const rotated = signCompactToken({ keys: recipientLinkKeys(config()), noticeKey: notice.job.noticeKey, purpose: 'page' });
      expect(rotated).toMatch(/^2p/);
      expect((await call(pageRoute, rotated)).status).toBe(200);
    });
    await withKeys(`${fresh},0:derived:${today}`, async () => {
      await expectRefused('old key past its date', oldCompact, 410, 'This link has expired');
      await expectRefused('v1 past the derived key’s date', oldV1, 410, 'This link has expired');
    });
    await withKeys(fresh, async () => {
      await expectRefused('old key unlisted', oldCompact, 403, 'This link does not work');
      await expectRefused('v1, derived key unlisted', oldV1, 403, 'This link does not work');
    });
    expect((await call(pageRoute, oldCompact)).status).toBe(200);
  });
});

describe('POST /r/{token}/cancel', () => {
  it('records one request per notice: a second post finds the first, and the page says so', async () => {
    const notice = await insertSentNotice(t.db);
    const token = pageToken(notice.job.noticeKey);
    const first = await call(cancelRoute, token, { method: 'POST', body: '' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe(`${base}/r/${encodeURIComponent(token)}?flash=cancel_requested`);
    const [row] = await requestsFor(notice);
    expect(row).toMatchObject({ code_verified: false });
    const stored = await t.pool.query('select notice_type, subject_id, identity, source, job_id from cancellation_requests where notice_key = $1', [
      notice.job.noticeKey,
    ]);
    expect(stored.rows[0]).toEqual({
      notice_type: 'renewal_notice_t72',
      subject_id: notice.fact.identity.subscription_id,
      identity: notice.fact.identity,
      source: 'recipient_page',
      job_id: notice.job.id,
    });

    const before = await productTables();
    const again = await call(cancelRoute, token, { method: 'POST', body: '' });
    expect(again.headers.get('location')).toContain('flash=cancel_already');
    expect(await productTables()).toEqual(before);
    expect(await requestsFor(notice)).toEqual([row]);
    const json = await call(cancelRoute, token, { method: 'POST', body: '{}', json: true });
    expect(JSON.parse(json.text)).toEqual({ ok: true, data: { status: 'already_requested', requestedAt: (row?.requested_at as Date).toISOString() } });

    const page = await call(pageRoute, token, { query: '?flash=cancel_requested' });
    expect(page.text).toContain('data-testid="cancel-requested"');
    expect(page.text).toContain('Your cancellation request has been recorded');
    expect(page.text).not.toContain('data-testid="cancel-button"');
  });

  it('asks for the code where the type says so: missing or wrong changes nothing, a wrong one counts, the right one (as typed) records', async () => {
    const notice = await insertSentNotice(t.db, { type: 'price_change_notice', code: 'QRST2345WX' });
    const token = pageToken(notice.job.noticeKey);
    const before = await productTables();
    const missing = await call(cancelRoute, token, { method: 'POST', body: 'code=' });
    expect(missing.headers.get('location')).toContain('flash=code_required');
    const wrong = await call(cancelRoute, token, { method: 'POST', body: 'code=QRST2345WY' });
    expect(wrong.status).toBe(303);
    expect(wrong.headers.get('location')).toContain('flash=code_wrong');
    const wrongJson = await call(cancelRoute, token, { method: 'POST', body: JSON.stringify({ code: 'nope' }), json: true });
    expect(wrongJson.status).toBe(403);
    expect(JSON.parse(wrongJson.text)).toMatchObject({ error: { code: 'code_wrong' } });
    expect(await productTables()).toEqual(before);
    const page = await call(pageRoute, token, { query: '?flash=code_wrong' });
    expect(page.text).toContain('does not match this notice');

    const right = await call(cancelRoute, token, { method: 'POST', body: 'code=qrst-2345 wx' });
    expect(right.headers.get('location')).toContain('flash=cancel_requested');
    expect(await requestsFor(notice)).toEqual([expect.objectContaining({ code_verified: true })]);
  });

  it('refuses code entry for a notice once its wrong codes are used up, even the right code', async () => {
    const notice = await insertSentNotice(t.db, { type: 'auto_renewal_notice', code: 'LMNP234567' });
    const token = pageToken(notice.job.noticeKey);
    for (let i = 0; i < 3; i += 1)
      expect((await call(cancelRoute, token, { method: 'POST', body: `code=WRONG${i}` })).headers.get('location')).toContain('code_wrong');
    const before = await productTables();
    const locked = await call(cancelRoute, token, { method: 'POST', body: 'code=LMNP234567' });
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(locked.text).toContain('Too many attempts');
    expect(await productTables()).toEqual(before);
    expect(await requestsFor(notice)).toEqual([]);
  });

  it('sends the customer to the configured merchant page with the notice’s own identity, whatever the request carries', async () => {
    const notice = await insertSentNotice(t.db, { type: 'renewal_merchant_cancel' });
    await t.pool.query(`update reminder_jobs set customer_id = 'cus 1&x=2' where id = $1`, [notice.job.id]);
    const token = pageToken(notice.job.noticeKey);
    const before = await productTables();
    const answer = await call(cancelRoute, token, {
      method: 'POST',
      body: 'redirect=https://evil.example/&location=https://evil.example/&next=//evil.example',
      headers: { referer: 'https://evil.example/', host: 'evil.example' },
    });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(
      `https://merchant.example/account/cancel?subscription=${notice.fact.identity.subscription_id}&c=cus%201%26x%3D2`,
    );
    // Nothing changes but the notice's evidence record (a required type's), which keeps the redirect and when it happened.
    const { evidence_entries: _after, evidence_unchained: _waitingAfter, ...after } = await productTables();
    const { evidence_entries: _before, evidence_unchained: _waitingBefore, ...unchanged } = before;
    expect(after).toEqual(unchanged);
    const recorded = await t.pool.query<{ body: string }>(`select body from evidence_entries where notice_key = $1 and kind = 'recipient.cancel_request'`, [
      notice.job.noticeKey,
    ]);
    expect(recorded.rows.map((row) => (JSON.parse(row.body) as { redirectedTo?: string }).redirectedTo)).toEqual([answer.headers.get('location')]);
    const page = await call(pageRoute, token);
    expect(page.text).toContain('merchant.example');
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' https://merchant.example");
  });

  it('offers nothing to cancel for a type without cancellation, and refuses a post for it', async () => {
    const notice = await insertSentNotice(t.db, { type: 'payment_recovery' });
    const token = pageToken(notice.job.noticeKey);
    expect((await call(pageRoute, token)).text).not.toContain('data-testid="cancel-section"');
    const before = await productTables();
    const answer = await call(cancelRoute, token, { method: 'POST', body: '' });
    expect(answer.status).toBe(422);
    expect(await productTables()).toEqual(before);
  });
});

describe('POST /r/{token}/preferences', () => {
  it('turns courtesy reminders off and on as the recipient page, with the notice’s correlation as actor', async () => {
    const notice = await insertSentNotice(t.db, { phone: '+4915112345600' });
    const token = pageToken(notice.job.noticeKey);
    const off = await call(preferencesRoute, token, { method: 'POST', body: 'channel=email&state=opted_out' });
    expect(off.status).toBe(303);
    expect(off.headers.get('location')).toContain('flash=preferences_saved');
    const changes = await t.pool.query(
      'select recipient, category, channel, from_state, to_state, source, actor from recipient_preference_changes where recipient = $1',
      [notice.job.recipientEmail],
    );
    expect(changes.rows).toEqual([
      {
        recipient: notice.job.recipientEmail,
        category: 'courtesy',
        channel: 'email',
        from_state: null,
        to_state: 'opted_out',
        source: 'recipient_page',
        actor: correlationOf(notice.job.noticeKey),
      },
    ]);
    expect((await call(pageRoute, token)).text).toMatch(/data-testid="preference-email-state"\s*>Off</);
    const sms = await call(preferencesRoute, token, { method: 'POST', body: JSON.stringify({ channel: 'sms', state: 'opted_out' }), json: true });
    expect(JSON.parse(sms.text)).toEqual({ ok: true, data: { channel: 'sms', state: 'opted_out', changed: true } });
    const on = await call(preferencesRoute, token, { method: 'POST', body: 'channel=email&state=opted_in' });
    expect(on.status).toBe(303);
    expect((await t.pool.query('select state from recipient_preferences where recipient = $1', [notice.job.recipientEmail])).rows).toEqual([
      { state: 'opted_in' },
    ]);
  });

  it('refuses a channel the notice has no address for, a required category, and nonsense, changing nothing', async () => {
    const notice = await insertSentNotice(t.db);
    const token = pageToken(notice.job.noticeKey);
    const before = await productTables();
    for (const body of ['channel=sms&state=opted_out', 'channel=email&state=required', 'channel=fax&state=opted_out', 'category=required&channel=email']) {
      const answer = await call(preferencesRoute, token, { method: 'POST', body });
      expect(answer.status, body).toBe(400);
      expect(answer.text).toContain('Nothing was changed.');
    }
    expect((await call(preferencesRoute, token, { method: 'POST', body: 'x'.repeat(5_000) })).status).toBe(413);
    expect((await call(preferencesRoute, token, { method: 'POST', body: '<x/>', headers: { 'content-type': 'text/xml' } })).status).toBe(400);
    expect(await productTables()).toEqual(before);
  });
});

describe('rate limits', () => {
  it('per notice link and per client address (behind a trusted proxy): 429 with Retry-After, other links unaffected', async () => {
    const undo = patchEnv({ RECIPIENT_LINK_LIMIT: '3', RECIPIENT_ADDRESS_LIMIT: '5', TRUSTED_PROXY_HOPS: '1' });
    try {
      const [a, b, c] = [await insertSentNotice(t.db), await insertSentNotice(t.db), await insertSentNotice(t.db)];
      const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });
      for (let i = 0; i < 3; i += 1) expect((await call(pageRoute, pageToken(a.job.noticeKey), from('203.0.113.7'))).status).toBe(200);
      const limited = await call(pageRoute, pageToken(a.job.noticeKey), from('198.51.100.1'));
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
      expect((await call(pageRoute, pageToken(b.job.noticeKey), from('203.0.113.7'))).status).toBe(200);
      expect((await call(pageRoute, pageToken(c.job.noticeKey), from('203.0.113.7'))).status).toBe(200);
      // The address has used its 5 (forged links count too: the address is counted before the token is read).
      expect((await call(pageRoute, 'forged', from('203.0.113.7'))).status).toBe(429);
      expect((await call(pageRoute, pageToken(c.job.noticeKey), from('203.0.113.8'))).status).toBe(200);
    } finally {
      undo();
    }
  });
});
