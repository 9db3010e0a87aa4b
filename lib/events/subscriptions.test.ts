import { createPublicKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPreferenceChanges, preferenceFor } from '@/db/queries/preferences';
import { providerRoutes } from '@/lib/api/webhooks';
import type { ProviderContract } from '@/lib/http/contract';
import { providerRoute } from '@/lib/http/provider-route';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import {
  createTestSendgridSigner,
  createTestSnsSigner,
  insertClaimedNotice,
  keyWithCorrelation,
  readFixture,
  type TestSnsSigner,
} from '@/testing/provider-events';
import type { WebhookProvider } from '@/lib/api/fields';
import type { WebhookSettings } from './webhook';

/**
 * Provider unsubscribe events, from the providers' documented payloads (testing/fixtures/), write
 * the recipient's courtesy preference (source provider_event, actor the provider event id), and a
 * replay of the same event changes nothing.
 */

const topic = 'arn:aws:sns:us-east-1:123456789012:ses-events';
const sendgrid = createTestSendgridSigner();
let sns: TestSnsSigner;
let t: TestDatabase;
let settings: WebhookSettings;

beforeAll(async () => {
  t = await createTestDatabase();
  sns = createTestSnsSigner();
  settings = {
    webhookSecret: 'generic-webhook-secret-0123456789abcdef',
    postmarkUser: 'hook',
    postmarkPassword: 'pass-word',
    sendgridPublicKey: sendgrid.publicKeyBase64,
    snsTopicArns: [topic],
    snsKeyResolver: async () => createPublicKey(sns.certificatePem),
  };
});
afterAll(async () => {
  await t.drop();
});

function post(provider: WebhookProvider, body: string, headers: Record<string, string>) {
  const contract: ProviderContract | undefined = providerRoutes.find((candidate) => candidate.provider === provider);
  if (!contract) throw new Error(`no webhook route for ${provider}`);
  return providerRoute(contract, { settings: () => settings, db: () => t.db })(
    new Request(`http://console.test/api/webhooks/${provider}`, { method: 'POST', body, headers }),
  );
}

