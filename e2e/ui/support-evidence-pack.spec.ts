import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EvidencePack } from '@/lib/api/evidence';
import { correlationOf } from '@/lib/ledger/notice-key';
import { postmarkHeaders } from '@/e2e/fixtures/webhook-keys';
import { startSmtpSink } from '@/testing/smtp-sink';
import { oneTimeCodeIn, recipientLinkIn } from '@/testing/recipient';
import { spawnWorker } from '@/testing/worker-process';
import { expect, snap, test } from '@/e2e/fixtures/test';

const DAY = 86_400_000;

/**
 * Issue 28's Done-when, through the real product: a billing service reports an annual renewal in
 * California (a required auto-renewal notice, 15–45 days before the charge); a real worker process
 * sends it to the SMTP sink; Postmark's documented Delivery webhook for it arrives (the SMTP send
 * carries X-PM-Metadata-notice_correlation, which Postmark echoes as Metadata); the customer opens
 * the link from the email in Chromium and asks to cancel with the code from it. The worker's own
 * pass chains and signs the record (EVIDENCE_SIGN_EVERY). Then the pack is taken three ways — the
 * lookup's "Evidence pack" button as support, GET /api/v1/notices/{id}/evidence with a token that
 * holds only notices:read, and `npm run ledger -- evidence export` — and the three are the same
 * pack but for `exportedAt` (each export's own clock); `evidence verify` holds on it (exit 0,
 * the keys fetched from its keysUrl on `next start`), and a flipped byte in the send's signed
 * entry fails it, naming that entry.
 *
 * Its worker's sweeper sends every due job and its Postmark webhook records delivery evidence
 * for email: the file sorts after the specs that read the seed's pending work and a relay with no
 * delivery evidence (oncall-quarantine, overview-charts; CI 2026-12-04 broke both when it ran first).
 */
