import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { signGenericRequest } from '@/lib/events/generic-signature';
import { createSnsKeyResolver } from '@/lib/events/sns';
import { createTestSendgridSigner, createTestSnsSigner, insertClaimedNotice, keyWithCorrelation, readFixture } from '@/testing/provider-events';
import { skipReasons } from '@/lib/api/webhooks';
import { storableEvent, type NormalizedEvent } from '@/lib/events/types';
import { sesWebhook } from '@/lib/api/webhooks';
import type { WebhookSettings } from '@/lib/events/webhook';
import { providerRoute } from '@/lib/http/provider-route';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { fuzzParameters, hostileBodyText, hostileHeaderValue, hostileJson, hostileString, mutatedObject, poisoned } from './arbitraries';
import { callHandler, expectSafe, FUZZ_SECRETS, patchEnv, snapshotTables, storedOneTimeCodes, type Outcome } from './harness';

/**
 * Provider webhooks, through their route handlers with real Requests. Unauthenticated
 * hostile requests must be refused (4xx) and change nothing; authenticated ones with hostile
 * bodies must never 5xx (a provider retries a 5xx for days) and, when refused, change nothing.
 * An authentic SendGrid batch is accepted event by event: its malformed events are skipped
 * (named by index and id in a 200) and change nothing, its valid ones are stored.
 */

const RUNS = 60;
const correlation = '0123456789abcdef0123456789abcdef';
const topicArn = 'arn:aws:sns:us-east-1:123456789012:ses-events';
const sendgrid = createTestSendgridSigner();
const postmarkAuthorization = `Basic ${Buffer.from(`hook:${FUZZ_SECRETS.POSTMARK_WEBHOOK_PASSWORD}`).toString('base64')}`;
let t: TestDatabase;
let restoreEnv: () => void;
let secrets: string[];

beforeAll(async () => {
  t = await createTestDatabase();
  restoreEnv = patchEnv({
    DATABASE_URL: t.url,
    WEBHOOK_SECRET: FUZZ_SECRETS.WEBHOOK_SECRET,
    POSTMARK_WEBHOOK_USER: 'hook',
    POSTMARK_WEBHOOK_PASSWORD: FUZZ_SECRETS.POSTMARK_WEBHOOK_PASSWORD,
    SENDGRID_WEBHOOK_PUBLIC_KEY: sendgrid.publicKeyBase64,
    SNS_TOPIC_ARNS: topicArn,
  });
  await insertClaimedNotice(t.db, { noticeKey: keyWithCorrelation(correlation), email: 'customer0@example.com' });
  await t.pool.query(`update notice_ledger set one_time_code = 'OTC-fuzz-webhook-1234'`);
  secrets = [process.env.NOTICE_KEY_SECRET ?? '', ...Object.values(FUZZ_SECRETS), ...(await storedOneTimeCodes(t.pool))];
});

afterAll(async () => {
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
  restoreEnv();
});

type Route = (request: Request) => Promise<Response>;
const routes: Record<'generic' | 'postmark' | 'sendgrid' | 'ses', () => Promise<Route>> = {
  generic: async () => (await import('@/app/api/webhooks/generic/route')).POST,
  postmark: async () => (await import('@/app/api/webhooks/postmark/route')).POST,
  sendgrid: async () => (await import('@/app/api/webhooks/sendgrid/route')).POST,
  ses: async () => (await import('@/app/api/webhooks/ses/route')).POST,
};

const genericTemplate = (): Record<string, unknown> => ({
  id: 'evt-fuzz-1',
  type: 'delivered',
  correlation,
  messageId: `<${correlation}@notices.localhost>`,
  providerMessageId: 'pm-fuzz-1',
  recipient: 'customer0@example.com',
  occurredAt: new Date().toISOString(),
  bounceType: null,
});

const firstOf = (fixture: string): Record<string, unknown> => {
  const parsed = JSON.parse(readFixture(fixture)) as unknown;
  return (Array.isArray(parsed) ? parsed[0] : parsed) as Record<string, unknown>;
};

/** Hostile bodies built around a provider's real payload shape, plus plain garbage. */
const bodiesAround = (template: Record<string, unknown>, wrap: (event: unknown) => unknown): fc.Arbitrary<string> =>
  fc.oneof({ arbitrary: mutatedObject(template).map((event) => JSON.stringify(wrap(event)) ?? 'null'), weight: 4 }, { arbitrary: hostileBodyText, weight: 1 });

