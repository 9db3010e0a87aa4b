import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listAuditForTargets } from '@/db/queries/audit';
import { failJob } from '@/db/queries/jobs';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { getReplay } from '@/db/queries/replays';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createPgBossQueue, type PgBossQueue } from '@/lib/queue/pgboss';
import { decideReplay, startReplay } from '@/lib/replay/service';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { oneTimeCodeIn, recipientLinkIn } from '@/testing/recipient';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { snapshotTables } from '@/test/fuzz/table-snapshot';
import { spawnWorker, type WorkerProcess } from '@/testing/worker-process';
import { bulkRetryFailures, loadFailuresPage, retryFailedNotice } from './failures';

/**
 * A person acts on failed notices, through the real send path: a worker process on pg-boss, the
 * SMTP sink, the console's services. A failed notice retried by on-call goes out once, with the
 * first mail's one-time code and link (the ledger row was released and the claim takes it over);
 * a retry the rules refuse changes nothing; a bulk retry runs at once below the threshold and
 * waits for a second person above it (the replay four-eyes path).
 */

const H = 3_600_000;
let t: TestDatabase;
let sink: SmtpSink;
let queue: PgBossQueue;
let worker: WorkerProcess;
const oncall = { id: randomUUID(), email: 'oncall@example.test', role: 'oncall' as const };
const manager = { id: randomUUID(), email: 'manager@example.test', role: 'manager' as const };
const publisher = () => Promise.resolve(queue);

beforeAll(async () => {
  t = await createTestDatabase();
  sink = await startSmtpSink();
  queue = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 10_000 });
  await queue.start();
  worker = spawnWorker({
    DATABASE_URL: t.url,
    SMTP_URL: sink.url,
    WORKER_CONCURRENCY: '2',
    RETRY_BASE: '1s',
    REPLAY_EVERY: '100ms',
    PUBLIC_BASE_URL: 'https://notices.test',
    RATE_LIMIT_PER_DOMAIN: '1000',
  });
  await worker.ready;
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await queue?.stop();
  await sink?.stop();
  await t?.drop();
});

const waitFor = (check: () => Promise<void> | void) => vi.waitFor(check, { timeout: 20_000, interval: 100 });

describe('retrying a failed notice', () => {
  it('on-call retries it: sent once at the sink with the first mail’s one-time code and link, audited', async () => {
    const job = await insertTestJob(t.db);
    const corr = correlationOf(job.noticeKey);
    sink.setFault({ kind: 'reject', code: 550, times: 1 });
    await queue.publish({ jobId: job.id });
    await waitFor(async () => expect((await readJob(t.db, job.id)).state).toBe('failed'));
    const first = sink.rejections().find((r) => r.correlation === corr);
    const firstCode = oneTimeCodeIn(first?.raw ?? '');
    const firstLink = recipientLinkIn(first?.raw ?? '');
    expect(firstCode).toMatch(/^[A-Z2-9]{10}$/);
    expect(firstLink).toBeTruthy();
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'released', oneTimeCode: firstCode });

    const page = await loadFailuresPage(t.db, { now: new Date(), input: { kind: 'failed' }, approvalAbove: 100 });
    expect(page.rows.find((row) => row.id === job.id)).toMatchObject({
      kind: 'failed',
      retryable: true,
      reason: 'Failed: the mail server refused it (SMTP 550)',
    });

    const retried = await retryFailedNotice(t.db, { id: job.id, reason: 'the relay rejected it by mistake', actor: oncall.email, publisher });
    expect(retried).toMatchObject({ ok: true, data: { id: job.id, state: 'pending' } });
    await waitFor(() => expect(sink.countByCorrelation(corr)).toBe(1));
    const sent = sink.messages().find((m) => m.correlation === corr);
    expect(oneTimeCodeIn(sent?.raw ?? '')).toBe(firstCode);
    expect(recipientLinkIn(sent?.raw ?? '')).toBe(firstLink);
    await waitFor(async () => expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' }));
    const audit = await listAuditForTargets(t.db, { targetIds: [job.id] });
    expect(audit.find((row) => row.action === 'failure.retry')).toMatchObject({
      actor: oncall.email,
      reason: 'the relay rejected it by mistake',
      before: { state: 'failed', lastErrorClass: 'smtp_550', ledgerState: 'released' },
    });

    // Sent now: a second retry is refused in words, and nothing changes.
    const before = await snapshotTables(t.pool);
    const again = await retryFailedNotice(t.db, { id: job.id, reason: 'once more', actor: oncall.email, publisher });
    expect(again).toMatchObject({ ok: false, refusal: { kind: 'conflict', code: 'not_failed' } });
    expect(again.ok ? '' : again.refusal.message).toContain('already sent');
    expect(await snapshotTables(t.pool)).toEqual(before);
  }, 60_000);

  it('refuses a failed notice whose window closed, and an unknown one, changing nothing', async () => {
    const closed = await insertTestJob(t.db, { dueAt: new Date(Date.now() - 3 * H), deadlineAt: new Date(Date.now() - H) });
    await failJob(t.db, { jobId: closed.id, errorClass: 'smtp_550' });
    const before = await snapshotTables(t.pool);
    const late = await retryFailedNotice(t.db, { id: closed.id, reason: 'try anyway', actor: oncall.email, publisher });
    expect(late).toMatchObject({ ok: false, refusal: { kind: 'conflict', code: 'window_closed' } });
    expect(late.ok ? '' : late.refusal.message).toContain('never sent late');
    const unknown = await retryFailedNotice(t.db, { id: randomUUID(), reason: 'try anyway', actor: oncall.email, publisher });
    expect(unknown).toMatchObject({ ok: false, refusal: { kind: 'not_found' } });
    expect(await snapshotTables(t.pool)).toEqual(before);
    const page = await loadFailuresPage(t.db, { now: new Date(), input: { kind: 'failed' }, approvalAbove: 100 });
    expect(page.rows.find((row) => row.id === closed.id)).toMatchObject({ retryable: false });
  });
});

