import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recipientRouteContracts } from '@/lib/api/routes';
import { createApiToken } from '@/lib/auth/api-tokens';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { compactToken, insertSentNotice, pageToken } from '@/testing/recipient';
import { loadRouteHandler } from '@/testing/route-handlers';
import { fuzzParameters, hostileBodyText, hostileHeaderValue, hostileQuery, hostileString, mutatedObject, plausibleString, poisoned } from './arbitraries';
import { callHandler, expectSafe, patchEnv, snapshotTables, storedOneTimeCodes } from './harness';

/**
 * The recipient-link routes (app/r/) and the producer's cancellation-request listing under
 * hostile input: any token (valid, forged, tampered, expired, another purpose, an unknown
 * notice; v1 and compact), any body in any content type, any X-Forwarded-For. Never a 5xx, no stack trace,
 * secret or one-time code in the answer, and a refused request (4xx) changes no table but the
 * rate-limit counters.
 */

const RUNS = 60;
let t: TestDatabase;
let restoreEnv: () => void;
let secrets: string[];
let tokens: string[];
let producerToken = '';

async function productTables(): Promise<Record<string, string>> {
  const { rate_limit_domains: _counters, ...rest } = await snapshotTables(t.pool);
  return rest;
}

beforeAll(async () => {
  t = await createTestDatabase();
  // High limits, so most cases reach the handler; one address header in a few is trusted.
  restoreEnv = patchEnv({
    DATABASE_URL: t.url,
    PUBLIC_BASE_URL: 'https://notices.test',
    TRUSTED_PROXY_HOPS: '1',
    RECIPIENT_LINK_LIMIT: '100000',
    RECIPIENT_ADDRESS_LIMIT: '100000',
  });
  const courtesy = await insertSentNotice(t.db, { code: 'FUZZCODE23', phone: '+4915100000001' });
  const required = await insertSentNotice(t.db, { type: 'auto_renewal_notice', code: 'FUZZCODE45' });
  const recovery = await insertSentNotice(t.db, { type: 'payment_recovery', code: 'FUZZCODE67' });
  const charged = await insertSentNotice(t.db, { anchorAt: new Date(Date.now() - 60_000) });
  const valid = [courtesy, required, recovery].flatMap((notice) => [pageToken(notice.job.noticeKey), compactToken(notice.job.noticeKey)]);
  tokens = [
    ...valid,
    pageToken(courtesy.job.noticeKey, { expiresAt: new Date(Date.now() - 60_000) }),
    pageToken(courtesy.job.noticeKey, { purpose: 'unsubscribe' }),
    pageToken('e'.repeat(64)),
    // Compact: past its notice's anchor, another purpose, no such notice.
    compactToken(charged.job.noticeKey),
    compactToken(courtesy.job.noticeKey, 'unsubscribe'),
    compactToken('e'.repeat(64)),
  ];
  producerToken = (await createApiToken(t.db, { name: 'fuzz producer', createdBy: null, actor: 'fuzz' })).token;
  secrets = [process.env.NOTICE_KEY_SECRET ?? '', producerToken, ...(await storedOneTimeCodes(t.pool))];
});

afterAll(async () => {
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
  restoreEnv();
});

const token = () =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...tokens), weight: 4 },
    { arbitrary: poisoned(fc.constantFrom(...tokens)), weight: 2 },
    // One character of a valid token changed: a tampered signature or body.
    {
      arbitrary: fc.tuple(fc.constantFrom(...tokens), fc.nat(), fc.constantFrom('A', 'z', '_', '.', '-')).map(([value, at, char]) => {
        const index = at % value.length;
        return value.slice(0, index) + char + value.slice(index + 1);
      }),
      weight: 2,
    },
    { arbitrary: hostileString, weight: 1 },
    { arbitrary: plausibleString, weight: 1 },
  );

const contentTypes = fc.constantFrom(
  'application/x-www-form-urlencoded',
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'multipart/form-data',
  '',
);

const formOf = (value: unknown): string => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return String(JSON.stringify(value));
  return new URLSearchParams(Object.entries(value).map(([key, item]) => [key, typeof item === 'string' ? item : (JSON.stringify(item) ?? '')])).toString();
};

