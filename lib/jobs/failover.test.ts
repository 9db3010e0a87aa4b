import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, createPool, type Db } from '@/db/client';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow, listQuarantined } from '@/db/queries/ledger/read';
import { ingestEvents, reconcileQuarantine } from '@/lib/events/ingest';
import { checkAfterFailover } from '@/lib/events/post-failover';
import type { NormalizedEvent } from '@/lib/events/types';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createLogger } from '@/lib/log';
import { createMailTransport } from '@/lib/mail/transport';
import type { Delivery } from '@/lib/queue/types';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { startTcpProxy, type TcpProxy } from '@/testing/tcp-proxy';
import { createWakeupHandler } from './handle-wakeup';
import { createDomainRateLimiter, type DomainRateLimiter } from './rate-limit';
import { connectionLost } from './send-path-statements';

/**
 * A database failover seen from the send path, with a real PostgreSQL behind a TCP proxy that
 * cuts one connection at the worst moment (testing/tcp-proxy.ts): the claim's or the result
 * commit's statement reaches the server and runs, and its answer never comes back — or the
 * connection dies before it ran. The worker cannot tell which; these tests pin what it does:
 * no claim seen committed → no send; a result it could not see committed → the claim is left
 * to quarantine and the provider's evidence. Then the post-failover check: a claim the new
 * primary lacks (asynchronous replication lost it) is found from the provider's event and
 * recorded sent, so the next wake-up sends nothing — and, as the control, without the check
 * that wake-up sends the notice a second time.
 */

const secret = process.env.NOTICE_KEY_SECRET ?? '';
let t: TestDatabase;
let sink: SmtpSink;
let limiter: DomainRateLimiter;
let proxy: TcpProxy;
let proxied: Db;
const clockMs = Date.parse('2026-12-02T12:00:00Z');

function handler(db: Db) {
  const mail = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'Notices <n@notices.test>', messageIdDomain: 'notices.test' });
  return createWakeupHandler({
    db,
    mail,
    rateLimiter: limiter,
    workerId: 'failover-test',
    logger: createLogger('failover-test', 'silent'),
    now: () => new Date(clockMs),
    settings: {
      mode: 'enforce',
      noticeConfig: activeNoticeConfig().config,
      retryBaseMs: 1_000,
      retryCapMs: 10_000,
      maxAttempts: 3,
      secret,
      cancelBaseUrl: 'https://notices.test',
      maxTokenWaitMs: 1_000,
    },
  });
}

const delivery = (jobId: string): Delivery => ({ wakeup: { jobId }, messageId: `m-${randomBytes(4).toString('hex')}`, signal: new AbortController().signal });
const newJob = () => insertTestJob(t.db, { dueAt: new Date(clockMs - 60_000), deadlineAt: new Date(clockMs + 48 * 3_600_000) });
const outcomes = async (jobId: string) => (await listAttemptsForJob(t.db, { jobId })).map((attempt) => attempt.outcome);

/** The relay's accepted event for a message it holds, as its webhook would bring it. */
function acceptedEvent(noticeKey: string): NormalizedEvent {
  return {
    provider: 'generic',
    eventId: `evt-${randomBytes(6).toString('hex')}`,
    type: 'accepted',
    rawType: 'accepted',
    correlationId: correlationOf(noticeKey),
    messageId: null,
    providerMessageId: null,
    recipient: null,
    bounceType: null,
    occurredAt: new Date(),
    details: {},
  };
}

beforeAll(async () => {
  t = await createTestDatabase();
  sink = await startSmtpSink();
  limiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 });
  proxy = await startTcpProxy({ targetPort: Number(new URL(t.url).port) });
  proxied = createDb(createPool(proxy.url(t.url), { max: 4, applicationName: 'failover-test' }));
});

afterAll(async () => {
  await proxied?.$client.end();
  await proxy?.stop();
  await sink?.stop();
  await t?.drop();
});

beforeEach(() => sink.setFault({ kind: 'none' }));

describe('a connection lost under the claim', () => {
  it('the claim ran and its answer was lost: nothing is sent, the next wake-up refuses, the claim waits in quarantine', async () => {
    const job = await newJob();
    const handle = handler(proxied);
    const cut = proxy.cutNext('ledger_claim', 'after-answer');
    await expect(handle(delivery(job.id))).rejects.toSatisfy(connectionLost);
    await cut;
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'claimed' });

    // The sweeper's wake-up, on a fresh connection: the claim it cannot prove is not its own.
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
    expect(await outcomes(job.id)).toContain('suppressed_duplicate');
    const quarantined = await listQuarantined(t.db, { quarantineAfterMs: 0, limit: 100 });
    expect(quarantined.map((row) => row.noticeKey)).toContain(job.noticeKey);
  });

  it('the claim never ran (cut before it reached the server): no row, the next wake-up claims and sends once', async () => {
    const job = await newJob();
    const handle = handler(proxied);
    const cut = proxy.cutNext('ledger_claim', 'before-forward');
    await expect(handle(delivery(job.id))).rejects.toSatisfy(connectionLost);
    await cut;
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeNull();
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);

    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'sent' });
  });

  it('a read whose connection died is asked again on a fresh connection: the notice goes out once', async () => {
    const job = await newJob();
    const cut = proxy.cutNext(job.id, 'before-forward');
    expect(await handler(proxied)(delivery(job.id))).toEqual({ ack: true });
    await cut;
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
  });
});

