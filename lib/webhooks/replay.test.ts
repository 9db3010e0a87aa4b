import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayWebhookDeliveriesInput } from '@/lib/api/console/webhooks';
import { loadDeliveryLog } from '@/lib/console/webhooks';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { createWebhookEndpoint } from './endpoints';
import { replayEndpointDeliveries, updateWebhookEndpoint } from './manage';
import { recordJobEvent } from './outbox';
import { refreshWebhookSubscriptions } from './subscriptions';
import { parseAllowList } from './url';

/**
 * Replay and the delivery log over real PostgreSQL: one delivery or a time range's (failed only,
 * or delivered too) is due again with its whole schedule and the same webhook-id; a pending one is
 * left alone; a disabled endpoint is refused; each replay is audited with who, why and how many;
 * the log pages newest first without repeats.
 */

let t: TestDatabase;
let endpointId = '';
const settings = { production: false, allow: parseAllowList('127.0.0.1'), noticeKeySecret: process.env.NOTICE_KEY_SECRET ?? '', overlapMs: 60_000 };

async function deliveries() {
  const { rows } = await t.pool.query<{ event_id: number; state: string; attempts: number; webhook_id: string; due_now: boolean }>(
    `select d.event_id::int, d.state, d.attempts, o.webhook_id, d.next_attempt_at <= now() as due_now
     from webhook_deliveries d join outbox_events o on o.id = d.event_id where d.endpoint_id = $1 order by d.event_id`,
    [endpointId],
  );
  return rows;
}

beforeAll(async () => {
  t = await createTestDatabase();
  const created = await createWebhookEndpoint(
    t.db,
    { url: 'http://127.0.0.1:9/hooks', description: null, eventTypes: ['notice.failed'], createdBy: 'test' },
    settings,
  );
  if (!created.ok) throw new Error(created.problem.message);
  endpointId = created.endpoint.id;
  refreshWebhookSubscriptions();
  for (let index = 0; index < 4; index += 1) {
    const job = await insertTestJob(t.db);
    await t.db.transaction((tx) => recordJobEvent(tx, { type: 'notice.failed', jobId: job.id, extra: { outcome: 'failed' } }));
  }
  const rows = await deliveries();
  // Two failed for good (the schedule ran out), one delivered, one still pending (retrying).
  await t.pool.query(
    `update webhook_deliveries set state = case event_id when $2 then 'failed' when $3 then 'failed' when $4 then 'delivered' else state end,
            attempts = 8, done_at = case when event_id in ($2, $3, $4) then now() end, next_attempt_at = now() + interval '1 hour'
     where endpoint_id = $1`,
    [endpointId, rows[0]?.event_id, rows[1]?.event_id, rows[2]?.event_id],
  );
  await t.pool.query(
    `insert into webhook_attempts (event_id, endpoint_id, attempt, status, error, latency_ms)
     select event_id, endpoint_id, g, case when g = 3 then 204 else 503 end, null, 10 * g from webhook_deliveries, generate_series(1, 3) g where endpoint_id = $1`,
    [endpointId],
  );
});

afterAll(async () => {
  await t.drop();
});