/** Failed notices of one error class, failed now (the real statement the send path uses). */
async function failedNotices(count: number, errorClass: string) {
  const jobs = [];
  for (let index = 0; index < count; index += 1) {
    const job = await insertTestJob(t.db);
    await failJob(t.db, { jobId: job.id, errorClass });
    jobs.push(job);
  }
  return jobs;
}

describe('bulk retry by reason and time range', () => {
  it('below the threshold it runs at once, audited with its counts; other reasons and closed windows stay failed', async () => {
    const from = new Date(Date.now() - 1_000).toISOString();
    const jobs = await failedNotices(3, 'smtp_554');
    const other = (await failedNotices(1, 'render_failed'))[0];
    const closed = await insertTestJob(t.db, { dueAt: new Date(Date.now() - 3 * H), deadlineAt: new Date(Date.now() - 1) });
    await failJob(t.db, { jobId: closed.id, errorClass: 'smtp_554' });
    const to = new Date(Date.now() + 1_000).toISOString();
    const filter = { errorClass: 'smtp_554', from, to };

    const preview = await bulkRetryFailures(t.db, {
      input: { filter, reason: 'preview only', preview: true },
      actor: oncall,
      publisher,
      approvalAbove: 3,
    });
    expect(preview).toEqual({ ok: true, data: { state: 'preview', matched: 3, approvalAbove: 3, needsApproval: false } });
    const run = await bulkRetryFailures(t.db, {
      input: { filter, reason: 'relay outage 02:10-03:05 is over' },
      actor: oncall,
      publisher,
      approvalAbove: 3,
    });
    expect(run).toEqual({ ok: true, data: { state: 'retried', matched: 3, retried: 3 } });
    for (const job of jobs) await waitFor(() => expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(1));
    expect(other ? (await readJob(t.db, other.id)).state : null).toBe('failed');
    expect((await readJob(t.db, closed.id)).state).toBe('failed');
    const audit = await listAuditForTargets(t.db, { targetIds: ['smtp_554'] });
    expect(audit.find((row) => row.action === 'failure.bulk_retry')).toMatchObject({ actor: oncall.email, after: { retried: 3, skipped: 0 } });
    // Each notice's own timeline says who retried it and why.
    const perNotice = await listAuditForTargets(t.db, { targetIds: jobs.map((job) => job.id) });
    expect(perNotice.filter((row) => row.action === 'failure.retry').map((row) => row.reason)).toEqual(Array(3).fill('relay outage 02:10-03:05 is over'));
  }, 60_000);

  it('above the threshold it waits for a second person: the requester cannot approve it, a manager does, and the run sends each once', async () => {
    const from = new Date(Date.now() - 1_000).toISOString();
    const jobs = await failedNotices(3, 'smtp_421');
    const filter = { errorClass: 'smtp_421', from, to: new Date(Date.now() + 1_000).toISOString() };
    const requested = await bulkRetryFailures(t.db, { input: { filter, reason: 'relay outage is over' }, actor: oncall, publisher, approvalAbove: 2 });
    if (!requested.ok || requested.data.state !== 'awaiting_approval') throw new Error(`expected a request: ${JSON.stringify(requested)}`);
    expect(requested.data.matched).toBe(3);
    const { replayId } = requested.data;
    for (const job of jobs) expect((await readJob(t.db, job.id)).state).toBe('failed');

    const own = await decideReplay(t.db, { id: replayId, actor: { ...oncall, role: 'manager' }, decision: 'approve', reason: 'my own' });
    expect(own).toMatchObject({ ok: false, refusal: { code: 'four_eyes' } });
    expect(await decideReplay(t.db, { id: replayId, actor: manager, decision: 'approve', reason: 'outage confirmed' })).toMatchObject({
      ok: true,
    });
    expect(await startReplay(t.db, { id: replayId, actor: manager, reason: 'go' })).toMatchObject({ ok: true });
    for (const job of jobs) await waitFor(() => expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(1));
    await waitFor(async () => expect((await getReplay(t.db, { id: replayId }))?.state).toBe('completed'));
  }, 60_000);
});
