import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { evidence } from '@/db/schema';
import { claimParamsFor, insertTestJob, readJob } from '@/testing/jobs';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import type { JobRow } from '@/db/schema';
import { claimNotice } from '@/db/queries/ledger/claim';
import { commitSent } from '@/db/queries/ledger/commit';
import { resolveClaims } from '@/db/queries/ledger/resolve';
import { createLogger } from '@/lib/log';
import { correlationOf } from '@/lib/ledger/notice-key';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { createMailTransport } from '@/lib/mail/transport';
import type { HandlerResult } from '@/lib/queue/types';
import { createWakeupHandler } from './handle-wakeup';
import { resolveEvidence } from '@/lib/planning/evidence';
import { createDomainRateLimiter } from './rate-limit';
import { cancelReminder } from '@/lib/planning/cancel-notice';
import { activeNoticeConfig } from '@/lib/windows/active';

/**
 * The in-flight race (issue 15): a producer's cancel, or an evidence resolve, that commits while
 * a worker is between loading the job and claiming it. A real interleaving, no sleeps: the
 * worker takes its per-domain token between the load and the claim, from a row in PostgreSQL;
 * the test holds that row's lock, waits until the worker's backend is seen waiting on it (it has
 * loaded the pending job), commits the cancel through the production function, then lets go.
 */
let t: TestDatabase;
let sink: SmtpSink;

beforeAll(async () => {
  t = await createTestDatabase();
  sink = await startSmtpSink();
});

afterAll(async () => {
  await sink?.stop();
  await t?.drop();
});

async function handlerFor({ smtpTimeoutMs = 5_000, now }: { smtpTimeoutMs?: number; now?: () => Date } = {}) {
  // A limiter of its own, without spare tokens: its first take for the domain goes to the table.
  const rateLimiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 });
  const mail = createMailTransport({ smtpUrl: sink.url, timeoutMs: smtpTimeoutMs, from: 'Notices <n@notices.test>', messageIdDomain: 'notices.test' });
  return createWakeupHandler({
    db: t.db,
    mail,
    rateLimiter,
    settings: {
      mode: 'enforce',
      noticeConfig: activeNoticeConfig().config,
      retryBaseMs: 1_000,
      retryCapMs: 10_000,
      maxAttempts: 3,
      secret: process.env.NOTICE_KEY_SECRET ?? '',
      cancelBaseUrl: 'https://notices.test',
      maxTokenWaitMs: 1_000,
    },
    workerId: 'race-worker',
    logger: createLogger('test', 'silent'),
    now,
  });
}

/** Holds the domain's token row locked until `release`; the worker blocks on it after its load. */
async function holdDomainToken(domain: string): Promise<{ release: () => Promise<void> }> {
  const key = `domain:${domain}`;
  await t.pool.query('insert into rate_limit_domains (key, points, expire) values ($1, 0, null) on conflict (key) do nothing', [key]);
  const client: pg.PoolClient = await t.pool.connect();
  await client.query('begin');
  await client.query('select 1 from rate_limit_domains where key = $1 for update', [key]);
  return {
    release: async () => {
      await client.query('rollback');
      client.release();
    },
  };
}

/** Resolves once some backend waits for a lock while touching the token table. */
async function workerWaitsOnToken(): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { rows } = await t.pool.query<{ waiting: number }>(
      `select count(*)::int as waiting from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like '%rate_limit_domains%'`,
    );
    if ((rows[0]?.waiting ?? 0) > 0) return;
    if (Date.now() > deadline) throw new Error('the worker never reached its token wait');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function delivery(jobId: string) {
  return { wakeup: { jobId }, messageId: `race-${jobId}`, signal: new AbortController().signal };
}

describe('a cancel or resolve committed between the load and the claim', () => {
  it('a cancel committed after the load means no claim and no send', async () => {
    const job = await insertTestJob(t.db, { recipientEmail: 'race@cancel.test' });
    const barrier = await holdDomainToken('cancel.test');
    const handle = await handlerFor();
    let settled: Promise<HandlerResult>;
    try {
      settled = handle(delivery(job.id));
      await workerWaitsOnToken();
      expect(await readJob(t.db, job.id)).toMatchObject({ state: 'pending' });
      const cancelled = await cancelReminder({ db: t.db, id: job.id, actor: 'producer:test', reason: 'customer cancelled', now: new Date() });
      expect(cancelled.kind).toBe('cancelled');
    } finally {
      await barrier.release();
    }
    expect(await settled).toEqual({ ack: true });

    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeNull();
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'cancelled', attempts: 0 });
    expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => [a.outcome, a.detail])).toEqual([['discarded', 'job_cancelled']]);
  });

  it('an evidence resolve committed after the load means no claim and no send', async () => {
    const ref = `exc-race-${uniqueSuffix()}`;
    await t.db.insert(evidence).values({ ref, kind: 'reconciliation_exception', state: 'open' });
    const job = await insertTestJob(t.db, {
      recipientEmail: 'race@resolve.test',
      evidenceRef: ref,
      fact: { type: 'payment_recovery', identity: { account_id: 'acct_race', reconciliation_id: 'rec_race', exception_id: ref }, revision: 0 },
    });
    const barrier = await holdDomainToken('resolve.test');
    const handle = await handlerFor();
    let settled: Promise<HandlerResult>;
    try {
      settled = handle(delivery(job.id));
      await workerWaitsOnToken();
      const resolved = await resolveEvidence({ db: t.db, ref, request: {}, actor: 'producer:test', now: new Date() });
      expect(resolved.suppressedJobIds).toEqual([job.id]);
    } finally {
      await barrier.release();
    }
    expect(await settled).toEqual({ ack: true });

    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeNull();
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'suppressed' });
  });

  it('a cancel after the claim is refused and says the notice may be on its way', async () => {
    const job = await insertTestJob(t.db, { recipientEmail: 'race@late.test' });
    // The SMTP peer stalls the message: the worker is between its claim and its commit.
    sink.setFault({ kind: 'stall', ms: 60_000, times: 1 });
    const handle = await handlerFor({ smtpTimeoutMs: 1_000 });
    const settled = handle(delivery(job.id));
    try {
      await waitFor(async () => (await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state === 'claimed');
      const refused = await cancelReminder({ db: t.db, id: job.id, actor: 'producer:test', reason: 'too late', now: new Date() });
      expect(refused).toMatchObject({ kind: 'conflict', message: expect.stringContaining('may already be on its way') });
    } finally {
      sink.setFault({ kind: 'none' });
    }
    expect(await settled).toEqual({ ack: true });
    // The refused cancel changed nothing: the claim's owner settles the job.
    expect((await readJob(t.db, job.id)).state).not.toBe('cancelled');
    expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => a.outcome)).not.toContain('discarded');
  });
});

