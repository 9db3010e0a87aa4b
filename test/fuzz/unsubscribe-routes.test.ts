import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '@/lib/auth/api-tokens';
import { signRecipientToken } from '@/lib/recipient/link';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { compactToken } from '@/testing/recipient';
import { fuzzParameters, hostileBodyText, hostileString, mutatedObject } from './arbitraries';
import { callHandler, expectSafe, FUZZ_SECRETS, patchEnv, snapshotTables } from './harness';

/**
 * The recipient's one-click unsubscribe link and the producer's preferences API under hostile
 * input: never a 5xx, no secret in the answer, and a refused request changes no row. A forged
 * token is refused before anything is read, so it does not even count against the rate limit;
 * a genuine one may (counters aside, as the issue allows), so those cases leave the counters out.
 */

const RUNS = 60;
type Route = (request: Request, context?: { params?: Promise<Record<string, string>> }) => Promise<Response>;
let t: TestDatabase;
let restoreEnv: () => void;
let apiToken = '';
let validLink = '';
let compactLink = '';
let secrets: string[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  restoreEnv = patchEnv({ DATABASE_URL: t.url, WEBHOOK_SECRET: FUZZ_SECRETS.WEBHOOK_SECRET });
  apiToken = (await createApiToken(t.db, { name: 'fuzz producer', createdBy: null, actor: 'fuzz' })).token;
  const job = await insertTestJob(t.db, { recipientEmail: 'fuzz-recipient@example.com' });
  validLink = signRecipientToken({
    secret: process.env.NOTICE_KEY_SECRET ?? '',
    noticeKey: job.noticeKey,
    purpose: 'unsubscribe',
    expiresAt: new Date(Date.now() + 86_400_000),
  });
  compactLink = compactToken(job.noticeKey, 'unsubscribe');
  secrets = [apiToken, process.env.NOTICE_KEY_SECRET ?? '', ...Object.values(FUZZ_SECRETS)];
});

afterAll(async () => {
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
  restoreEnv();
});

const withoutCounters = (snapshot: Record<string, string>) => {
  const { rate_limit_domains: _counters, ...rest } = snapshot;
  return rest;
};

const contentTypes = fc.constantFrom(
  undefined,
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'multipart/form-data',
  'application/json',
  'text/plain',
);

/** Tokens a scanner, a forger or a broken mail client might send. */
const hostileToken = fc.oneof(
  hostileString,
  fc.constant(''),
  fc.constant('v1..'),
  fc.constant('v1.%00.%00'),
  fc.string({ minLength: 0, maxLength: 20 }).map((tail) => `${validLink.slice(0, -10)}${tail}`),
  fc.string({ minLength: 1, maxLength: 4 }).map((extra) => `${validLink}${extra}`),
  fc.string({ minLength: 0, maxLength: 8 }).map((tail) => `${compactLink.slice(0, -8)}${tail}`),
  fc.string({ minLength: 1, maxLength: 2 }).map((extra) => `${compactLink}${extra}`),
  fc.nat().map((at) => {
    const index = at % compactLink.length;
    return `${compactLink.slice(0, index)}${compactLink[index] === 'A' ? 'B' : 'A'}${compactLink.slice(index + 1)}`;
  }),
  fc.constant('a'.repeat(5_000)),
);

describe('one-click unsubscribe under hostile input', () => {
  it('GET and POST with a hostile token: never a 5xx or a leak, no row changed (rate-limit counters included)', async () => {
    const { GET, POST } = (await import('@/app/api/recipient/unsubscribe/[token]/route')) as { GET: Route; POST: Route };
    await fc.assert(
      fc.asyncProperty(hostileToken, fc.boolean(), hostileBodyText, contentTypes, async (token, post, body, contentType) => {
        if (token === validLink || token === compactLink) return;
        const before = await snapshotTables(t.pool);
        const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
        const request = new Request('http://localhost/api/recipient/unsubscribe/x', post ? { method: 'POST', headers, body } : { method: 'GET' });
        const outcome = await callHandler((r) => (post ? POST : GET)(r, { params: Promise.resolve({ token }) }), request);
        expectSafe(outcome, { secrets, context: `${post ? 'POST' : 'GET'} ${token.slice(0, 80)}` });
        expect(outcome.status).toBeGreaterThanOrEqual(400);
        expect(await snapshotTables(t.pool)).toEqual(before);
      }),
      fuzzParameters(RUNS),
    );
  });

  it('POST with the genuine token and a hostile body: never a 5xx; anything but the RFC body changes no row', async () => {
    const { POST } = (await import('@/app/api/recipient/unsubscribe/[token]/route')) as { POST: Route };
    await fc.assert(
      fc.asyncProperty(hostileBodyText, contentTypes, async (body, contentType) => {
        const before = await snapshotTables(t.pool);
        const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
        const outcome = await callHandler(
          (r) => POST(r, { params: Promise.resolve({ token: validLink }) }),
          new Request('http://localhost/api/recipient/unsubscribe/x', { method: 'POST', headers, body }),
        );
        expectSafe(outcome, { secrets, context: `POST body ${body.slice(0, 80)}` });
        if (outcome.status >= 400) expect(withoutCounters(await snapshotTables(t.pool))).toEqual(withoutCounters(before));
      }),
      // The per-notice bucket (20 per 10 minutes) answers 429 after that: still a refusal that changes nothing.
      fuzzParameters(RUNS),
    );
  });
});

describe('PUT /api/v1/recipients/{email}/preferences under hostile input', () => {
  const valid = { preferences: [{ category: 'courtesy', channel: 'email', state: 'opted_out' }], reason: 'fuzz' };

  it('hostile bodies and emails: never a 5xx or a leak; a refused request changes no row', async () => {
    const { PUT, GET } = (await import('@/app/api/v1/recipients/[email]/preferences/route')) as { PUT: Route; GET: Route };
    const bodies = fc.oneof(
      { arbitrary: mutatedObject(valid).map((value) => JSON.stringify(value) ?? 'null'), weight: 3 },
      { arbitrary: hostileBodyText, weight: 1 },
    );
    const emails = fc.oneof(
      hostileString,
      fc.constant('ana@example.com'),
      fc.constant('ana%40example.com'),
      fc.constant('%E0%A4%A'),
      fc.constant('a\u0000@example.com'),
    );
    await fc.assert(
      fc.asyncProperty(bodies, emails, fc.boolean(), async (body, email, get) => {
        const before = await snapshotTables(t.pool);
        const request = new Request('http://localhost/api/v1/recipients/x/preferences', {
          method: get ? 'GET' : 'PUT',
          headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' },
          ...(get ? {} : { body }),
        });
        const outcome = await callHandler((r) => (get ? GET : PUT)(r, { params: Promise.resolve({ email }) }), request);
        expectSafe(outcome, { secrets, context: `${get ? 'GET' : 'PUT'} ${email.slice(0, 60)} ${body.slice(0, 120)}` });
        if (outcome.status >= 400) expect(await snapshotTables(t.pool)).toEqual(before);
      }),
      fuzzParameters(RUNS),
    );
  });
});
