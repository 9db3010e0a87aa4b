import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '@/db/client';
import { findRecipientNotice } from '@/db/queries/recipient-notice';
import { eventRequest } from '@/lib/api/producer';
import { ingestEvents } from '@/lib/events/ingest';
import { correlationOf } from '@/lib/ledger/notice-key';
import { resolveQuarantine } from '@/lib/console/quarantine';
import { processProducerSettings } from '@/lib/planning/producer-settings';
import { receiveEvent } from '@/lib/planning/receive-event';
import { closeWakeupPublisher } from '@/lib/queue';
import { changeCourtesyPreference, requestCancellation } from '@/lib/recipient/actions';
import { defaultLinkKeyRing } from '@/lib/recipient/link-keys';
import { unsubscribeByLink } from '@/lib/recipient/one-click';
import { createRecipientThrottle } from '@/lib/recipient/throttle';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createWebhookEndpoint } from './endpoints';
import { webhookEventTypes } from './events';
import { refreshWebhookSubscriptions } from './subscriptions';
import { parseAllowList } from './url';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertClaimedNotice, keyWithCorrelation } from '@/testing/provider-events';
import { compactToken, insertSentNotice } from '@/testing/recipient';

/**
 * The four events written outside the send path — cancellation.requested (the recipient page),
 * preference.changed (one-click unsubscribe, opting back in), compliance_gap.opened (an event's
 * required notice that could not be planned) and notice.resolved (an operator resolving a
 * quarantined claim) — each once, in the transaction of the change it reports: when that
 * transaction rolls back after the change, neither the change nor the event is there; a repeat
 * that changes nothing writes no second event.
 */

let t: TestDatabase;
let endpointId = '';
const secret = process.env.NOTICE_KEY_SECRET ?? '';