const genericBodies = bodiesAround(genericTemplate(), (event) => ({ events: [event] }));
const postmarkBodies = bodiesAround(firstOf('postmark-bounce.json'), (event) => event);
const sendgridBodies = bodiesAround(firstOf('sendgrid-events.json'), (event) => [event]);
const sesEvents = mutatedObject(firstOf('ses-bounce.json'));

async function post(route: Route, { body, headers }: { body: string; headers: Record<string, string> }): Promise<Outcome> {
  return callHandler(route, new Request('http://console.test/api/webhooks/x', { method: 'POST', body, headers }));
}

const acceptedSummary = z.object({
  received: z.number().int().nonnegative(),
  stored: z.number().int().nonnegative(),
  duplicates: z.number().int().nonnegative(),
  skippedCount: z.number().int().nonnegative(),
  skipped: z.array(z.strictObject({ index: z.number().int().nonnegative(), eventId: z.string().nullable(), reason: z.enum(skipReasons), detail: z.string() })),
});

/** A skipped event is named by its index, a provider id of the documented shape, and a rule — nothing it carried. */
function expectSkippedNamedByIdOnly(skipped: z.infer<typeof acceptedSummary>['skipped'], context: string): void {
  for (const event of skipped) {
    if (event.eventId !== null) expect(event.eventId, context).toMatch(/^[A-Za-z0-9+/=_-]{1,100}$/);
    expect(event.detail, context).toMatch(/^(event is not a JSON object|(sg_event_id|email|timestamp|event|sg_message_id|type|notice_correlation): [^"]*)$/);
  }
}

function expectRefusedWithoutChange(outcome: Outcome, before: Record<string, string>, after: Record<string, string>, context: string): void {
  expect(outcome.status, `${context}: ${outcome.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
  expect(after, context).toEqual(before);
}

const forgedHeaders = fc.record(
  {
    authorization: hostileHeaderValue,
    'x-notice-timestamp': fc.oneof(hostileHeaderValue, fc.constant(String(Math.floor(Date.now() / 1000)))),
    'x-notice-signature': fc.oneof(hostileHeaderValue, fc.constant('v1=' + 'ab'.repeat(32))),
    'x-twilio-email-event-webhook-timestamp': hostileHeaderValue,
    'x-twilio-email-event-webhook-signature': hostileHeaderValue,
    'content-length': fc.constantFrom('0', '-1', '99999999999', 'abc'),
  },
  { requiredKeys: [] },
);

describe('webhooks refuse unauthenticated hostile requests and change nothing', () => {
  for (const provider of ['generic', 'postmark', 'sendgrid', 'ses'] as const) {
    it(`${provider}: forged or missing credentials → 4xx, no row`, async () => {
      const route = await routes[provider]();
      const bodies =
        provider === 'ses'
          ? fc.oneof(
              hostileBodyText,
              sesEvents.map((event) =>
                JSON.stringify({
                  Type: 'Notification',
                  MessageId: 'm',
                  TopicArn: topicArn,
                  Message: JSON.stringify(event),
                  Timestamp: new Date().toISOString(),
                  SignatureVersion: '2',
                  Signature: 'AAAA',
                  SigningCertURL: 'https://sns.us-east-1.amazonaws.com.evil.test/c.pem',
                }),
              ),
            )
          : genericBodies;
      await fc.assert(
        fc.asyncProperty(bodies, forgedHeaders, async (body, headers) => {
          const before = await snapshotTables(t.pool);
          const outcome = await post(route, { body, headers });
          const context = `${provider} ${body.slice(0, 200)}`;
          expectSafe(outcome, { secrets, context });
          expectRefusedWithoutChange(outcome, before, await snapshotTables(t.pool), context);
        }),
        fuzzParameters(RUNS / 2),
      );
    });
  }
});

describe('authenticated webhooks with hostile bodies never 5xx; a refused one changes nothing', () => {
  const regression = (event: Record<string, unknown>) => JSON.stringify({ events: [{ ...genericTemplate(), ...event }] });
  const cases = [
    {
      provider: 'generic' as const,
      examples: [regression({ id: 'evt-\u0000' }), regression({ id: 'evt-lone', recipient: 'a\uD800@example.com', providerMessageId: '\uDC00' })],
      bodies: genericBodies,
      sign: (body: string) => signGenericRequest({ secret: FUZZ_SECRETS.WEBHOOK_SECRET, body }),
    },
    {
      provider: 'postmark' as const,
      examples: undefined,
      bodies: postmarkBodies,
      sign: (): Record<string, string> => ({ authorization: postmarkAuthorization, 'content-type': 'application/json' }),
    },
    { provider: 'sendgrid' as const, examples: undefined, bodies: sendgridBodies, sign: (body: string) => sendgrid.sign(body, Math.floor(Date.now() / 1000)) },
  ];
  for (const { provider, bodies, sign, examples } of cases) {
    it(`${provider}: signed hostile bodies`, async () => {
      const route = await routes[provider]();
      await fc.assert(
        fc.asyncProperty(bodies, async (body) => {
          const before = await snapshotTables(t.pool);
          const outcome = await post(route, { body, headers: sign(body) });
          const context = `${provider} ${body.slice(0, 300)}`;
          expectSafe(outcome, { secrets, context });
          if (outcome.status >= 400) {
            expect(await snapshotTables(t.pool), context).toEqual(before);
            return;
          }
          // Accepted: every event is accounted for, and one skipped or already stored changes nothing.
          const summary = acceptedSummary.parse(JSON.parse(outcome.text));
          expect(summary.stored + summary.duplicates + summary.skippedCount, context).toBe(summary.received);
          expectSkippedNamedByIdOnly(summary.skipped, context);
          if (summary.stored === 0) expect(await snapshotTables(t.pool), context).toEqual(before);
        }),
        { ...fuzzParameters(RUNS), examples: (examples ?? []).map((body): [string] => [body]) },
      );
    });
  }

  it('sendgrid: valid events interleaved with hostile ones are all stored; only hostile positions are skipped', async () => {
    const route = await routes.sendgrid();
    const valid = firstOf('sendgrid-events.json');
    const hostile = mutatedObject(valid);
    const batches = fc.array(
      fc.oneof(
        fc.uuid().map((id) => ({ kind: 'valid' as const, event: { ...valid, sg_event_id: id } })),
        hostile.map((event) => ({ kind: 'hostile' as const, event })),
      ),
      { minLength: 1, maxLength: 8 },
    );
    await fc.assert(
      fc.asyncProperty(batches, async (batch) => {
        const body = JSON.stringify(batch.map((item) => item.event));
        const outcome = await post(route, { body, headers: sendgrid.sign(body, Math.floor(Date.now() / 1000)) });
        const context = `sendgrid ${body.slice(0, 300)}`;
        expectSafe(outcome, { secrets, context });
        expect(outcome.status, context).toBe(200);
        const summary = acceptedSummary.parse(JSON.parse(outcome.text));
        expect(summary.received, context).toBe(batch.length);
        expectSkippedNamedByIdOnly(summary.skipped, context);
        const validAt = batch.flatMap((item, index) => (item.kind === 'valid' ? [index] : []));
        for (const skipped of summary.skipped) expect(validAt, context).not.toContain(skipped.index);
        const validIds = batch.flatMap((item) => (item.kind === 'valid' ? [item.event.sg_event_id] : []));
        const stored = await t.pool.query<{ event_id: string }>(
          `select event_id from provider_events where provider = 'sendgrid' and event_id = any($1::text[])`,
          [validIds],
        );
        expect(new Set(stored.rows.map((row) => row.event_id)), context).toEqual(new Set(validIds));
      }),
      fuzzParameters(RUNS / 2),
    );
  });

  it('ses: SNS-signed envelopes around hostile SES events', async () => {
    const signer = createTestSnsSigner();
    const settings: WebhookSettings = {
      snsTopicArns: [topicArn],
      snsKeyResolver: createSnsKeyResolver({ fetcher: async () => signer.certificatePem }),
      confirmSubscription: async () => undefined,
    };
    const { getDb } = await import('@/lib/process-db');
    await fc.assert(
      fc.asyncProperty(sesEvents, fc.uuid(), async (event, messageId) => {
        const envelope = signer.sign({
          Type: 'Notification',
          MessageId: messageId,
          TopicArn: topicArn,
          Message: JSON.stringify(event) ?? 'null',
          Timestamp: new Date().toISOString(),
        });
        const body = JSON.stringify(envelope);
        const before = await snapshotTables(t.pool);
        let outcome: Outcome;
        try {
          const response = await providerRoute(sesWebhook, { settings: () => settings, db: getDb })(
            new Request('http://console.test/api/webhooks/ses', { method: 'POST', body }),
          );
          outcome = { status: response.status, text: await response.text(), headers: response.headers };
        } catch (error) {
          throw new Error(`the SES route threw (a 500 in Next): ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`);
        }
        const context = `ses ${JSON.stringify(event).slice(0, 300)}`;
        expectSafe(outcome, { secrets, context });
        if (outcome.status >= 400) expect(await snapshotTables(t.pool), context).toEqual(before);
      }),
      fuzzParameters(RUNS),
    );
  });
});

describe('SNS subscription confirmations with hostile SubscribeURLs', () => {
  it('confirms only https SNS hosts (no SSRF to anything else), never 5xx, stores nothing', async () => {
    const signer = createTestSnsSigner();
    const confirmed: string[] = [];
    const settings: WebhookSettings = {
      snsTopicArns: [topicArn],
      snsKeyResolver: createSnsKeyResolver({ fetcher: async () => signer.certificatePem }),
      confirmSubscription: async (url) => {
        confirmed.push(url);
      },
    };
    const { getDb } = await import('@/lib/process-db');
    const urls = fc.oneof(
      hostileString,
      poisoned(fc.constant('https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=x')),
      fc.constantFrom(
        'https://sns.us-east-1.amazonaws.com.evil.test/confirm',
        'https://evil.test/sns.us-east-1.amazonaws.com',
        'https://user:pass@sns.us-east-1.amazonaws.com/',
        'https://sns.us-east-1.amazonaws.com:8443/',
        'http://sns.us-east-1.amazonaws.com/',
        'http://169.254.169.254/latest/meta-data/',
        'https://127.0.0.1/',
        'file:///etc/passwd',
        'https://sns.us-east-1.amazonaws.com@evil.test/',
        'https://sns.us-east-1.amazonaws.com\\@evil.test/',
        'https://SNS.US-EAST-1.AMAZONAWS.COM/?Action=ConfirmSubscription',
        'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=x',
      ),
    );
    await fc.assert(
      fc.asyncProperty(urls, fc.uuid(), async (subscribeUrl, messageId) => {
        const envelope = signer.sign({
          Type: 'SubscriptionConfirmation',
          MessageId: messageId,
          TopicArn: topicArn,
          Message: 'You have chosen to subscribe',
          Timestamp: new Date().toISOString(),
          SubscribeURL: subscribeUrl,
          Token: 'token',
        });
        const before = await snapshotTables(t.pool);
        const response = await providerRoute(sesWebhook, { settings: () => settings, db: getDb })(
          new Request('http://console.test/api/webhooks/ses', { method: 'POST', body: JSON.stringify(envelope) }),
        );
        const outcome: Outcome = { status: response.status, text: await response.text(), headers: response.headers };
        expectSafe(outcome, { secrets, context: `SubscribeURL ${JSON.stringify(subscribeUrl).slice(0, 120)}` });
        expect(await snapshotTables(t.pool)).toEqual(before);
        for (const url of confirmed) {
          const parsed = new URL(url);
          expect(parsed.protocol, url).toBe('https:');
          expect(parsed.hostname, url).toMatch(/^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/);
          expect(parsed.username + parsed.password, url).toBe('');
        }
      }),
      fuzzParameters(RUNS / 2),
    );
  });
});

describe('storableEvent (the storage boundary every provider goes through)', () => {
  const unstorable = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  const strings = (value: unknown): string[] => {
    if (typeof value === 'string') return [value];
    if (Array.isArray(value)) return value.flatMap(strings);
    if (value !== null && typeof value === 'object' && !(value instanceof Date))
      return Object.entries(value).flatMap(([key, inner]) => [key, ...strings(inner)]);
    return [];
  };
  it('leaves nothing PostgreSQL refuses, and leaves clean events unchanged', () => {
    fc.assert(
      fc.property(hostileString, hostileString, hostileJson, (eventId, recipient, details) => {
        const event: NormalizedEvent = {
          provider: 'generic',
          eventId,
          type: 'delivered',
          rawType: 'delivered',
          correlationId: null,
          messageId: null,
          providerMessageId: null,
          recipient,
          bounceType: null,
          occurredAt: new Date(0),
          details: { details },
        };
        const stored = storableEvent(event);
        expect(strings(stored).some((text) => unstorable.test(text))).toBe(false);
        expect(stored.occurredAt).toBe(event.occurredAt);
        if (!strings(event).some((text) => unstorable.test(text))) expect(stored).toEqual(event);
      }),
      fuzzParameters(300),
    );
  });
});