test('a required notice sent by a real worker: console, API and CLI give the same pack, verify holds, a flipped byte is named', async ({
  browser,
  baseURL,
  seed,
  pageAs,
  apiAs,
  sql,
}, testInfo) => {
  test.setTimeout(180_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'evidence-e2e-'));
  const subscription = `sub_e2e_evidence_${randomUUID().slice(0, 8)}`;
  const email = `${subscription}@customers.example.com`;
  const sink = await startSmtpSink();
  const worker = spawnWorker({
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '',
    SMTP_URL: sink.url,
    MESSAGE_ID_DOMAIN: 'notices.example.com',
    PUBLIC_BASE_URL: baseURL ?? '',
    RATE_LIMIT_PER_DOMAIN: '1000',
    EVIDENCE_FOR: 'required',
    EVIDENCE_SIGN_EVERY: '1s',
  });
  try {
    // The charge is 30 days away: California's 15–45-day window for an annual term is open now.
    const anchorAt = new Date(Math.ceil((Date.now() + 30 * DAY) / 60_000) * 60_000);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const posted = await context.request.post('/api/v1/events', {
      headers: { authorization: `Bearer ${seed.producer.token}` },
      data: {
        type: 'subscription.renewal',
        identity: { subscription_id: subscription, period_start: anchorAt.toISOString().slice(0, 10) },
        anchorAt: anchorAt.toISOString(),
        recipient: { email, region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US' },
        contract: { termMonths: 12 },
        payload: { customer_name: 'Ada', plan_name: 'Pro annual', amount: '99.00', currency: 'USD' },
        source: 'e2e-evidence',
      },
    });
    expect(posted.status(), await posted.text()).toBe(201);
    const planned = ((await posted.json()) as { planned: { noticeType: string; noticeKey: string }[] }).planned;
    const notice = planned.find((entry) => entry.noticeType === 'auto_renewal_notice');
    if (!notice) throw new Error(`no auto-renewal notice planned: ${JSON.stringify(planned)}`);
    const [job] = await sql<{ id: string; category: string }>('select id::text, category from reminder_jobs where notice_key = $1', [notice.noticeKey]);
    if (!job) throw new Error('the planned notice has no job');
    expect(job.category).toBe('required');

    // The real worker sends it to the SMTP sink.
    await worker.ready;
    const correlation = correlationOf(notice.noticeKey);
    await sink.waitFor((messages) => messages.some((m) => m.correlation === correlation), 45_000);
    const received = sink.messages().find((m) => m.correlation === correlation);
    if (!received) throw new Error('no message at the sink');
    await expect
      .poll(async () => (await sql<{ state: string }>('select state from notice_ledger where notice_key = $1', [notice.noticeKey]))[0]?.state)
      .toBe('sent');
    const echoed = Object.entries(received.headers).find(([name]) => name.toLowerCase() === 'x-pm-metadata-notice_correlation')?.[1];
    expect(echoed).toBe(correlation);

    // Postmark's Delivery webhook, in its documented shape (testing/fixtures/postmark-delivery.json), with the Metadata the send carried.
    const delivery = {
      RecordType: 'Delivery',
      ServerID: 23,
      MessageStream: 'outbound',
      MessageID: randomUUID(),
      Recipient: email,
      Tag: 'auto_renewal_notice',
      DeliveredAt: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      Details: 'smtp;250 2.0.0 OK',
      Metadata: { notice_correlation: echoed },
    };
    const hook = await context.request.post('/api/webhooks/postmark', {
      headers: postmarkHeaders(seed.webhooks.keys),
      data: Buffer.from(JSON.stringify(delivery)),
    });
    expect(hook.status(), await hook.text()).toBe(200);
    expect(await hook.json()).toMatchObject({ received: 1, stored: 1 });

    // The customer opens the link from the email and asks to cancel, with the code from it.
    const link = recipientLinkIn(received.raw);
    const code = oneTimeCodeIn(received.raw);
    if (!link || !code) throw new Error('the email carries no recipient link or no code');
    const customer = await context.newPage();
    expect((await customer.goto(link))?.status()).toBe(200);
    await customer.getByTestId('code-input').fill(code);
    await customer.getByTestId('cancel-button').click();
    await expect(customer.getByTestId('cancel-requested')).toBeVisible();
    await snap(customer, testInfo, 'evidence-recipient-cancelled');

    // The worker's pass chains and signs what was written (nothing here calls the chainer).
    const api = await apiAs('admin');
    const minted = await api.post('/api/console/tokens', {
      headers: { origin: baseURL ?? '' },
      data: { name: `evidence reader ${subscription}`, reason: 'e2e: the evidence pack over the producer API', scopes: ['notices:read'] },
    });
    expect(minted.status(), await minted.text()).toBe(201);
    const reader = { authorization: `Bearer ${((await minted.json()) as { data: { token: string } }).data.token}` };
    const kinds = ['notice.sent', 'provider.event', 'recipient.page_view', 'recipient.cancel_request'];
    const seen: { pack?: EvidencePack } = {};
    await expect
      .poll(
        async () => {
          const response = await context.request.get(`/api/v1/notices/${job.id}/evidence`, { headers: reader });
          if (response.status() !== 200) return `HTTP ${String(response.status())}`;
          const pack = (await response.json()) as EvidencePack;
          seen.pack = pack;
          return pack.unsignedEntries === 0 && kinds.every((kind) => pack.entries.some((entry) => entry.kind === kind)) ? 'signed' : 'not yet';
        },
        { timeout: 30_000 },
      )
      .toBe('signed');

    // The console: support's lookup, the notice's "Evidence pack" button.
    const support = await pageAs('support');
    await support.goto(`/lookup?q=${encodeURIComponent(email)}`);
    const card = support.locator(`[data-testid="notice-card"][data-notice-key="${notice.noticeKey}"]`);
    await expect(card.getByTestId('evidence-pack')).toBeVisible();
    await snap(support, testInfo, 'evidence-lookup');
    const [download] = await Promise.all([support.waitForEvent('download'), card.getByTestId('evidence-pack').click()]);
    const consoleFile = path.join(dir, 'console.json');
    await download.saveAs(consoleFile);
    const fromConsole = JSON.parse(readFileSync(consoleFile, 'utf8')) as EvidencePack;

    // The CLI, against the same database.
    const cliFile = path.join(dir, 'cli.json');
    const exported = await ledger(['evidence', 'export', '--notice', job.id, '--out', cliFile], { PUBLIC_BASE_URL: baseURL ?? '' });
    expect(exported.code, exported.stderr).toBe(0);
    const fromCli = JSON.parse(readFileSync(cliFile, 'utf8')) as EvidencePack;

    // The same pack three times. What may differ: exportedAt (each export's clock); every other field is compared.
    const apiPack = (await (await context.request.get(`/api/v1/notices/${job.id}/evidence`, { headers: reader })).json()) as EvidencePack;
    const { exportedAt: apiAt, ...apiRest } = apiPack;
    const { exportedAt: consoleAt, ...consoleRest } = fromConsole;
    const { exportedAt: cliAt, ...cliRest } = fromCli;
    for (const at of [apiAt, consoleAt, cliAt]) expect(Number.isNaN(Date.parse(at))).toBe(false);
    expect(consoleRest).toEqual(apiRest);
    expect(cliRest).toEqual(apiRest);
    // And the pack did not change while it was taken: the first API answer that was whole is this one too.
    expect({ ...seen.pack, exportedAt: apiAt }).toEqual(apiPack);
    expect(apiRest.noticeKey).toBe(notice.noticeKey);
    expect(apiRest.keysUrl).toBe(`${baseURL ?? ''}/.well-known/notice-ledger/keys.json`);
    expect(apiRest.entries.map((entry) => entry.entryHash)).toEqual(fromCli.entries.map((entry) => entry.entryHash));
    expect([...new Set(apiRest.entries.map((entry) => entry.kind))].sort()).toEqual([...kinds].sort());
    const sent = apiRest.entries.find((entry) => entry.kind === 'notice.sent');
    if (!sent) throw new Error('no notice.sent entry');
    expect(JSON.parse(sent.body)).toMatchObject({ sending: { outcome: 'accepted', messageId: `<${correlation}@notices.example.com>` } });
    // The rules the window came from, as the planner referenced them (id@version), with their title and source.
    const sentBody = JSON.parse(sent.body) as { window: { rules: { id: string; version?: number; sourceUrl?: string }[] } };
    expect(sentBody.window.rules).toContainEqual(
      expect.objectContaining({ id: 'US-CA/arl-annual@1', version: 1, sourceUrl: expect.stringMatching(/^https:/) }),
    );

    // verify: exit 0 on the CLI's file (keys from its keysUrl, served by next start), and on the console's download too.
    for (const file of [cliFile, consoleFile]) {
      const verified = await ledger(['evidence', 'verify', file], {});
      expect(verified.code, verified.stderr).toBe(0);
      expect(verified.stdout).toContain(`the pack holds: ${String(apiRest.entries.length)} entries`);
    }

    // One flipped bit inside the send's signed body: non-zero, the entry named.
    const bytes = readFileSync(cliFile);
    const bodyAt = bytes.indexOf('"body": "', bytes.indexOf('"kind": "notice.sent"', bytes.indexOf('"entries": [')));
    expect(bodyAt).toBeGreaterThan(0);
    // A letter inside a word (never the letter of an escape such as \n): the file stays JSON, only the entry changes.
    const letter = (index: number) => /[a-z]/.test(String.fromCharCode(bytes[index] ?? 0));
    let at = bodyAt + 40;
    while (!(letter(at) && letter(at - 1) && letter(at - 2))) at += 1;
    bytes[at] = (bytes[at] ?? 0) ^ 0x20;
    const flippedFile = path.join(dir, 'flipped.json');
    writeFileSync(flippedFile, bytes);
    const flipped = await ledger(['evidence', 'verify', flippedFile], {});
    expect(flipped.code).not.toBe(0);
    expect(flipped.stderr).toContain(`chain entry ${String(sent.seq)} (notice.sent): its content does not match its hash`);
    await context.close();
  } finally {
    await worker.stop();
    await sink.stop();
  }
});

/** `npm run ledger -- …` as an operator runs it, with the e2e run's settings (DATABASE_URL, NOTICE_KEY_SECRET). */
function ledger(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'ledger', '--', ...args], {
      cwd: process.cwd(),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
