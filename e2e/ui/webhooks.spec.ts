import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { Webhook } from 'standardwebhooks';
import { selfSignedCertificate } from '@/testing/self-signed';
import { startSmtpSink } from '@/testing/smtp-sink';
import { spawnWorker } from '@/testing/worker-process';
import { expect, snap, test } from '@/e2e/fixtures/test';

/**
 * As an admin in the console: add a webhook endpoint pointing at a local https receiver (a test CA
 * the real worker trusts), copy the secret shown once, send a test event that the receiver
 * verifies with the official standardwebhooks library, see the attempt in the delivery log,
 * replay it (same webhook-id, audited with the reason and the count), and see the failing banner
 * on every page once the receiver answers 503. An operator reads the log but has no actions;
 * support is refused the page.
 */

type Arrival = { id: string; type: string; verified: boolean };

function startReceiver(dir: string) {
  const { key, cert } = selfSignedCertificate(dir);
  let secret = '';
  let status = 204;
  const arrivals: Arrival[] = [];
  const server = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let verified = false;
      let type = '';
      try {
        type = (new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), request.headers as Record<string, string>) as { type: string }).type;
        verified = true;
      } catch {
        verified = false;
      }
      arrivals.push({ id: String(request.headers['webhook-id']), type, verified });
      response.writeHead(verified ? status : 400).end();
    });
  });
  return {
    caFile: cert,
    arrivals,
    setSecret: (value: string) => {
      secret = value;
    },
    setStatus: (value: number) => {
      status = value;
    },
    listen: () =>
      new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function waitForAttempts(page: Page, count: number) {
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId('webhook-attempt-row')).toHaveCount(count, { timeout: 1_000 });
  }).toPass({ timeout: 30_000 });
}