describe('recipient-link routes under hostile input', () => {
  for (const contract of recipientRouteContracts) {
    it(`${contract.method} ${contract.path}: any token, body, content type and address → never a 5xx; a refusal changes nothing`, async () => {
      const handler = await loadRouteHandler(contract);
      const template = contract.path.endsWith('/preferences')
        ? { channel: 'email', state: 'opted_out' }
        : contract.path.endsWith('/cancel')
          ? { code: 'FUZZCODE45' }
          : { flash: 'code_wrong' };
      const bodies = fc.oneof(
        { arbitrary: mutatedObject(template).map((value) => ({ form: formOf(value), json: JSON.stringify(value) ?? 'null' })), weight: 3 },
        { arbitrary: fc.constant({ form: formOf(template), json: JSON.stringify(template) }), weight: 1 },
        { arbitrary: hostileBodyText.map((text) => ({ form: text, json: text })), weight: 1 },
      );
      const query = hostileQuery(['flash']);
      const address = fc.option(fc.oneof(hostileHeaderValue, fc.constantFrom('203.0.113.9', '2001:db8::1', '::ffff:198.51.100.2')), { freq: 2 });
      await fc.assert(
        fc.asyncProperty(token(), bodies, contentTypes, query, address, fc.boolean(), async (chosen, body, contentType, pairs, forwardedFor, json) => {
          const before = await productTables();
          const search = contract.method === 'GET' && pairs.length > 0 ? `?${new URLSearchParams(pairs).toString()}` : '';
          const headers: Record<string, string> = { accept: json ? 'application/json' : 'text/html' };
          if (contract.method !== 'GET' && contentType) headers['content-type'] = contentType;
          if (forwardedFor !== null) headers['x-forwarded-for'] = forwardedFor;
          let url: string;
          try {
            url = new URL(`https://notices.test/r/${encodeURIComponent(chosen)}${contract.path.slice('/r/{token}'.length)}${search}`).toString();
          } catch {
            return;
          }
          const outcome = await callHandler(
            (request) => handler(request, { params: Promise.resolve({ token: chosen }) }),
            new Request(url, {
              method: contract.method,
              headers,
              body: contract.method === 'GET' ? undefined : contentType.includes('json') ? body.json : body.form,
            }),
          );
          const context = `${contract.method} ${contract.path} token=${JSON.stringify(chosen).slice(0, 80)} ${contentType} ${body.form.slice(0, 120)} → ${outcome.status} ${outcome.text.slice(0, 200)}`;
          expectSafe(outcome, { secrets, context });
          expect([200, 303, 400, 403, 404, 410, 413, 422, 429], context).toContain(outcome.status);
          if (outcome.status >= 400) expect(await productTables(), context).toEqual(before);
          if (contract.method === 'GET') {
            // A page view of a required notice is evidence (issue 28: the customer's actions): at most
            // one appended entry, and nothing else written.
            const { evidence_entries: entriesAfter, evidence_unchained: _waitingAfter, ...after } = await productTables();
            const { evidence_entries: entriesBefore, evidence_unchained: _waitingBefore, ...rest } = before;
            expect(after, `${context}: a page view wrote`).toEqual(rest);
            const count = (sum: string | undefined) => Number((sum ?? '0:').split(':')[0]);
            expect(count(entriesAfter) - count(entriesBefore), `${context}: a page view appended more than one evidence entry`).toBeLessThanOrEqual(1);
          }
          const location = outcome.headers.get('location');
          if (location) expect(location.startsWith('https://notices.test/r/'), `${context}: redirected to ${location}`).toBe(true);
        }),
        fuzzParameters(RUNS),
      );
    });
  }

  it('GET /api/v1/cancellation-requests: hostile queries → never a 5xx, and nothing written (a read)', async () => {
    const handler = await loadRouteHandler({ method: 'GET', path: '/api/v1/cancellation-requests' });
    await fc.assert(
      fc.asyncProperty(hostileQuery(['since', 'cursor', 'limit']), async (pairs) => {
        const before = await snapshotTables(t.pool);
        const request = new Request(`https://notices.test/api/v1/cancellation-requests?${new URLSearchParams(pairs).toString()}`, {
          headers: { authorization: `Bearer ${producerToken}` },
        });
        const outcome = await callHandler((r) => handler(r, { params: undefined }), request);
        const context = `${JSON.stringify(pairs).slice(0, 200)} → ${outcome.status} ${outcome.text.slice(0, 200)}`;
        expectSafe(outcome, { secrets, context });
        if (outcome.status >= 400) expect(await snapshotTables(t.pool), context).toEqual(before);
        else {
          // A 2xx only stamps the token's last use.
          const { api_tokens: _tokens, ...rest } = await snapshotTables(t.pool);
          const { api_tokens: _before, ...restBefore } = before;
          expect(rest, context).toEqual(restBefore);
        }
      }),
      fuzzParameters(RUNS),
    );
  });
});
