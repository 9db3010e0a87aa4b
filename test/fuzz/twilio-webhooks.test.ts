import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { twilioInboundWebhook, twilioWebhook } from '@/lib/api/webhooks';
import type { WebhookSettings } from '@/lib/events/webhook';
import { providerRoute } from '@/lib/http/provider-route';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertClaimedNotice, keyWithCorrelation } from '@/testing/provider-events';
import { twilioSignature } from '@/testing/twilio-peer';
import { fuzzParameters, hostileBodyText, hostileHeaderValue, hostileString } from './arbitraries';
import { callHandler, expectSafe, snapshotTables, storedOneTimeCodes } from './harness';

/**
 * The Twilio routes with hostile input, through their handlers with real Requests: unsigned or
 * wrongly signed requests are refused (4xx) and change nothing; validly signed hostile parameters
 * (Twilio signs whatever it sends, and a new field may appear any day) never 5xx and, when
 * refused, change nothing; no secret or one-time code in any answer.
 */
const RUNS = 60;
const authToken = 'fuzz-twilio-auth-token-0123456789abcdef';
const publicBaseUrl = 'https://notices.example.com';
const correlation = 'fedcba9876543210fedcba9876543210';
let t: TestDatabase;
let secrets: string[];
let settings: WebhookSettings;

beforeAll(async () => {
  t = await createTestDatabase();
  settings = { snsTopicArns: [], snsKeyResolver: async () => Promise.reject(new Error('no SNS')), twilioAuthToken: authToken, publicBaseUrl };
  await insertClaimedNotice(t.db, { noticeKey: keyWithCorrelation(correlation), email: 'customer0@example.com' });
  await t.pool.query(`update notice_ledger set one_time_code = 'OTC-fuzz-twilio-1234'`);
  secrets = [authToken, process.env.NOTICE_KEY_SECRET ?? '', ...(await storedOneTimeCodes(t.pool))];
});
afterAll(async () => t.drop());

const routes = {
  status: { path: '/api/webhooks/twilio', handler: () => providerRoute(twilioWebhook, { settings: () => settings, db: () => t.db }) },
  inbound: { path: '/api/webhooks/twilio/inbound', handler: () => providerRoute(twilioInboundWebhook, { settings: () => settings, db: () => t.db }) },
} as const;

const fieldNames = fc.oneof(
  fc.constantFrom('MessageSid', 'MessageStatus', 'ErrorCode', 'AccountSid', 'From', 'To', 'Body', 'OptOutType', 'SmsSid', 'MessagingServiceSid'),
  hostileString,
);
const hostileParams = fc.dictionary(fieldNames, hostileString, { maxKeys: 12 });
/** A real callback's shape with some values replaced, or none of it. */
const paramsAround = fc.oneof(
  hostileParams,
  fc
    .record({
      MessageSid: fc.oneof(fc.constant(`SM${'a'.repeat(32)}`), hostileString),
      MessageStatus: fc.oneof(fc.constantFrom('queued', 'sent', 'delivered', 'undelivered', 'failed', 'read', 'receiving'), hostileString),
      Body: fc.oneof(fc.constantFrom('STOP', 'start', ' quit '), hostileString),
      From: fc.oneof(fc.constant('+14155550100'), hostileString),
    })
    .chain((base) => hostileParams.map((extra) => ({ ...extra, ...base }))),
);
const query = fc.oneof(
  fc.constant(''),
  fc.constant(`?c=${correlation}`),
  hostileString.map((text) => `?${new URLSearchParams({ c: text }).toString()}`),
);

function formOf(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}

describe.each(Object.entries(routes))('twilio %s route under hostile input', (name, route) => {
  it('unsigned or wrongly signed: refused 4xx, nothing changes', async () => {
    const handler = route.handler();
    await fc.assert(
      fc.asyncProperty(
        paramsAround,
        query,
        fc.oneof(hostileHeaderValue, fc.constant('')),
        hostileBodyText,
        fc.boolean(),
        async (params, q, signature, raw, useRaw) => {
          const before = await snapshotTables(t.pool);
          const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
          if (signature) headers['x-twilio-signature'] = signature;
          const outcome = await callHandler(
            handler,
            new Request(`http://10.0.0.7:3000${route.path}${q}`, { method: 'POST', headers, body: useRaw ? raw : formOf(params) }),
          );
          const context = `${name} unsigned ${JSON.stringify(params).slice(0, 200)}`;
          expectSafe(outcome, { secrets, context });
          expect(outcome.status, context).toBeGreaterThanOrEqual(400);
          expect(outcome.status, context).toBeLessThan(500);
          expect(await snapshotTables(t.pool), context).toEqual(before);
        },
      ),
      fuzzParameters(RUNS),
    );
  });

  it('validly signed hostile parameters: never 5xx; a refusal changes nothing', async () => {
    const handler = route.handler();
    await fc.assert(
      fc.asyncProperty(paramsAround, query, async (params, q) => {
        const before = await snapshotTables(t.pool);
        // What the parser will read: the last of repeated names, as URLSearchParams gives them.
        const sent = Object.fromEntries(new URLSearchParams(formOf(params)));
        const signature = twilioSignature(authToken, new URL(`${route.path}${q}`, publicBaseUrl).href, sent);
        const outcome = await callHandler(
          handler,
          new Request(`http://10.0.0.7:3000${route.path}${q}`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
            body: formOf(params),
          }),
        );
        const context = `${name} signed ${JSON.stringify(params).slice(0, 200)} ${q.slice(0, 80)}`;
        expectSafe(outcome, { secrets, context });
        expect(outcome.status, context).toBeLessThan(500);
        if (outcome.status >= 400) expect(await snapshotTables(t.pool), context).toEqual(before);
      }),
      fuzzParameters(RUNS),
    );
  });
});
