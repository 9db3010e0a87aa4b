import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiToken } from '@/lib/auth/api-tokens';
import { createConsoleUser } from '@/lib/console/users';
import { ensureProductionBuild } from '@/scripts/production-build';
import { startConsoleServer, type ConsoleServer } from '@/testing/console-server';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { startOtlpCollector, type OtlpCollector } from '@/testing/otlp-collector';
import { insertSentNotice, pageToken } from '@/testing/recipient';

/**
 * The console as users run it (`next start` over the production build) with
 * OTEL_EXPORTER_OTLP_ENDPOINT set exports the producer's request span. Next builds
 * instrumentation.ts and each route apart, so module state set at start-up is not seen by the
 * routes; this caught only Next's own spans before the installed flag moved to globalThis.
 * Next's own request span records the raw URL (`http.target`): the second test searches every
 * exported byte for the recipient token, email and phone it put in URLs.
 */

let t: TestDatabase;
let collector: OtlpCollector;
let server: ConsoleServer;

beforeAll(async () => {
  await ensureProductionBuild({ root: path.resolve(import.meta.dirname, '..'), log: (line) => console.log(`console-otlp: ${line}`) });
  t = await createTestDatabase();
  collector = await startOtlpCollector();
  server = await startConsoleServer({
    env: {
      DATABASE_URL: t.url,
      NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '',
      NEXTAUTH_SECRET: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    },
  });
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await collector?.close();
  await t?.drop();
});

describe('OTLP/HTTP export from the console under next start', () => {
  it('exports producer.request → notice.schedule for a reminder, with the console service name and the job id', async () => {
    const { token } = await createApiToken(t.db, { name: 'otlp producer', createdBy: null, actor: 'test' });
    const now = Date.now();
    const response = await fetch(`${server.url}/api/v1/reminders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'payment_recovery',
        identity: { account_id: 'acct_otlp', reconciliation_id: 'rec_otlp', exception_id: 'exc_otlp' },
        recipient: { email: 'otlp@example.com', timeZone: 'UTC' },
        dueAt: new Date(now + 3_600_000).toISOString(),
        deadlineAt: new Date(now + 86_400_000).toISOString(),
        payload: { customer_name: 'Ada', amount: '12.00', currency: 'EUR', reference: 'otlp-ref' },
        source: 'otlp-test',
      }),
    });
    expect(response.status, server.logTail()).toBe(201);
    const { id: jobId } = (await response.json()) as { id: string };
    // The batch processor exports every 5 s.
    await vi.waitFor(
      () => {
        const names = collector.spans().map((span) => span.name);
        expect(names).toEqual(expect.arrayContaining(['producer.request', 'notice.schedule']));
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(collector.serviceNames()).toContain('notice-ledger-console');
    const scheduled = collector.spans().find((span) => span.name === 'notice.schedule');
    expect(scheduled?.attributes?.find((a) => a.key === 'notice.job_id')?.value.stringValue).toBe(jobId);
    // Never the recipient or a payload value.
    const exported = collector.received.map((request) => request.body).join('\n');
    for (const value of ['otlp@example.com', 'otlp-ref', 'Ada']) expect(exported).not.toContain(value);
  });
});

/** Signs in through next-auth's own endpoints (CSRF cookie and token, credentials callback): the session cookie. */
async function signIn(baseUrl: string, { email, password }: { email: string; password: string }): Promise<string> {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const cookies = csrf.headers.getSetCookie().map((cookie) => cookie.split(';')[0]);
  const response = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies.join('; '), origin: baseUrl },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl: `${baseUrl}/`, json: 'true' }).toString(),
  });
  const session = response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0] ?? '')
    .find((cookie) => cookie.startsWith('next-auth.session-token='));
  if (!session) throw new Error(`sign-in answered ${response.status} without a session cookie`);
  return session;
}

describe('no recipient token, email or phone in an exported span', () => {
  it("scrubs the paths under /r/ and /api/recipient/, the producer's recipient path and every query value, Next's own spans included", async () => {
    const email = 'ada.scrub@example.com';
    const phone = '+4915112345678';
    const password = randomBytes(18).toString('base64url');
    const created = await createConsoleUser(t.db, {
      actor: 'test',
      actorId: null,
      email: 'support.otlp@example.com',
      name: 'Support',
      role: 'support',
      password,
      reason: 'otlp test',
    });
    expect(created.ok).toBe(true);
    const notice = await insertSentNotice(t.db, { phone });
    const token = pageToken(notice.job.noticeKey);
    const unsubscribeToken = pageToken(notice.job.noticeKey, { purpose: 'unsubscribe' });
    const { token: producerToken } = await createApiToken(t.db, { name: 'otlp scrub', createdBy: null, actor: 'test' });

    const page = await fetch(`${server.url}/r/${token}`);
    expect(page.status, server.logTail()).toBe(200);
    expect((await fetch(`${server.url}/api/recipient/unsubscribe/${unsubscribeToken}`)).status).toBe(200);
    const preferences = await fetch(`${server.url}/api/v1/recipients/${encodeURIComponent(email)}/preferences`, {
      headers: { authorization: `Bearer ${producerToken}` },
    });
    expect(preferences.status, server.logTail()).toBe(200);
    const cookie = await signIn(server.url, { email: 'support.otlp@example.com', password });
    for (const q of [email, phone]) {
      expect((await fetch(`${server.url}/lookup?q=${encodeURIComponent(q)}`, { headers: { cookie } })).status).toBe(200);
      expect((await fetch(`${server.url}/api/console/lookup?q=${encodeURIComponent(q)}`, { headers: { cookie } })).status).toBe(200);
    }

    // Control: Next's request spans still arrive, named by their route.
    await vi.waitFor(
      () => {
        const names = collector.spans().map((span) => span.name);
        expect(names).toEqual(expect.arrayContaining(['GET /r/[token]', 'GET /api/recipient/unsubscribe/[token]', 'GET /lookup', 'GET /api/console/lookup']));
      },
      { timeout: 20_000, interval: 200 },
    );
    await vi.waitFor(() => expect(collector.spans().map((span) => span.name)).toContain('producer.request'), { timeout: 20_000, interval: 200 });
    const targets = collector
      .spans()
      .flatMap((span) => span.attributes ?? [])
      .filter((attribute) => attribute.key === 'http.target')
      .map((attribute) => attribute.value.stringValue);
    expect(targets).toContain('/r/[redacted]');
    expect(targets).toContain('/lookup?q=[redacted]');

    const exported = collector.received.map((request) => request.body).join('\n');
    const phoneDigits = phone.slice(1);
    for (const secret of [token, unsubscribeToken, email, encodeURIComponent(email), phoneDigits, notice.job.noticeKey]) {
      expect(exported, `exported spans carry ${secret.slice(0, 12)}…`).not.toContain(secret);
    }
  });
});