test('an admin adds an endpoint, test-sends, sees the delivery, replays it; a failing endpoint bannered everywhere; operator reads, support is refused', async ({
  pageAs,
  sql,
}, testInfo) => {
  test.setTimeout(120_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'e2e-webhooks-'));
  const receiver = startReceiver(dir);
  const url = await receiver.listen();
  const sink = await startSmtpSink();
  const worker = spawnWorker({
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '',
    SMTP_URL: sink.url,
    MESSAGE_ID_DOMAIN: 'notices.example.com',
    WEBHOOK_DISPATCH_EVERY: '200ms',
    // No retry within the test: each attempt in the log is one the test made.
    WEBHOOK_RETRY_SCHEDULE: '0s,10m',
    WEBHOOK_ALLOWED_PRIVATE: '127.0.0.1',
    NODE_EXTRA_CA_CERTS: receiver.caFile,
  });
  try {
    const page = await pageAs('admin');
    await page.goto('/webhooks');
    await expect(page.getByRole('heading', { name: 'Webhooks', level: 1 })).toBeVisible();
    await expect(page.locator('nav a[href="/webhooks"]')).toHaveCount(1);

    // A private address the allow-list does not name is refused at save, with the rule in words.
    await page.getByLabel('URL').fill('https://10.0.0.7/hooks');
    await page.getByLabel('Reason (audited)').first().fill('billing listens for bounces');
    await page.getByTestId('webhook-create-submit').click();
    await expect(page.getByTestId('webhooks-message')).toContainText('private, loopback or link-local');
    await expect(page.getByTestId('webhook-endpoint-row')).toHaveCount(0);

    await page.getByLabel('URL').fill(url);
    await page.getByLabel('Description').fill('billing service');
    // One event type the seeded notices the worker sends cannot produce: the log holds the test's own deliveries only.
    for (const box of await page.getByTestId('webhook-types').getByRole('checkbox').all()) await box.uncheck();
    await page.getByTestId('webhook-types').getByLabel('compliance_gap.opened').check();
    await page.getByTestId('webhook-create-submit').click();
    const secret = (await page.getByTestId('webhook-secret-value').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    receiver.setSecret(secret);
    await expect(page.getByTestId('webhook-endpoint-row')).toHaveCount(1);
    await snap(page, testInfo, 'webhooks-created-secret-once');

    // The secret is shown once: a reload shows the endpoint, never the secret.
    await page.reload();
    await expect(page.getByTestId('webhook-endpoint-row')).toContainText(url);
    await expect(page.getByTestId('webhook-secret')).toHaveCount(0);
    expect(await page.content()).not.toContain(secret.slice('whsec_'.length));

    await worker.ready;
    await page.getByTestId('webhook-test').click();
    await expect(page.getByTestId('webhooks-message')).toContainText('queued');
    await waitForAttempts(page, 1);
    await expect(page.getByTestId('webhook-attempt-status')).toHaveText('204');
    await expect(page.getByTestId('webhook-attempt-state')).toHaveText('delivered');
    expect(receiver.arrivals).toEqual([{ id: expect.stringMatching(/^msg_/), type: 'webhook.test', verified: true }]);
    await snap(page, testInfo, 'webhooks-delivery-log');

    // Replay that delivery: the same webhook-id arrives again, and the replay is audited.
    page.once('dialog', (dialog) => void dialog.accept('the receiver lost its database'));
    await page.getByTestId('webhook-replay-one').click();
    await expect(page.getByTestId('webhook-replay-one-done').first()).toHaveText('1 queued');
    await waitForAttempts(page, 2);
    expect(receiver.arrivals).toHaveLength(2);
    expect(receiver.arrivals[1]?.id).toBe(receiver.arrivals[0]?.id);
    const audit = await sql<{ action: string; reason: string; after: { replayed: number } }>(
      // This endpoint's rows: another spec's endpoint may have its own.
      `select action, reason, after from audit_log
        where action like 'webhook_endpoint.%' and target_id in (select id::text from webhook_endpoints where url = $1) order by id`,
      [url],
    );
    expect(audit.map((row) => row.action)).toEqual(['webhook_endpoint.create', 'webhook_endpoint.test', 'webhook_endpoint.replay']);
    expect(audit[2]).toMatchObject({ reason: 'the receiver lost its database', after: { replayed: 1 } });
    expect(JSON.stringify(audit)).not.toContain(secret.slice('whsec_'.length));

    // The receiver fails: the endpoint is failing, and every page says so.
    receiver.setStatus(503);
    await page.getByTestId('webhook-test').click();
    await waitForAttempts(page, 3);
    await expect(page.getByTestId('webhook-endpoint-state')).toContainText('failing since');
    for (const where of ['/', '/lookup']) {
      await page.goto(where);
      await expect(page.getByTestId('webhooks-failing')).toContainText('Webhook endpoint 127.0.0.1');
    }
    await snap(page, testInfo, 'webhooks-failing-banner');

    // An operator reads the endpoints and the log, with no action; the API refuses a replay.
    const operator = await pageAs('operator');
    await operator.goto('/webhooks');
    await expect(operator.getByTestId('webhook-endpoint-row')).toHaveCount(1);
    await expect(operator.getByTestId('webhook-attempt-row')).toHaveCount(3);
    await expect(operator.getByTestId('webhook-create')).toHaveCount(0);
    await expect(operator.getByTestId('webhook-actions')).toHaveCount(0);
    await expect(operator.getByTestId('webhook-replay-one')).toHaveCount(0);
    const refused = await operator.request.post('/api/console/webhook-endpoints/replay', {
      data: { endpointId: '00000000-0000-4000-8000-000000000000', eventId: 1, reason: 'not mine to do' },
    });
    expect(refused.status()).toBe(403);
    await snap(operator, testInfo, 'webhooks-operator-read-only');

    // Support is refused the page and has no Webhooks in the nav; the banner still tells them.
    const support = await pageAs('support');
    await support.goto('/webhooks');
    await expect(support.getByTestId('webhook-endpoints')).toHaveCount(0);
    await expect(support.locator('nav a[href="/webhooks"]')).toHaveCount(0);
    await expect(support.getByTestId('webhooks-failing')).toContainText('An admin can fix it on the Webhooks page.');
    await expect(support.locator('[data-testid="webhooks-failing"] a')).toHaveCount(0);
    await snap(support, testInfo, 'webhooks-support-refused');

    // Disable it (admin): the banner goes, nothing more is delivered.
    await page.goto('/webhooks');
    page.once('dialog', (dialog) => void dialog.accept('receiver is being replaced'));
    await page.getByTestId('webhook-toggle').click();
    await expect(page.getByTestId('webhook-endpoint-state')).toContainText('disabled');
    await page.goto('/');
    await expect(page.getByTestId('webhooks-failing')).toHaveCount(0);
  } finally {
    await worker.stop();
    await sink.stop();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
