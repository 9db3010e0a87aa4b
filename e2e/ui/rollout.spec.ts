import { randomBytes } from 'node:crypto';
import { createDb, createPool } from '@/db/client';
import { startSmtpSink } from '@/testing/smtp-sink';
import { metricValue, spawnWorker, type WorkerProcess } from '@/testing/worker-process';
import { insertJob } from '@/e2e/fixtures/console-data';
import type { Page } from '@playwright/test';
import { expect, snap, test } from '@/e2e/fixtures/test';

/**
 * The guided rollout through `next start`, with two real worker processes: an operator switches
 * to shadow (every page shows it, both workers apply it), asking to enforce is refused with the
 * count of sent notices that have no ledger row, the backfill's dry run and run are audited with
 * their counts, the operator asks again and cannot approve their own request, and a manager
 * approves: the banner goes and both workers enforce within seconds.
 */

test.use({ viewport: { width: 1400, height: 900 } });

const HOUR = 3_600_000;

/** Full-page screenshots from the top: the sticky header would otherwise be drawn where the page was scrolled. */
const top = (page: Page) => page.evaluate(() => window.scrollTo(0, 0));

const modeOf = async (worker: WorkerProcess) => {
  const text = await worker.scrape();
  return metricValue(text, 'notice_ledger_mode', { mode: 'enforce' }) === 1
    ? 'enforce'
    : metricValue(text, 'notice_ledger_mode', { mode: 'shadow' }) === 1
      ? 'shadow'
      : 'none';
};

