import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { getEndpoint, listEndpointAttempts } from '@/db/queries/webhooks';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { createWebhookEndpoint, rotateWebhookSecret } from '@/lib/webhooks/endpoints';
import { dispatchDue } from '@/lib/webhooks/dispatcher';
import { recordJobEvent } from '@/lib/webhooks/outbox';
import { refreshWebhookSubscriptions } from '@/lib/webhooks/subscriptions';
import { parseAllowList } from '@/lib/webhooks/url';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { startSmtpSink } from '@/testing/smtp-sink';
import { spawnWorker } from '@/testing/worker-process';
import { createLogger } from '@/lib/log';

/**
 * Outbound webhooks end to end: real PostgreSQL, a real worker process, a real HTTP receiver that
 * verifies every delivery with the official `standardwebhooks` library and de-duplicates by
 * webhook-id, as a producer would.
 */
type Mode = 'down' | 'up' | 'gone' | 'hang';
type Received = { id: string; type: string; jobId: string; sequence: number };

async function startReceiver(secret: () => string) {
  let mode: Mode = 'up';
  const received: Received[] = [];
  const refused: string[] = [];
  let arrivals = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      arrivals += 1;
      if (mode === 'hang') return;
      if (mode === 'down') return void response.writeHead(503).end();
      if (mode === 'gone') return void response.writeHead(410).end();
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        const event = new Webhook(secret()).verify(body, request.headers as Record<string, string>) as {
          type: string;
          data: { jobId: string; sequence: number };
        };
        received.push({ id: String(request.headers['webhook-id']), type: event.type, jobId: event.data.jobId, sequence: event.data.sequence });
        response.writeHead(204).end();
      } catch (error) {
        refused.push(error instanceof WebhookVerificationError ? 'verification' : 'other');
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    refused,
    arrivals: () => arrivals,
    setMode: (next: Mode) => {
      mode = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const loopback = parseAllowList('127.0.0.1');
const settings = { production: false, allow: loopback, noticeKeySecret: process.env.NOTICE_KEY_SECRET ?? '' };
const logger = createLogger('webhooks-test', 'silent');

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function uniqueById(received: Received[]): Received[] {
  return [...new Map(received.map((r) => [r.id, r])).values()];
}

describe('outbound webhooks', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('refuses a private-address URL unless the allow-list names it', async () => {
    const refused = await createWebhookEndpoint(
      t.db,
      { url: 'http://127.0.0.1:9/x', description: null, eventTypes: [], createdBy: 'test' },
      { ...settings, allow: parseAllowList('') },
    );
    expect(refused).toMatchObject({ ok: false, problem: { field: 'url' } });
    const linkLocal = await createWebhookEndpoint(
      t.db,
      { url: 'http://169.254.169.254/latest', description: null, eventTypes: [], createdBy: 'test' },
      settings,
    );
    expect(linkLocal.ok).toBe(false);
    const https = await createWebhookEndpoint(
      t.db,
      { url: 'http://example.com/x', description: null, eventTypes: [], createdBy: 'test' },
      { ...settings, production: true },
    );
    expect(https).toMatchObject({ ok: false, problem: { message: 'must be https' } });
    const allowed = await createWebhookEndpoint(
      t.db,
      { url: 'http://127.0.0.1:9/x', description: null, eventTypes: ['notice.sent'], createdBy: 'test' },
      settings,
    );
    expect(allowed.ok).toBe(true);
    if (!allowed.ok) return;
    expect(allowed.secret).toMatch(/^whsec_/);
    // Stored sealed: the plain secret is nowhere in the row.
    const row = await getEndpoint(t.db, allowed.endpoint.id);
    expect(JSON.stringify(row)).not.toContain(allowed.secret.slice(6));
    await t.db.execute(`update webhook_endpoints set disabled_at = now(), disabled_reason = 'test' where id = '${allowed.endpoint.id}'`);
  });

  it('checks DNS at delivery: an endpoint saved while allowed is refused once the allow-list no longer names its address', async () => {
    const receiver = await startReceiver(() => '');
    const created = await createWebhookEndpoint(t.db, { url: receiver.url, description: null, eventTypes: ['notice.failed'], createdBy: 'test' }, settings);
    if (!created.ok) throw new Error('not created');
    refreshWebhookSubscriptions();
    const job = await insertTestJob(t.db);
    await t.db.transaction((tx) => recordJobEvent(tx, { type: 'notice.failed', jobId: job.id, extra: { outcome: 'failed' } }));
    await dispatchDue(
      t.db,
      {
        everyMs: 10,
        timeoutMs: 2_000,
        scheduleMs: [0, 0, 0],
        disableAfterMs: 86_400_000,
        allow: parseAllowList(''),
        noticeKeySecret: settings.noticeKeySecret,
      },
      logger,
    );
    expect(receiver.arrivals()).toBe(0);
    const [attempt] = await listEndpointAttempts(t.db, { endpointId: created.endpoint.id, limit: 5 });
    expect(attempt).toMatchObject({ status: null, error: 'address_refused' });
    await t.db.execute(`update webhook_endpoints set disabled_at = now(), disabled_reason = 'test' where id = '${created.endpoint.id}'`);
    await receiver.close();
  });

  it('a wrong secret fails verification; a rotation signs with both keys during the overlap; a 410 disables the endpoint', async () => {
    let secret = 'whsec_' + Buffer.from('not the endpoint secret at all!!').toString('base64');
    const receiver = await startReceiver(() => secret);
    const created = await createWebhookEndpoint(t.db, { url: receiver.url, description: null, eventTypes: ['notice.suppressed'], createdBy: 'test' }, settings);
    if (!created.ok) throw new Error('not created');
    refreshWebhookSubscriptions();
    const dispatch = () =>
      dispatchDue(
        t.db,
        { everyMs: 10, timeoutMs: 2_000, scheduleMs: [0, 0, 0, 0, 0], disableAfterMs: 86_400_000, allow: loopback, noticeKeySecret: settings.noticeKeySecret },
        logger,
      );
    const job = await insertTestJob(t.db);
    await t.db.transaction((tx) => recordJobEvent(tx, { type: 'notice.suppressed', jobId: job.id, extra: { outcome: 'suppressed', reason: 'unsubscribed' } }));
    await dispatch();
    expect(receiver.refused).toEqual(['verification']);
    expect(receiver.received).toHaveLength(0);
    // The right secret (the control) verifies the retry, same webhook-id.
    secret = created.secret;
    await dispatch();
    expect(receiver.received).toHaveLength(1);
    // Rotated: the receiver still holding the old secret verifies during the overlap, and so does one with the new.
    const rotated = await rotateWebhookSecret(t.db, { id: created.endpoint.id, overlapMs: 3_600_000, noticeKeySecret: settings.noticeKeySecret });
    if (!rotated) throw new Error('not rotated');
    await t.db.transaction((tx) => recordJobEvent(tx, { type: 'notice.suppressed', jobId: job.id, extra: { outcome: 'suppressed' } }));
    await dispatch();
    secret = rotated.secret;
    await t.db.transaction((tx) => recordJobEvent(tx, { type: 'notice.suppressed', jobId: job.id, extra: { outcome: 'suppressed' } }));
    await dispatch();
    expect(receiver.received.map((r) => r.sequence)).toEqual([1, 2, 3]);
    receiver.setMode('gone');
    await t.db.transaction((tx) => recordJobEvent(tx, { type: 'notice.suppressed', jobId: job.id, extra: { outcome: 'suppressed' } }));
    await dispatch();
    const endpoint = await getEndpoint(t.db, created.endpoint.id);
    expect(endpoint).toMatchObject({ disabledReason: 'gone' });
    expect(endpoint?.disabledAt).not.toBeNull();
    // Disabled: nothing more is written for it, nothing more is sent.
    refreshWebhookSubscriptions();
    const before = receiver.arrivals();
    await t.db.transaction((tx) => recordJobEvent(tx, { type: 'notice.suppressed', jobId: job.id, extra: { outcome: 'suppressed' } }));
    await dispatch();
    expect(receiver.arrivals()).toBe(before);
    await receiver.close();
  });

  it('receiver down then back: every notice.sent arrives from a real worker, none twice after de-duplication, sequences without gaps; a SIGKILLed worker mid-dispatch loses none', async () => {
    // Its own database: the endpoints and events of the tests above would be delivered by this worker too.
    const own = await createTestDatabase();
    let secret = '';
    const receiver = await startReceiver(() => secret);
    const created = await createWebhookEndpoint(own.db, { url: receiver.url, description: null, eventTypes: ['notice.sent'], createdBy: 'test' }, settings);
    if (!created.ok) throw new Error('not created');
    secret = created.secret;
    const sink = await startSmtpSink();
    const publisher = createPgBossQueue({ url: own.url, visibilityTimeoutMs: 2_000 });
    await publisher.start();
    const env = {
      DATABASE_URL: own.url,
      SMTP_URL: sink.url,
      VISIBILITY_TIMEOUT: '2s',
      WORKER_CONCURRENCY: '4',
      WEBHOOK_ALLOWED_PRIVATE: '127.0.0.1',
      WEBHOOK_DISPATCH_EVERY: '50ms',
      WEBHOOK_TIMEOUT: '500ms',
      // Long enough that no delivery runs out of steps while the receiver is down on a loaded machine.
      WEBHOOK_RETRY_SCHEDULE: ['0s', '100ms', ...Array.from({ length: 200 }, () => '300ms')].join(','),
    };
    const workers: Array<ReturnType<typeof spawnWorker>> = [];
    try {
      // Down first: the receiver answers 503 while every notice is sent.
      receiver.setMode('down');
      const first = spawnWorker(env);
      workers.push(first);
      await first.ready;
      const jobs = await Promise.all(Array.from({ length: 8 }, () => insertTestJob(own.db)));
      for (const job of jobs) await publisher.publish({ jobId: job.id });
      await waitFor(async () => {
        // Counted for this test's jobs only.
        const ids = jobs.map((job) => `'${job.id}'`).join(',');
        const rows = await own.db.execute<{ n: number }>(`select count(*)::int as n from outbox_events where type = 'notice.sent' and job_id in (${ids})`);
        return rows.rows[0]?.n === jobs.length;
      });
      await waitFor(() => receiver.arrivals() >= 2 * jobs.length);
      // The receiver hangs: the worker is killed while requests are in flight (claimed, unanswered).
      receiver.setMode('hang');
      const hungAt = receiver.arrivals();
      await waitFor(() => receiver.arrivals() > hungAt);
      first.child.kill('SIGKILL');
      expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
      // Back up, a new worker: the killed dispatcher's claims come due again after their lease.
      receiver.setMode('up');
      const second = spawnWorker(env);
      workers.push(second);
      await second.ready;
      await waitFor(() => uniqueById(receiver.received).length === jobs.length, 90_000);
      const unique = uniqueById(receiver.received);
      expect(new Set(unique.map((r) => r.jobId))).toEqual(new Set(jobs.map((j) => j.id)));
      for (const job of jobs) expect(unique.filter((r) => r.jobId === job.id).map((r) => r.sequence)).toEqual([1]);
      expect(receiver.refused).toEqual([]);
      // The last answers are recorded just after the receiver sent them.
      await waitFor(async () => {
        const pending = await own.db.execute<{ n: number }>(
          `select count(*)::int as n from webhook_deliveries where state <> 'delivered' and endpoint_id = '${created.endpoint.id}'`,
        );
        return pending.rows[0]?.n === 0;
      });
    } finally {
      for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) await worker.stop();
      await publisher.stop();
      await sink.stop();
      await receiver.close();
      await own.drop();
    }
  }, 180_000);
});