describe('a duplicate delivery that loaded the job before another claimed it', () => {
  // RabbitMQ and pg-boss both hand out duplicates (a redelivery, a replay's wake-up). This one
  // loads the job pending, waits for its token, and by then the window has closed: missed — but
  // another delivery claimed the job meanwhile, in the window, and is sending it. Suppressing the
  // job under that claim left the ledger sent and the job suppressed when the claim committed
  // (CI 2026-12-03, chaos on RabbitMQ: "notices whose ledger and job disagree: 1").
  async function loadedThenClaimed({ claimMeanwhile }: { claimMeanwhile: boolean }) {
    const job = await insertTestJob(t.db, { recipientEmail: `race@${claimMeanwhile ? 'dup' : 'alone'}.test`, deadlineAt: new Date(Date.now() + 60_000) });
    let shift = 0;
    const handle = await handlerFor({ now: () => new Date(Date.now() + shift) });
    const barrier = await holdDomainToken(claimMeanwhile ? 'dup.test' : 'alone.test');
    let settled: Promise<HandlerResult>;
    const token = crypto.randomUUID();
    try {
      settled = handle(delivery(job.id));
      await workerWaitsOnToken();
      if (claimMeanwhile) {
        const claim = await claimAsOtherWorker(job, token);
        expect(claim).not.toBeNull();
      }
      // The token came after the window's deadline.
      shift = 120_000;
    } finally {
      await barrier.release();
    }
    expect(await settled).toEqual({ ack: true });
    return { job, token };
  }

  it('leaves the job to that claim: its commit makes ledger and job sent', async () => {
    const { job, token } = await loadedThenClaimed({ claimMeanwhile: true });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'claimed' });
    expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => [a.outcome, a.detail])).toEqual([['suppressed_duplicate', 'ledger_claimed']]);

    const owned = await commitAsOtherWorker(job, token);
    expect(owned).toBe(true);
    expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('sent');
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' });
  });

  it('the control: with no other claim, the closed window is missed', async () => {
    const { job } = await loadedThenClaimed({ claimMeanwhile: false });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'window_missed' });
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeNull();
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
  });
});

describe('a refusal that comes after the claim stopped being ours', () => {
  // The relay takes its time over DATA; on-call releases the stale claim for a resend and another
  // delivery takes it; then the relay says 550. The first worker's refusal must not fail the job
  // that now belongs to the second claim, or that claim's commit leaves ledger sent, job failed.
  it('records the refusal and leaves the job to the claim that holds it', async () => {
    const job = await insertTestJob(t.db, { recipientEmail: 'slow@released.test' });
    sink.setFault({ kind: 'stall', times: 1 });
    const handle = await handlerFor({ smtpTimeoutMs: 30_000 });
    const settled = handle(delivery(job.id));
    const token = crypto.randomUUID();
    try {
      await waitFor(async () => sink.stalled().some((message) => message.correlation === correlationOf(job.noticeKey)));
      const released = await resolveClaims(t.db, { keys: [job.noticeKey], resolution: { by: 'operator', action: 'release' } });
      expect(released.map((row) => row.state)).toEqual(['released']);
      const claim = await claimAsOtherWorker(job, token);
      expect(claim?.reclaimed).toBe(true);
    } finally {
      sink.setFault({ kind: 'none' });
      expect(sink.rejectStalled(550)).toBe(1);
    }
    expect(await settled).toEqual({ ack: true });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'claimed' });
    const attempts = await listAttemptsForJob(t.db, { jobId: job.id });
    expect(attempts.map((a) => [a.outcome, a.detail])).toEqual([['permanent_failure', 'claim_not_owned']]);

    const owned = await commitAsOtherWorker(job, token);
    expect(owned).toBe(true);
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' });
  });
});

/** Another delivery's claim of the job and its commit, through the production statements. */
function claimAsOtherWorker(job: JobRow, token: string) {
  const recipientDomain = job.recipientEmail?.split('@')[1] ?? 'unknown.test';
  return claimNotice(t.db, claimParamsFor(job, { claimToken: token, claimedBy: 'other-worker', recipientDomain, oneTimeCode: '123456' }));
}

function commitAsOtherWorker(job: JobRow, token: string) {
  return commitSent(t.db, {
    noticeKey: job.noticeKey,
    claimToken: token,
    providerMessageId: null,
    jobId: job.id,
    workerId: 'other-worker',
    startedAt: new Date(),
    queueMessageId: null,
    batchId: null,
    correlationId: correlationOf(job.noticeKey),
    claimToCommitMs: 5,
    mode: 'enforce',
  });
}

let counter = 0;
function uniqueSuffix(): string {
  counter += 1;
  return `${process.pid}-${counter}`;
}

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached within 15 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
