import { randomBytes } from 'node:crypto';
import { createDb, createPool } from '@/db/client';
import type { NoticeFact } from '@/lib/windows/notice-fact';
import { correlationOf } from '@/lib/ledger/notice-key';
import { startSmtpSink } from '@/testing/smtp-sink';
import { spawnWorker } from '@/testing/worker-process';
import { insertAttempt, insertJob, insertLedger, insertUser } from '@/e2e/fixtures/console-data';
import { expect, signInState, snap, test } from '@/e2e/fixtures/test';

const HOUR = 3_600_000;

/**
 * The replay journey end to end, with the real worker process and a real SMTP peer: a window
 * whose notices all went out is replayed; the dry run says 0 new, four-eyes holds, a manager
 * approves, the run publishes every wake-up, the worker suppresses every one of them, the
 * sink receives none of them, and the report's duplicate count grows by exactly that many.
 */
test('operator replays an already-delivered window: 0 new, four-eyes, every wake-up suppressed, nothing sent, report +N', async ({
  browser,
  baseURL,
  pageAs,
  apiAs,
  sql,
}, testInfo) => {
  test.setTimeout(120_000);
  const secret = process.env.NOTICE_KEY_SECRET ?? '';
  const source = `e2e-replay-${randomBytes(3).toString('hex')}`;
  const pool = createPool(process.env.DATABASE_URL ?? '', { max: 2 });
  const db = createDb(pool);
  const keys: string[] = [];
  const now = Date.now();
  for (let i = 0; i < 5; i += 1) {
    const fact: NoticeFact = { type: 'renewal_notice_t72', identity: { subscription_id: `sub_${source}_${i}`, period_start: '2026-12-04' }, revision: 0 };
    const dueAt = new Date(now - 26 * HOUR + i * 60_000);
    const job = await insertJob(db, {
      fact,
      secret,
      recipientEmail: `r${i}@${source}.example.com`,
      dueAt,
      deadlineAt: new Date(dueAt.getTime() + 40 * HOUR),
      state: 'sent',
      source,
    });
    await insertLedger(db, {
      key: job.key,
      jobId: job.id,
      fact,
      state: 'sent',
      claimedAt: new Date(dueAt.getTime() + 1_000),
      sentAt: new Date(dueAt.getTime() + 1_200),
      recipientDomain: `${source}.example.com`,
    });
    await insertAttempt(db, { key: job.key, jobId: job.id, outcome: 'sent', startedAt: new Date(dueAt.getTime() + 1_200) });
    keys.push(job.key);
  }
  const operator2 = { email: `operator2-${source}@e2e.example.com`, password: 'operator2-e2e-password' };
  await insertUser(db, { email: operator2.email, role: 'operator', password: operator2.password });
  await pool.end();

  const sink = await startSmtpSink();
  const worker = spawnWorker({
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    NOTICE_KEY_SECRET: secret,
    SMTP_URL: sink.url,
    MESSAGE_ID_DOMAIN: 'notices.example.com',
    RATE_LIMIT_PER_DOMAIN: '1000',
  });
  try {
    const manager = await pageAs('manager');
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 24 * HOUR).toISOString().slice(0, 10);
    const reportUrl = `/reports?granularity=day&from=${today}&to=${tomorrow}`;
    const duplicatesTotal = async () => {
      await manager.goto(reportUrl);
      return Number(await manager.getByTestId('report-duplicates-suppressed').locator('tr.report-total td[data-column="Duplicates suppressed"]').innerText());
    };
    const before = await duplicatesTotal();

    // The operator dry-runs the window: nothing in it is new.
    const operator = await pageAs('operator');
    await operator.goto('/replays');
    await operator.getByLabel('Source / producer').fill(source);
    await operator.getByTestId('dry-run').click();
    await expect(operator.getByTestId('dry-run-total')).toHaveText('5');
    await expect(operator.getByTestId('dry-run-new-keys')).toHaveText('0');
    await expect(operator.getByTestId('dry-run-verdict')).toContainText('already delivered');
    await expect(operator.getByTestId('dry-run-verdict')).toContainText('Stopping is the safe choice');
    await snap(operator, testInfo, 'replay-dry-run');
    await operator.locator('#replay-reason').fill('Scheduler paused during the failover; re-enqueue to be safe');
    await operator.getByTestId('request-replay').click();
    await expect(operator.getByTestId('replay-message')).toContainText('Requested replay');
    const batchId = /Requested replay (replay-[0-9a-z-]+)/.exec(await operator.getByTestId('replay-message').innerText())?.[1] ?? '';
    const [replay] = await sql<{ id: string; state: string }>('select id, state from replays where batch_id = $1', [batchId]);
    if (!replay) throw new Error(`replay ${batchId} not found`);
    const row = operator.locator(`[data-batch="${batchId}"]`);
    await expect(row.getByTestId('replay-state')).toHaveText('requested');
    await expect(row.getByTestId(`approve-${replay.id}`)).toHaveCount(0);

    // A second operator: no approve button, and the server refuses (role). The requester: refused (four-eyes).
    const storage = await signInState({ baseURL: baseURL ?? '', email: operator2.email, password: operator2.password });
    const context = await browser.newContext({ storageState: storage });
    const other = await context.newPage();
    await other.goto('/replays');
    await expect(other.locator(`[data-batch="${batchId}"]`)).toBeVisible();
    await expect(other.getByTestId(`approve-${replay.id}`)).toHaveCount(0);
    const byOther = await other.request.post('/api/console/replays/decide', { data: { id: replay.id, decision: 'approve', reason: 'looks fine to me' } });
    expect(byOther.status()).toBe(403);
    expect(await byOther.json()).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringMatching(/may not replay\.approve/) } });
    await context.close();
    // The requesting operator is refused too: by role at the guard, before the four-eyes rule is reached.
    const requesterApi = await apiAs('operator');
    const own = await requesterApi.post('/api/console/replays/decide', { data: { id: replay.id, decision: 'approve', reason: 'my own' } });
    expect(own.status()).toBe(403);
    expect((await sql<{ state: string; decided_by: string | null }>('select state, decided_by from replays where id = $1', [replay.id]))[0]).toEqual({
      state: 'requested',
      decided_by: null,
    });

    // Four-eyes proper: a manager who requests a replay cannot approve it; a different manager (admin) decides.
    const managerApi = await apiAs('manager');
    const managerRequest = await managerApi.post('/api/console/replays', { data: { filter: { source }, reason: 'manager asks for the same window' } });
    expect(managerRequest.status()).toBe(201);
    const managerReplayId = ((await managerRequest.json()) as { data: { id: string } }).data.id;
    const ownByManager = await managerApi.post('/api/console/replays/decide', { data: { id: managerReplayId, decision: 'approve', reason: 'mine' } });
    expect(ownByManager.status()).toBe(403);
    expect(await ownByManager.json()).toMatchObject({ ok: false, error: { message: expect.stringMatching(/Four-eyes rule: you requested this replay/) } });
    expect((await sql<{ state: string }>('select state from replays where id = $1', [managerReplayId]))[0]?.state).toBe('requested');
    const adminApi = await apiAs('admin');
    expect(
      (
        await adminApi.post('/api/console/replays/decide', { data: { id: managerReplayId, decision: 'reject', reason: 'duplicate of the operator request' } })
      ).status(),
    ).toBe(200);

    // A manager approves.
    await manager.goto('/replays');
    await manager.getByTestId(`reason-${replay.id}`).fill('Dry run shows nothing new; safe, the ledger refuses them');
    await manager.getByTestId(`approve-${replay.id}`).click();
    await expect(manager.locator(`[data-batch="${batchId}"]`).getByTestId('replay-state')).toHaveText('approved');

    // The operator runs it; the worker takes every wake-up and suppresses it.
    await worker.ready;
    await operator.reload();
    await operator.getByTestId(`run-${replay.id}`).click();
    await expect(row.getByTestId('progress-published')).toHaveText('5', { timeout: 30_000 });
    await expect(row.getByTestId('progress-suppressed')).toHaveText('5', { timeout: 45_000 });
    await expect(row.getByTestId('progress-sent')).toHaveText('0');
    await expect(row.getByTestId('replay-state')).toHaveText('completed');
    await snap(operator, testInfo, 'replay-completed');

    const attempts = await sql<{ outcome: string; count: number }>(
      'select outcome, count(*)::int as count from delivery_attempts where batch_id = $1 group by outcome',
      [batchId],
    );
    expect(attempts).toEqual([{ outcome: 'discarded', count: 5 }]);
    for (const key of keys) expect(sink.countByCorrelation(correlationOf(key))).toBe(0);
    const audit = await sql<{ action: string }>("select action from audit_log where target_id = $1 and action like 'replay.%' order by id", [batchId]);
    expect(audit.map((entry) => entry.action)).toEqual(['replay.request', 'replay.approve', 'replay.run', 'replay.complete']);

    expect(await duplicatesTotal()).toBe(before + 5);
    await snap(manager, testInfo, 'report-after-replay');
  } finally {
    await worker.stop();
    await sink.stop();
  }
});