describe('a connection lost under a transaction', () => {
  it('fails the transaction, not the process, and the pool serves the next statement on a fresh connection', async () => {
    const tx = proxied.transaction(async (inner) => {
      await inner.execute(sql`select 1`);
      proxy.dropAll();
      await inner.execute(sql`select pg_sleep(0.5)`);
    });
    await expect(tx).rejects.toSatisfy(connectionLost);
    const after = await proxied.execute<{ one: number }>(sql`select 1 as one`);
    expect(after.rows[0]?.one).toBe(1);
  });
});

describe('a connection lost under the result commit', () => {
  it('the commit never ran: sent once, the claim stays claimed, the next wake-up sends nothing, the relay event confirms it', async () => {
    const job = await newJob();
    const handle = handler(proxied);
    const cut = proxy.cutNext('ledger_commit_sent', 'before-forward');
    await expect(handle(delivery(job.id))).rejects.toSatisfy(connectionLost);
    await cut;
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'claimed' });

    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
    expect((await listQuarantined(t.db, { quarantineAfterMs: 0, limit: 100 })).map((row) => row.noticeKey)).toContain(job.noticeKey);

    await ingestEvents(t.db, { events: [acceptedEvent(job.noticeKey)] });
    await reconcileQuarantine(t.db);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'sent' });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' });
  });

  it('the commit ran and its answer was lost: the row is sent, and the next wake-up discards the job', async () => {
    const job = await newJob();
    const handle = handler(proxied);
    const cut = proxy.cutNext('ledger_commit_sent', 'after-answer');
    await expect(handle(delivery(job.id))).rejects.toSatisfy(connectionLost);
    await cut;
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'sent' });
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
    expect(await outcomes(job.id)).toContain('discarded');
  });
});

/** What a promoted asynchronous standby shows for a notice whose claim and send committed only on the old primary. */
async function loseClaimLikeAsyncStandby(noticeKey: string, jobId: string): Promise<void> {
  await t.db.execute(sql`delete from delivery_attempts where job_id = ${jobId}`);
  await t.db.execute(sql`delete from notice_ledger where notice_key = ${noticeKey}`);
  await t.db.execute(sql`update reminder_jobs set state = 'pending', attempts = 0 where id = ${jobId}`);
}

describe('the post-failover check', () => {
  it('finds a notice the provider took and the ledger lacks, records it sent, and the next wake-up sends nothing; without it, a duplicate', async () => {
    const since = new Date(Date.now() - 1_000);
    const [lost, control, untouched] = [await newJob(), await newJob(), await newJob()];
    const handle = handler(t.db);
    for (const job of [lost, control]) {
      expect(await handle(delivery(job.id))).toEqual({ ack: true });
      await loseClaimLikeAsyncStandby(job.noticeKey, job.id);
    }
    // The relay's events arrive at the new primary: correlations with no ledger row are orphans, stored.
    const summary = await ingestEvents(t.db, { events: [acceptedEvent(lost.noticeKey)] });
    expect(summary).toMatchObject({ stored: 1, linked: 0, orphans: 1 });

    const dryRun = await checkAfterFailover(t.db, { since, dryRun: true, actor: 'test' });
    expect(dryRun.found.map((row) => row.noticeKey)).toEqual([lost.noticeKey]);
    expect(await getLedgerRow(t.db, { noticeKey: lost.noticeKey })).toBeNull();
    // An event before the instant is not this failover's.
    expect((await checkAfterFailover(t.db, { since: new Date(Date.now() + 60_000), dryRun: true, actor: 'test' })).found).toEqual([]);

    const report = await checkAfterFailover(t.db, { since, actor: 'test' });
    expect(report.resolved.map((row) => row.noticeKey)).toEqual([lost.noticeKey]);
    expect(await getLedgerRow(t.db, { noticeKey: lost.noticeKey })).toMatchObject({ state: 'sent', source: 'backfill' });
    expect(await readJob(t.db, lost.id)).toMatchObject({ state: 'sent' });
    const audit = await t.db.execute<{ action: string }>(sql`select action from audit_log where target_id = ${correlationOf(lost.noticeKey)}`);
    expect(audit.rows.map((row) => row.action)).toEqual(['ledger.post_failover_sent']);
    // Idempotent: nothing left to find.
    expect((await checkAfterFailover(t.db, { since, actor: 'test' })).resolved).toEqual([]);

    expect(await handle(delivery(lost.id))).toEqual({ ack: true });
    expect(sink.countByCorrelation(correlationOf(lost.noticeKey))).toBe(1);
    // The control: the same loss with no evidence checked, and the wake-up sends it again.
    expect(await handle(delivery(control.id))).toEqual({ ack: true });
    expect(sink.countByCorrelation(correlationOf(control.noticeKey))).toBe(2);
    // A job with no event is left alone.
    expect(await readJob(t.db, untouched.id)).toMatchObject({ state: 'pending' });
  });

  it('leaves a claim the new primary holds to quarantine and reconcile, and never treats a dropped event as a hand-over', async () => {
    const since = new Date(Date.now() - 1_000);
    const held = await newJob();
    await t.db.execute(sql`insert into notice_ledger (notice_key, notice_type, identity, revision, job_id, state, claim_token)
      values (${held.noticeKey}, ${held.noticeType}, ${JSON.stringify(held.identity)}::jsonb, 0, ${held.id}, 'claimed', gen_random_uuid())`);
    const dropped = await newJob();
    const summary = await ingestEvents(t.db, {
      events: [acceptedEvent(held.noticeKey), { ...acceptedEvent(dropped.noticeKey), type: 'dropped', rawType: 'dropped' }],
    });
    expect(summary).toMatchObject({ stored: 2, linked: 1, orphans: 0 });
    expect((await checkAfterFailover(t.db, { since, dryRun: true, actor: 'test' })).found).toEqual([]);
    expect(await readJob(t.db, dropped.id)).toMatchObject({ state: 'pending' });
  });
});
