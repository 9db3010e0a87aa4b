import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { createDb, createPool } from '@/db/client';
import { createApiToken } from '@/lib/auth/api-tokens';
import { selfSignedCertificate } from '@/testing/self-signed';
import { startSmtpSink } from '@/testing/smtp-sink';
import { spawnWorker } from '@/testing/worker-process';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * Webhooks to a producer through the real product: notices created over the producer API of
 * `next start`, sent by a real worker process to the SMTP sink, their events delivered to a
 * receiver that verifies each with the official `standardwebhooks` library and de-duplicates by
 * webhook-id, as a producer would. The receiver is down for "10 minutes" on the default retry
 * schedule scaled by 1/60 (0s,5s,5m,30m,… → 0s,83ms,5s,30s,…: down for 10 s spans the same
 * three failed attempts the default schedule makes in a 10-minute outage, and the fourth lands
 * after it). After it comes back every event written for these notices has arrived, none twice
 * after de-duplication, and each notice's sequence has no gap. A wrong secret fails every
 * verification, a private address is refused at creation, and a 410 disables the endpoint.
 *
 * It runs a worker (which sends every due job of the shared seed) and a sink that reports
 * deliveries, so it is a ui-project file that Playwright's order (localeCompare of the names)
 * puts after every spec that reads the seed's pending work or the relay's lack of delivery
 * evidence (oncall-quarantine, overview-charts), as the other worker specs are; it deletes its
 * endpoint at the end for webhooks.spec.ts, which runs next and starts with none.
 */

type Received = { id: string; type: string; jobId: string; sequence: number; body: string; headers: Record<string, string> };