/** `db` whose transactions fail after their work: the change and whatever rode with it roll back together. */
function failingAfter(db: Db): Db {
  return new Proxy(db, {
    get(target, property, receiver) {
      if (property === 'transaction')
        return (work: (tx: unknown) => Promise<unknown>) =>
          target.transaction(async (tx) => {
            await work(tx);
            throw new Error('rolled back after the change');
          });
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

async function events(type: string) {
  const { rows } = await t.pool.query<{ job_id: string | null; subject: string; sequence: number; payload: Record<string, unknown>; deliveries: number }>(
    `select o.job_id, o.subject, o.sequence::int, o.payload, (select count(*)::int from webhook_deliveries d where d.event_id = o.id) as deliveries
     from outbox_events o where o.type = $1 order by o.id`,
    [type],
  );
  return rows;
}

async function count(sqlText: string, values: unknown[]): Promise<number> {
  const { rows } = await t.pool.query<{ n: number }>(`select count(*)::int as n from (${sqlText}) x`, values);
  return rows[0]?.n ?? 0;
}

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  const created = await createWebhookEndpoint(
    t.db,
    { url: 'http://127.0.0.1:9/hooks', description: null, eventTypes: [...webhookEventTypes], createdBy: 'test' },
    { production: false, allow: parseAllowList('127.0.0.1'), noticeKeySecret: secret },
  );
  if (!created.ok) throw new Error(created.problem.message);
  endpointId = created.endpoint.id;
  refreshWebhookSubscriptions();
});

afterAll(async () => {
  await closeWakeupPublisher();
  await t.drop();
});

describe('events written with the change they report', () => {
  it('cancellation.requested: with the recipient page’s request, once; nothing when its transaction rolls back', async () => {
    const sent = await insertSentNotice(t.db, { type: 'renewal_notice_t72' });
    const notice = await findRecipientNotice(t.db, { noticeKey: sent.job.noticeKey });
    if (!notice) throw new Error('notice not found');
    const type = activeNoticeConfig().config.noticeTypes.renewal_notice_t72 ?? null;
    expect(type?.cancel?.requiresCode).toBe(false);
    const throttle = createRecipientThrottle({ pool: t.pool, limits: { perAddress: 100, perNotice: 100, codeAttempts: 5, windowMs: 60_000 } });
    const requests = () => count(`select 1 from cancellation_requests where notice_key = $1`, [sent.job.noticeKey]);

    await expect(requestCancellation({ db: failingAfter(t.db), notice, type, code: undefined, throttle })).rejects.toThrow('rolled back');
    expect(await requests()).toBe(0);
    expect(await events('cancellation.requested')).toEqual([]);

    const first = await requestCancellation({ db: t.db, notice, type, code: undefined, throttle });
    expect(first).toMatchObject({ ok: true, data: { status: 'requested' } });
    const again = await requestCancellation({ db: t.db, notice, type, code: undefined, throttle });
    expect(again).toMatchObject({ ok: true, data: { status: 'already_requested' } });
    expect(await requests()).toBe(1);
    expect(await events('cancellation.requested')).toEqual([
      {
        job_id: sent.job.id,
        subject: `job:${sent.job.id}`,
        sequence: 1,
        deliveries: 1,
        payload: expect.objectContaining({ jobId: sent.job.id, noticeType: 'renewal_notice_t72', source: 'recipient_page', codeVerified: false }),
      },
    ]);
  });

  it('preference.changed: with one-click unsubscribe and with opting back in, once each, in order; nothing on rollback', async () => {
    const sent = await insertSentNotice(t.db, { type: 'renewal_notice_t72' });
    const email = sent.job.recipientEmail ?? '';
    const token = compactToken(sent.job.noticeKey, 'unsubscribe');
    const keys = defaultLinkKeyRing(secret);
    const changes = () => count(`select 1 from recipient_preference_changes where recipient = $1`, [email]);

    await expect(unsubscribeByLink(failingAfter(t.db), { token, keys, now: new Date() })).rejects.toThrow('rolled back');
    expect(await changes()).toBe(0);
    expect(await events('preference.changed')).toEqual([]);

    expect(await unsubscribeByLink(t.db, { token, keys, now: new Date() })).toMatchObject({ ok: true, changed: true });
    expect(await unsubscribeByLink(t.db, { token, keys, now: new Date() })).toMatchObject({ ok: true, changed: false });
    const notice = await findRecipientNotice(t.db, { noticeKey: sent.job.noticeKey });
    if (!notice) throw new Error('notice not found');
    expect(await changeCourtesyPreference({ db: t.db, notice, channel: 'email', state: 'opted_in' })).toMatchObject({ ok: true, data: { changed: true } });
    expect(await changes()).toBe(2);
    const written = await events('preference.changed');
    expect(written.map((row) => [row.sequence, row.payload.from, row.payload.to, row.payload.source])).toEqual([
      [1, 'opted_in', 'opted_out', 'one_click'],
      [2, 'opted_out', 'opted_in', 'recipient_page'],
    ]);
    expect(written[0]?.payload.recipient).toEqual({ channel: 'email', address: email });
    expect(written[0]?.subject).toBe(written[1]?.subject);
    expect(written[0]?.subject).not.toContain(email);
  });

  it('compliance_gap.opened: with the event that opened the gap, once; nothing when the event’s transaction rolls back', async () => {
    const year = new Date().getUTCFullYear() + 1;
    const anchor = new Date(Date.now() + 10 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const request = eventRequest.parse({
      type: 'subscription.renewal',
      identity: { subscription_id: 'sub_gap_1', period_start: `${year}-03-01` },
      revision: 0,
      anchorAt: anchor,
      recipient: { email: 'ana@example.com', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US' },
      contract: { termMonths: 12 },
      payload: { customer_name: 'Ana Silva', plan_name: 'Coffee Box', amount: '190.00', currency: 'USD' },
    });
    const gaps = () => count(`select 1 from unplanned_notices where category = 'required' and resolved_at is null`, []);

    await expect(receiveEvent({ db: failingAfter(t.db), request, actor: 'token:test', ...(await processProducerSettings()) })).rejects.toThrow('rolled back');
    expect(await gaps()).toBe(0);
    expect(await events('compliance_gap.opened')).toEqual([]);

    const first = await receiveEvent({ db: t.db, request, actor: 'token:test', ...(await processProducerSettings()) });
    expect(first.kind).toBe('created');
    const repeat = await receiveEvent({ db: t.db, request, actor: 'token:test', ...(await processProducerSettings()) });
    expect(repeat.kind).not.toBe('created');
    expect(await gaps()).toBe(1);
    const written = await events('compliance_gap.opened');
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({
      job_id: null,
      sequence: 1,
      deliveries: 1,
      payload: {
        eventType: 'subscription.renewal',
        identity: { subscription_id: 'sub_gap_1', period_start: `${year}-03-01` },
        revision: 0,
        noticeType: 'auto_renewal_notice',
        reason: 'window_passed',
        region: 'US-CA',
      },
    });
    expect(written[0]?.subject).toMatch(/^event:[0-9a-f-]{36}$/);
  });

  it('notice.resolved: with an operator’s resolution of a quarantined claim, once; nothing when it rolls back', async () => {
    const noticeKey = keyWithCorrelation('fedcba9876543210fedcba9876543210');
    const jobId = await insertClaimedNotice(t.db, { noticeKey, email: 'quarantined@example.com' });
    const params = {
      action: 'confirm_sent' as const,
      selection: { keys: [noticeKey] },
      actor: 'oncall@example.com',
      reason: 'provider dashboard shows it sent',
      quarantineAfterMs: 60_000,
    };
    const ledgerState = async () =>
      (await t.pool.query<{ state: string }>(`select state from notice_ledger where notice_key = $1`, [noticeKey])).rows[0]?.state;
    const before = (await events('notice.resolved')).length;

    await expect(resolveQuarantine(failingAfter(t.db), params)).rejects.toThrow('rolled back');
    expect(await ledgerState()).toBe('claimed');
    expect(await events('notice.resolved')).toHaveLength(before);

    expect(await resolveQuarantine(t.db, params)).toMatchObject({ resolved: [noticeKey], skipped: 0 });
    expect(await resolveQuarantine(t.db, params)).toMatchObject({ resolved: [], skipped: 1 });
    expect(await ledgerState()).toBe('sent');
    const written = (await events('notice.resolved')).filter((row) => row.job_id === jobId);
    expect(written).toEqual([
      {
        job_id: jobId,
        subject: `job:${jobId}`,
        sequence: 1,
        deliveries: 1,
        payload: expect.objectContaining({ outcome: 'sent', resolvedBy: 'operator', action: 'confirm_sent' }),
      },
    ]);
    expect(JSON.stringify(written[0]?.payload)).not.toContain('oncall@example.com');
    expect(await count(`select 1 from webhook_deliveries where endpoint_id = $1`, [endpointId])).toBeGreaterThanOrEqual(4);
  });

  it('provider evidence (ingest): a quarantined claim confirmed by its delivery gives notice.resolved and notice.delivered, in order, once', async () => {
    const noticeKey = keyWithCorrelation('0a1b2c3d4e5f60718293a4b5c6d7e8f9');
    const jobId = await insertClaimedNotice(t.db, { noticeKey, email: 'evidence@example.com' });
    const delivered = {
      provider: 'generic' as const,
      eventId: 'evt-outbox-delivered-1',
      type: 'delivered' as const,
      rawType: 'delivered',
      correlationId: correlationOf(noticeKey),
      messageId: null,
      providerMessageId: 'pm-outbox-1',
      recipient: null,
      bounceType: null,
      occurredAt: new Date(Date.now() - 60_000),
      details: {},
    };
    await ingestEvents(t.db, { events: [delivered] });
    await ingestEvents(t.db, { events: [delivered] });
    const { rows } = await t.pool.query<{ type: string; sequence: number }>(`select type, sequence::int from outbox_events where job_id = $1 order by id`, [
      jobId,
    ]);
    expect(rows).toEqual([
      { type: 'notice.resolved', sequence: 1 },
      { type: 'notice.delivered', sequence: 2 },
    ]);
  });
});