test('shadow → backfill → enforce: the banner, the refused enforce with its count, the audited backfill, a second person approves', async ({
  pageAs,
  apiAs,
  sql,
  seed,
}, testInfo) => {
  test.setTimeout(150_000);
  const secret = process.env.NOTICE_KEY_SECRET ?? '';
  const tag = randomBytes(3).toString('hex');
  const startedAt = new Date();
  await sql('delete from runtime_controls');
  const sink = await startSmtpSink();
  const workers: WorkerProcess[] = [];
  try {
    // 1. Shadow, from the console: the banner is on every page.
    const operator = await pageAs('operator');
    await operator.goto('/rollout');
    await expect(operator.getByTestId('rollout-mode')).toHaveText('enforce');
    await expect(operator.getByTestId('shadow-mode')).toHaveCount(0);
    await operator.getByTestId('rollout-reason').fill('Start the rollout: shadow for one renewal cycle');
    await operator.getByTestId('rollout-shadow').click();
    await expect(operator.getByTestId('rollout-mode')).toHaveText('shadow');
    for (const path of ['/', '/lookup', '/controls']) {
      await operator.goto(path);
      await expect(operator.getByTestId('shadow-mode')).toContainText('Shadow mode since');
    }
    await top(operator);
    await snap(operator, testInfo, 'rollout-shadow-banner');

    // Two workers started with LEDGER_MODE=enforce (the default) apply the stored shadow mode.
    for (let i = 0; i < 2; i += 1)
      workers.push(
        spawnWorker({
          DATABASE_URL: process.env.DATABASE_URL ?? '',
          NOTICE_KEY_SECRET: secret,
          SMTP_URL: sink.url,
          MESSAGE_ID_DOMAIN: 'notices.example.com',
          RUNTIME_CONTROLS_REFRESH: '250ms',
        }),
      );
    await Promise.all(workers.map((worker) => worker.ready));
    for (const worker of workers) await expect.poll(() => modeOf(worker)).toBe('shadow');

    // 2. Notices the old pipeline sent, with no ledger row: enforcing would send them again.
    const pool = createPool(process.env.DATABASE_URL ?? '', { max: 2 });
    const db = createDb(pool);
    for (let i = 0; i < 3; i += 1) {
      await insertJob(db, {
        fact: { type: 'renewal_notice_t72', identity: { subscription_id: `sub_rollout_${tag}_${i}`, period_start: '2027-02-01' }, revision: 0 },
        secret,
        recipientEmail: `rollout${i}@${tag}.example.com`,
        dueAt: new Date(Date.now() - 30 * HOUR),
        deadlineAt: new Date(Date.now() + 18 * HOUR),
        state: 'sent',
        source: 'old-pipeline',
      });
    }
    await pool.end();
    const [{ count: unledgered } = { count: 0 }] = await sql<{ count: number }>(
      `select count(*)::int as count from reminder_jobs j where j.state = 'sent' and not exists (select 1 from notice_ledger l where l.notice_key = j.notice_key)`,
    );
    expect(unledgered).toBeGreaterThanOrEqual(3);
    await operator.goto('/rollout');
    await expect(operator.getByTestId('rollout-treated-as-new')).toHaveText(String(unledgered));
    await expect(operator.getByTestId('rollout-days')).toContainText('0 / 365');
    await operator.getByTestId('rollout-reason').fill('One renewal cycle in shadow, duplicates as expected');
    await operator.getByTestId('rollout-request-enforce').click();
    await expect(operator.getByTestId('rollout-error')).toContainText(`Enforcing now would treat ${unledgered} notices already sent as new`);
    await top(operator);
    await snap(operator, testInfo, 'rollout-enforce-refused');
    expect(await sql(`select name from runtime_controls where name = 'ledger_mode_request'`)).toEqual([]);

    // 3. Backfill: the dry run counts new and existing keys and writes nothing; the run writes; both audited.
    await operator.getByTestId('rollout-backfill-reason').fill('See what the backfill would write');
    await operator.getByTestId('rollout-backfill-dry-run').click();
    await expect(operator.getByTestId('rollout-backfill-result')).toContainText(`would write ${unledgered} new key(s)`);
    // Already in the ledger: the seed's sent notices (their claims), left as they are.
    const ledgered = Number(/(\d+) already in the ledger/.exec(await operator.getByTestId('rollout-backfill-result').innerText())?.[1]);
    expect(ledgered).toBeGreaterThan(0);
    await expect(operator.getByTestId('rollout-treated-as-new')).toHaveText(String(unledgered));
    await operator.getByTestId('rollout-backfill-reason').fill('Backfill the old pipeline before enforcing');
    await operator.getByTestId('rollout-backfill-run').click();
    await expect(operator.getByTestId('rollout-backfill-result')).toContainText(`wrote ${unledgered} new key(s)`);
    await expect(operator.getByTestId('rollout-treated-as-new')).toHaveText('0');
    await expect(operator.getByTestId('rollout-backfill-last')).toContainText(
      // The seed's operator (pageAs signs in as them): other specs add operators of their own.
      `Last: run by ${seed.users.operator.email}`,
    );
    await top(operator);
    await snap(operator, testInfo, 'rollout-backfilled');
    const backfillAudit = await sql<{ action: string; after: Record<string, unknown> }>(
      `select action, after from audit_log where action like 'ledger.backfill%' and at >= $1 order by id`,
      [startedAt],
    );
    expect(backfillAudit).toEqual([
      { action: 'ledger.backfill_dry_run', after: { total: unledgered + ledgered, inserted: 0, newKeys: unledgered, existing: ledgered, dryRun: true } },
      {
        action: 'ledger.backfill',
        after: { total: expect.any(Number), inserted: unledgered, newKeys: unledgered, existing: expect.any(Number), dryRun: false },
      },
    ]);

    // 4. Ask again: it waits for a second person; the operator cannot approve it.
    await operator.getByTestId('rollout-reason').fill('One renewal cycle in shadow, backfilled');
    await operator.getByTestId('rollout-request-enforce').click();
    await expect(operator.getByTestId('rollout-request')).toContainText('Waiting for a second person');
    await expect(operator.getByTestId('rollout-approve')).toHaveCount(0);
    await expect(operator.getByTestId('rollout-request-enforce')).toHaveCount(0);
    const ownApproval = await (await apiAs('operator')).post('/api/console/rollout/decide', { data: { decision: 'approve', reason: 'my own request' } });
    expect(ownApproval.status()).toBe(403);
    for (const worker of workers) expect(await modeOf(worker)).toBe('shadow');

    // 5. A manager approves: the banner goes, and both running workers enforce within seconds.
    const manager = await pageAs('manager');
    await manager.goto('/rollout');
    await expect(manager.getByTestId('shadow-mode')).toBeVisible();
    await top(manager);
    await snap(manager, testInfo, 'rollout-awaiting-approval');
    await manager.getByTestId('rollout-reason').fill('Duplicates as expected, backfill done');
    await manager.getByTestId('rollout-approve').click();
    await expect(manager.getByTestId('rollout-mode')).toHaveText('enforce');
    const approvedAt = Date.now();
    await expect(manager.getByTestId('shadow-mode')).toHaveCount(0);
    for (const worker of workers) await expect.poll(() => modeOf(worker), { timeout: 10_000 }).toBe('enforce');
    expect(Date.now() - approvedAt).toBeLessThan(10_000);
    await top(manager);
    await snap(manager, testInfo, 'rollout-enforced');
    const modeAudit = await sql<{ action: string }>(`select action from audit_log where action like 'ledger_mode.%' and at >= $1 order by id`, [startedAt]);
    expect(modeAudit.map((row) => row.action)).toEqual(['ledger_mode.shadow', 'ledger_mode.enforce_request', 'ledger_mode.enforce']);
  } finally {
    for (const worker of workers) await worker.stop();
    await sink.stop();
    await sql('delete from runtime_controls');
    await sql(`delete from notice_ledger where source = 'backfill' and updated_at >= $1`, [startedAt]);
    await sql(`delete from reminder_jobs where source = 'old-pipeline' and recipient_email like $1`, [`%@${tag}.example.com`]);
  }
});