/** An https receiver (the console, in production, takes https URLs only) with a certificate of its own that the worker is told to trust. */
function startReceiver(dir: string) {
  const { key, cert } = selfSignedCertificate(dir);
  let secret = '';
  let status: 204 | 503 | 410 = 503;
  const received: Received[] = [];
  const refused: string[] = [];
  const answered = { down: 0, gone: 0 };
  const server = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (status !== 204) {
        answered[status === 503 ? 'down' : 'gone'] += 1;
        return void response.writeHead(status).end();
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = request.headers as Record<string, string>;
      try {
        const event = new Webhook(secret).verify(body, headers) as { type: string; data: { jobId: string; sequence: number } };
        received.push({ id: String(headers['webhook-id']), type: event.type, jobId: event.data.jobId, sequence: event.data.sequence, body, headers });
        response.writeHead(204).end();
      } catch (error) {
        refused.push(error instanceof WebhookVerificationError ? 'verification' : String(error));
        response.writeHead(400).end();
      }
    });
  });
  return {
    caFile: cert,
    received,
    refused,
    answered,
    setSecret: (value: string) => void (secret = value),
    setStatus: (value: 204 | 503 | 410) => void (status = value),
    listen: () =>
      new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const hours = (n: number) => new Date(Date.now() + n * 3_600_000).toISOString();
const unique = (received: Received[]) => [...new Map(received.map((r) => [r.id, r])).values()];

test('receiver down for a scaled 10 minutes: every event arrives once after de-duplication, sequences without gaps; wrong secret, private address and 410 refused', async ({
  request,
  sql,
  seed,
  baseURL,
}) => {
  test.setTimeout(180_000);
  const pool = createPool(process.env.DATABASE_URL ?? '', { max: 2 });
  const db = createDb(pool);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'e2e-webhooks-outage-'));
  const receiver = startReceiver(dir);
  const url = await receiver.listen();
  // The sink reports what it accepted and delivered to the console's generic webhook, signed: a notice.delivered per notice.
  const sink = await startSmtpSink({ eventsUrl: `${baseURL ?? ''}/api/webhooks/generic`, eventsSecret: seed.webhooks.keys.genericSecret });
  let worker: ReturnType<typeof spawnWorker> | null = null;
  try {
    const { token } = await createApiToken(db, {
      name: 'e2e webhooks outage',
      createdBy: null,
      actor: 'e2e-webhooks-outage',
      scopes: ['reminders:write', 'notices:read', 'webhooks:manage'],
    });
    const auth = { authorization: `Bearer ${token}` };

    // A private address the console's allow-list does not name: refused, nothing stored.
    const endpointsBefore = await sql<{ n: string }>('select count(*)::text as n from webhook_endpoints');
    const privateUrl = await request.post('/api/v1/webhook-endpoints', { headers: auth, data: { url: 'https://10.0.0.7/hooks', eventTypes: ['notice.sent'] } });
    expect(privateUrl.status()).toBe(422);
    expect(await privateUrl.json()).toMatchObject({ error: 'url_refused' });
    expect(await sql<{ n: string }>('select count(*)::text as n from webhook_endpoints')).toEqual(endpointsBefore);

    const created = await request.post('/api/v1/webhook-endpoints', {
      headers: auth,
      data: { url, description: 'outage receiver', eventTypes: ['notice.sent', 'notice.delivered'] },
    });
    expect(created.status(), await created.text()).toBe(201);
    const { endpoint, secret } = (await created.json()) as { endpoint: { id: string }; secret: string };
    receiver.setSecret(secret);

    // The default schedule, 0s,5s,5m,30m,2h,5h,10h,10h, at 1/60.
    worker = spawnWorker({
      DATABASE_URL: process.env.DATABASE_URL ?? '',
      NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '',
      SMTP_URL: sink.url,
      MESSAGE_ID_DOMAIN: 'notices.example.com',
      WEBHOOK_ALLOWED_PRIVATE: '127.0.0.1',
      WEBHOOK_DISPATCH_EVERY: '50ms',
      WEBHOOK_TIMEOUT: '2s',
      WEBHOOK_RETRY_SCHEDULE: '0s,83ms,5s,30s,2m,5m,10m,10m',
      NODE_EXTRA_CA_CERTS: receiver.caFile,
    });
    await worker.ready;

    // Down from the start: every notice is created, sent and its events written while it is.
    const jobIds: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const response = await request.post('/api/v1/reminders', {
        headers: auth,
        data: {
          type: 'renewal_notice_t72',
          identity: { subscription_id: `sub_outage_${randomUUID().slice(0, 8)}`, period_start: '2027-01-01' },
          recipient: { email: `outage.${String(i)}@example.com`, timeZone: 'UTC' },
          dueAt: new Date().toISOString(),
          deadlineAt: hours(26),
          anchorAt: hours(50),
          payload: { customer_name: 'Ana Silva', plan_name: 'Pro', amount: '49.00', currency: 'EUR' },
          source: 'e2e-webhooks-outage',
        },
      });
      expect(response.status()).toBe(201);
      jobIds.push(((await response.json()) as { id: string }).id);
    }
    const ours = (rows: Received[]) => rows.filter((r) => jobIds.includes(r.jobId));
    const eventsOf = () =>
      sql<{ webhook_id: string; job_id: string; sequence: string; type: string; state: string; attempts: number }>(
        `select e.webhook_id, e.job_id, e.sequence::text, e.type, d.state, d.attempts
           from outbox_events e join webhook_deliveries d on d.event_id = e.id and d.endpoint_id = $1
          where e.job_id = any($2::uuid[]) order by e.job_id, e.sequence`,
        [endpoint.id, jobIds],
      );

    // Every notice sent, and its notice.sent event failed at least three times: the outage's span.
    await expect(async () => {
      const events = await eventsOf();
      const sent = events.filter((event) => event.type === 'notice.sent');
      expect(sent).toHaveLength(jobIds.length);
      for (const event of sent) expect(event.attempts).toBeGreaterThanOrEqual(3);
    }).toPass({ timeout: 60_000, intervals: [200] });
    expect(ours(receiver.received)).toEqual([]);
    expect(receiver.answered.down).toBeGreaterThanOrEqual(3 * jobIds.length);

    // Back up: the fourth attempt (30 s on the scaled schedule) delivers what is left.
    receiver.setStatus(204);
    await expect(async () => {
      const events = await eventsOf();
      expect(events.filter((event) => event.state !== 'delivered')).toEqual([]);
      expect(new Set(unique(ours(receiver.received)).map((r) => r.id))).toEqual(new Set(events.map((event) => event.webhook_id)));
    }).toPass({ timeout: 90_000, intervals: [250] });

    const events = await eventsOf();
    const arrived = unique(ours(receiver.received));
    expect(arrived).toHaveLength(events.length);
    expect(receiver.refused).toEqual([]);
    for (const jobId of jobIds) {
      const sequences = arrived
        .filter((r) => r.jobId === jobId)
        .map((r) => r.sequence)
        .sort((a, b) => a - b);
      expect(sequences, `notice ${jobId}`).toEqual(sequences.map((_, index) => index + 1));
      expect(new Set(arrived.filter((r) => r.jobId === jobId).map((r) => r.type)), `notice ${jobId}`).toEqual(new Set(['notice.sent', 'notice.delivered']));
    }
    expect(sink.messages().filter((message) => message.to.some((to) => to.startsWith('outage.')))).toHaveLength(jobIds.length);

    // A producer holding the wrong secret can verify none of them.
    const wrong = new Webhook(`whsec_${Buffer.from('not the endpoint secret, 32 bytes').toString('base64')}`);
    for (const r of arrived) expect(() => wrong.verify(r.body, r.headers)).toThrow(WebhookVerificationError);

    // A 410 disables the endpoint: nothing more is attempted.
    receiver.setStatus(410);
    expect((await request.post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, { headers: auth })).status()).toBe(201);
    await expect(async () => {
      const got = await request.get(`/api/v1/webhook-endpoints/${endpoint.id}`, { headers: auth });
      expect(await got.json()).toMatchObject({ enabled: false, disabledReason: 'gone' });
    }).toPass({ timeout: 30_000, intervals: [200] });
    expect(receiver.answered.gone).toBe(1);
  } finally {
    // The endpoint goes with its spec (the API has no delete): webhooks.spec.ts, after this file, starts with none.
    await sql("delete from webhook_endpoints where description = 'outage receiver'");
    if (worker) await worker.stop();
    await sink.stop();
    await receiver.close();
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
  }
});