const postmarkHeaders = { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('hook:pass-word').toString('base64')}` };
const courtesy = (recipient: string) => preferenceFor(t.db, { recipient, category: 'courtesy', channel: 'email' });
const history = (recipient: string) => listPreferenceChanges(t.db, { recipient, channel: 'email' });
async function eventTypes(provider: string): Promise<string[]> {
  const rows = await t.pool.query<{ event_type: string; raw_type: string }>(
    `select event_type, raw_type from provider_events where provider = $1 order by id`,
    [provider],
  );
  return rows.rows.map((row) => `${row.raw_type}→${row.event_type}`);
}

describe('provider unsubscribe events write the preference', () => {
  it('SendGrid unsubscribe and group_unsubscribe opt out, group_resubscribe opts back in; a replayed batch changes nothing', async () => {
    const body = readFixture('sendgrid-subscription-events.json');
    const first = await post('sendgrid', body, sendgrid.sign(body, Math.floor(Date.now() / 1000)));
    expect(first.status).toBe(200);
    expect(await eventTypes('sendgrid')).toEqual(['unsubscribe→unsubscribe', 'group_unsubscribe→unsubscribe', 'group_resubscribe→resubscribe']);
    expect(await courtesy('alex@example.com')).toBe('opted_out');
    expect(await history('alex@example.com')).toMatchObject([
      { toState: 'opted_out', source: 'provider_event', actor: 'sendgrid:zz_BjPgU_5pS-J8vlfB1sg==', reason: 'sendgrid unsubscribe' },
    ]);
    expect(await courtesy('blair@example.com')).toBe('opted_in');
    expect((await history('blair@example.com')).map((row) => [row.fromState, row.toState, row.actor])).toEqual([
      ['opted_out', 'opted_in', 'sendgrid:w_u0vJhLT-OFfprar5N93g=='],
      [null, 'opted_out', 'sendgrid:ahSCB7xYcXFb-hEaawsPRw=='],
    ]);

    const replay = await post('sendgrid', body, sendgrid.sign(body, Math.floor(Date.now() / 1000)));
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ stored: 0, duplicates: 3 });
    expect(await history('alex@example.com')).toHaveLength(1);
    expect(await history('blair@example.com')).toHaveLength(2);
  });

  it('Postmark SubscriptionChange: SuppressSending true opts out, false opts back in, a bounce-driven change leaves preferences alone; replays are no-ops', async () => {
    const body = readFixture('postmark-subscription-change.json');
    expect((await post('postmark', body, postmarkHeaders)).status).toBe(200);
    expect(await courtesy('unsubscribed-address@example.com')).toBe('opted_out');
    const [change] = await history('unsubscribed-address@example.com');
    expect(change).toMatchObject({ source: 'provider_event', reason: 'postmark SubscriptionChange' });
    expect(change?.actor).toMatch(/^postmark:subscription_change:[0-9a-f]{32}$/);
    expect(await (await post('postmark', body, postmarkHeaders)).json()).toMatchObject({ duplicates: 1 });
    expect(await history('unsubscribed-address@example.com')).toHaveLength(1);

    const record = JSON.parse(body) as Record<string, unknown>;
    const reactivated = JSON.stringify({ ...record, SuppressSending: false, ChangedAt: '2020-02-02T10:00:00Z' });
    expect((await post('postmark', reactivated, postmarkHeaders)).status).toBe(200);
    expect(await courtesy('unsubscribed-address@example.com')).toBe('opted_in');

    const bounced = JSON.stringify({ ...record, Recipient: 'bounced-address@example.com', SuppressionReason: 'HardBounce' });
    expect((await post('postmark', bounced, postmarkHeaders)).status).toBe(200);
    expect(await history('bounced-address@example.com')).toEqual([]);
    // Support's own suppression in Postmark has no MessageID.
    const manual = JSON.stringify({ ...record, Recipient: 'support-suppressed@example.com', MessageID: null, Origin: 'Customer' });
    expect((await post('postmark', manual, postmarkHeaders)).status).toBe(200);
    expect(await courtesy('support-suppressed@example.com')).toBe('opted_out');
  });

  it('SES Subscription (event publishing) opts out every destination; the same event re-published by SNS is a no-op', async () => {
    const message = readFixture('ses-subscription.json');
    const envelope = (messageId: string) =>
      JSON.stringify(sns.sign({ Type: 'Notification', MessageId: messageId, TopicArn: topic, Message: message, Timestamp: new Date().toISOString() }));
    expect((await post('ses', envelope('sns-sub-1'), { 'content-type': 'text/plain' })).status).toBe(200);
    expect(await courtesy('subscriber@example.com')).toBe('opted_out');
    expect(await history('subscriber@example.com')).toMatchObject([
      {
        source: 'provider_event',
        actor: 'ses:EXAMPLEe4bccb684-777bc8de-afa7-4970-92b0-f515137b1497-000000:subscription:2022-01-12T01:00:17.910Z:subscriber@example.com',
      },
    ]);
    expect(await (await post('ses', envelope('sns-sub-2'), { 'content-type': 'text/plain' })).json()).toMatchObject({ duplicates: 1 });
    expect(await history('subscriber@example.com')).toHaveLength(1);
  });

  it('an unsubscribe linked to a required notice records the courtesy opt-out (a required notice cannot be opted out of)', async () => {
    const correlation = '5a5000000000000000000000000000e5';
    const noticeKey = keyWithCorrelation(correlation);
    await insertClaimedNotice(t.db, { noticeKey, email: 'required-reader@example.com' });
    await t.pool.query(`update reminder_jobs set category = 'required' where notice_key = $1`, [noticeKey]);
    const body = JSON.stringify([
      {
        email: 'required-reader@example.com',
        timestamp: Math.floor(Date.now() / 1000),
        event: 'unsubscribe',
        sg_event_id: 'req-unsub-1',
        notice_correlation: correlation,
      },
    ]);
    expect((await post('sendgrid', body, sendgrid.sign(body, Math.floor(Date.now() / 1000)))).status).toBe(200);
    const linked = await t.pool.query<{ notice_key: string | null }>(`select notice_key from provider_events where event_id = 'req-unsub-1'`);
    expect(linked.rows[0]?.notice_key).toBe(noticeKey);
    expect(await history('required-reader@example.com')).toMatchObject([{ category: 'courtesy', toState: 'opted_out' }]);
    expect(await preferenceFor(t.db, { recipient: 'required-reader@example.com', category: 'required', channel: 'email' })).toBe('required');
  });
});