describe('replay', () => {
  it('refuses a request that names neither one delivery nor a whole range, or a range backwards', () => {
    const base = { endpointId, reason: 'receiver lost data' };
    expect(replayWebhookDeliveriesInput.safeParse(base).success).toBe(false);
    expect(replayWebhookDeliveriesInput.safeParse({ ...base, from: '2026-12-01T00:00:00Z' }).success).toBe(false);
    expect(replayWebhookDeliveriesInput.safeParse({ ...base, from: '2026-12-02T00:00:00Z', to: '2026-12-01T00:00:00Z' }).success).toBe(false);
    expect(replayWebhookDeliveriesInput.safeParse({ ...base, eventId: 1, reason: 'x' }).success).toBe(false);
    expect(replayWebhookDeliveriesInput.safeParse({ ...base, eventId: 1 }).success).toBe(true);
  });

  it('a time range: the failed deliveries only, due now with the whole schedule and the same webhook-id; the pending one untouched; audited', async () => {
    const before = await deliveries();
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const result = await replayEndpointDeliveries(t.db, {
      endpointId,
      from,
      to,
      includeDelivered: false,
      actor: 'admin@example.com',
      reason: 'receiver lost a night',
    });
    expect(result).toEqual({ ok: true, data: { replayed: 2 } });
    const after = await deliveries();
    expect(after.map((row) => [row.state, row.attempts, row.due_now])).toEqual([
      ['pending', 0, true],
      ['pending', 0, true],
      ['delivered', 8, false],
      ['pending', 8, false],
    ]);
    expect(after.map((row) => row.webhook_id)).toEqual(before.map((row) => row.webhook_id));
    const { rows } = await t.pool.query<{ actor: string; reason: string; after: Record<string, unknown> }>(
      `select actor, reason, after from audit_log where action = 'webhook_endpoint.replay'`,
    );
    expect(rows).toEqual([
      { actor: 'admin@example.com', reason: 'receiver lost a night', after: { replayed: 2, eventId: null, from, to, includeDelivered: false } },
    ]);
  });

  it('one delivery, delivered before, when asked; a range that holds nothing replays nothing', async () => {
    const delivered = (await deliveries()).find((row) => row.state === 'delivered');
    const one = await replayEndpointDeliveries(t.db, {
      endpointId,
      eventId: delivered?.event_id,
      includeDelivered: true,
      actor: 'a',
      reason: 'consumer lost it',
    });
    expect(one).toEqual({ ok: true, data: { replayed: 1 } });
    const empty = await replayEndpointDeliveries(t.db, {
      endpointId,
      from: '2020-01-01T00:00:00Z',
      to: '2020-01-02T00:00:00Z',
      includeDelivered: true,
      actor: 'a',
      reason: 'nothing then',
    });
    expect(empty).toEqual({ ok: true, data: { replayed: 0 } });
  });

  it('refuses a disabled endpoint and an unknown one, changing nothing', async () => {
    await updateWebhookEndpoint(t.db, { id: endpointId, enabled: false, actor: 'a', reason: 'moving' }, settings);
    const before = await deliveries();
    const refused = await replayEndpointDeliveries(t.db, { endpointId, eventId: before[0]?.event_id, includeDelivered: true, actor: 'a', reason: 'try' });
    expect(refused).toMatchObject({ ok: false, refusal: { kind: 'conflict', code: 'endpoint_disabled' } });
    const unknown = await replayEndpointDeliveries(t.db, {
      endpointId: '00000000-0000-4000-8000-000000000000',
      eventId: 1,
      includeDelivered: true,
      actor: 'a',
      reason: 'try',
    });
    expect(unknown).toMatchObject({ ok: false, refusal: { kind: 'not_found' } });
    expect(await deliveries()).toEqual(before);
    const { rows } = await t.pool.query<{ n: number }>(`select count(*)::int as n from audit_log where action = 'webhook_endpoint.replay'`);
    expect(rows[0]?.n).toBe(3);
  });
});

describe('the delivery log', () => {
  it('pages newest first, per endpoint and per notice, without repeats or gaps', async () => {
    const seen: number[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await loadDeliveryLog(t.db, { endpoint: endpointId, before, limit: 5 });
      seen.push(...page.attempts.map((attempt) => attempt.id));
      if (!page.next) break;
      before = page.next;
    }
    expect(seen).toHaveLength(12);
    expect([...seen].sort((a, b) => b - a)).toEqual(seen);
    expect(new Set(seen).size).toBe(12);
    const first = await loadDeliveryLog(t.db, { endpoint: endpointId, limit: 1 });
    const jobId = first.attempts[0]?.jobId ?? '';
    const ofNotice = await loadDeliveryLog(t.db, { notice: jobId, limit: 50 });
    expect(ofNotice.attempts.map((attempt) => [attempt.jobId, attempt.status])).toEqual([
      [jobId, 204],
      [jobId, 503],
      [jobId, 503],
    ]);
    expect(JSON.stringify(ofNotice)).not.toMatch(/whsec_|sealed/);
  });
});
