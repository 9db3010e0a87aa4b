import { randomUUID } from 'node:crypto';
import { signRecipientToken } from '@/lib/recipient/link';
import { compactToken } from '@/testing/recipient';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * RFC 8058 one-click unsubscribe against the built server (`next start`), as a mailbox provider
 * sends it: a bare POST (no cookie, no authorization) of `List-Unsubscribe=One-Click` to the
 * https URI of the List-Unsubscribe header. The send-path half (the next courtesy notice is
 * suppressed `unsubscribed`, a required one still sent) is proven with the worker's handler and
 * the SMTP sink in app/api/recipient/unsubscribe/[token]/route.test.ts.
 */

const hours = (n: number) => new Date(Date.now() + n * 3_600_000).toISOString();

test.describe('one-click unsubscribe (RFC 8058)', () => {
  test('a raw RFC 8058 POST opts the recipient out (200, no redirect); a GET only shows the button; the producer API reads the opt-out', async ({
    baseURL,
    seed,
    sql,
  }) => {
    const email = `one-click-${randomUUID().slice(0, 8)}@example.com`;
    const auth = { authorization: `Bearer ${seed.producer.token}`, 'content-type': 'application/json' };
    const created = await fetch(`${baseURL}/api/v1/reminders`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        type: 'renewal_notice_t72',
        identity: { subscription_id: `sub_${randomUUID().slice(0, 8)}`, period_start: '2027-01-01' },
        recipient: { email, timeZone: 'Europe/Berlin' },
        dueAt: hours(2),
        deadlineAt: hours(26),
        anchorAt: hours(50),
        payload: { customer_name: 'Ana', plan_name: 'Pro', amount: '49.00', currency: 'EUR' },
        source: 'e2e-unsubscribe',
      }),
    });
    expect(created.status).toBe(201);
    const { noticeKey } = (await created.json()) as { noticeKey: string };
    // The compact token a courtesy mail's List-Unsubscribe carries now (34 characters).
    const token = compactToken(noticeKey, 'unsubscribe');
    expect(token).toMatch(/^0u[A-Za-z0-9_-]{32}$/);
    const uri = `${baseURL}/api/recipient/unsubscribe/${encodeURIComponent(token)}`;
    const preference = async () =>
      (await sql<{ state: string }>(`select state from recipient_preferences where recipient = $1 and category = 'courtesy' and channel = 'email'`, [email]))[0]
        ?.state ?? 'none';

    // A link scanner's GET: a page with the button, nothing changed, no cookie set.
    const page = await fetch(uri, { redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(await page.text()).toContain('name="List-Unsubscribe" value="One-Click"');
    expect(await preference()).toBe('none');

    // Exactly the RFC's request: POST, form-urlencoded, body List-Unsubscribe=One-Click, no context.
    const post = await fetch(uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
      redirect: 'manual',
    });
    expect(post.status).toBe(200);
    expect(post.headers.get('location')).toBeNull();
    expect(await post.text()).toContain('You are unsubscribed');
    expect(await preference()).toBe('opted_out');
    const [change] = await sql<{ source: string; actor: string }>(`select source, actor from recipient_preference_changes where recipient = $1`, [email]);
    expect(change).toEqual({ source: 'one_click', actor: noticeKey.slice(0, 32) });

    // Replayed by the provider: 200 again, one history row.
    expect(
      (await fetch(uri, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' })).status,
    ).toBe(200);
    expect(await sql(`select 1 from recipient_preference_changes where recipient = $1`, [email])).toHaveLength(1);

    const read = await fetch(`${baseURL}/api/v1/recipients/${encodeURIComponent(email)}/preferences`, { headers: auth });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({
      recipient: email,
      preferences: [
        { category: 'courtesy', state: 'opted_out', source: 'one_click' },
        { category: 'required', state: 'required' },
      ],
    });
  });

  test('a tampered or expired link (the old format and the compact one), or a POST without the RFC body, changes nothing', async ({ baseURL, sql }) => {
    const noticeKey = 'e'.repeat(64);
    const valid = signRecipientToken({
      secret: process.env.NOTICE_KEY_SECRET ?? '',
      noticeKey,
      purpose: 'unsubscribe',
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const expired = signRecipientToken({
      secret: process.env.NOTICE_KEY_SECRET ?? '',
      noticeKey,
      purpose: 'unsubscribe',
      expiresAt: new Date(Date.now() - 60_000),
    });
    const before = await sql<{ n: string }>('select count(*)::text as n from recipient_preference_changes');
    const rfc = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' };
    const tampered = `${valid.slice(0, -4)}AAAA`;
    expect((await fetch(`${baseURL}/api/recipient/unsubscribe/${encodeURIComponent(tampered)}`, rfc)).status).toBe(400);
    expect((await fetch(`${baseURL}/api/recipient/unsubscribe/${encodeURIComponent(expired)}`, rfc)).status).toBe(410);
    expect((await fetch(`${baseURL}/api/recipient/unsubscribe/${encodeURIComponent(valid)}`, { method: 'POST' })).status).toBe(415);
    // A compact one: tampered, for no notice.
    const compact = compactToken(noticeKey, 'unsubscribe');
    expect((await fetch(`${baseURL}/api/recipient/unsubscribe/${compact.slice(0, -4)}AAAA`, rfc)).status).toBe(400);
    expect((await fetch(`${baseURL}/api/recipient/unsubscribe/${compact}`, rfc)).status).toBe(404);
    expect(await sql<{ n: string }>('select count(*)::text as n from recipient_preference_changes')).toEqual(before);
  });

  test('PUT /api/v1/recipients/{email}/preferences: 200 idempotent, 422 for the required category, 400 for a bad email', async ({ baseURL, seed }) => {
    const auth = { authorization: `Bearer ${seed.producer.token}`, 'content-type': 'application/json' };
    const url = `${baseURL}/api/v1/recipients/${encodeURIComponent('put-spec@example.com')}/preferences`;
    const body = JSON.stringify({ preferences: [{ category: 'courtesy', channel: 'email', state: 'opted_out' }] });
    const first = await fetch(url, { method: 'PUT', headers: auth, body });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ changed: 1 });
    expect(await (await fetch(url, { method: 'PUT', headers: auth, body })).json()).toMatchObject({ changed: 0 });
    const required = await fetch(url, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ preferences: [{ category: 'required', channel: 'email', state: 'opted_out' }] }),
    });
    expect(required.status).toBe(422);
    expect(await required.json()).toMatchObject({ error: 'required_category' });
    expect((await fetch(`${baseURL}/api/v1/recipients/not-an-email/preferences`, { method: 'PUT', headers: auth, body })).status).toBe(400);
  });
});
