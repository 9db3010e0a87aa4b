import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser } from '@/db/queries/users';
import { auditLog, deliveryAttempts, noticeLedger, replayItems, replays, reminderJobs, users, type ReplayRow } from '@/db/schema';
import { insertTestJob } from '@/testing/jobs';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { createWakeupHandler } from '@/lib/jobs/handle-wakeup';
import { createDomainRateLimiter } from '@/lib/jobs/rate-limit';
import { createLogger } from '@/lib/log';
import { correlationOf } from '@/lib/ledger/notice-key';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { createMailTransport } from '@/lib/mail/transport';
import { createPgBossQueue, type PgBossQueue } from '@/lib/queue/pgboss';
import { claimDueReplay, decideReplay as decideReplayRow } from '@/db/queries/replays';
import { isRole } from '@/lib/auth/roles';
import { runReplayBatch } from './runner';
import { scheduleUploadedItem } from './schedule-item';
import { cancelReplay, decideReplay, dryRunFilter, dryRunKeys, requestReplay, startReplay } from './service';
import type { Actor } from './transitions';
import { runReplayToEnd } from '@/testing/replay';
import { replayProgress } from './view';
import { activeNoticeConfig } from '@/lib/windows/active';

const secret = process.env.NOTICE_KEY_SECRET ?? '';
/** A JSON object as one CSV field. */
const csvJson = (value: unknown) => `"${JSON.stringify(value).replace(/"/g, '""')}"`;
const silent = createLogger('test', 'silent');
let t: TestDatabase;
let operator: Actor;
let operator2: Actor;
let manager: Actor;
let manager2: Actor;

async function user(role: Actor['role']): Promise<Actor> {
  const email = `${role}-${randomBytes(3).toString('hex')}@test.local`;
  const row = await createUser(t.db, { email, name: role, role, passwordHash: null });
  if (!row) throw new Error('user not created');
  return { id: row.id, email: row.email, role };
}

/** A window of jobs, each with the given ledger state (null: no ledger row). */
async function seedWindow(states: (null | 'sent' | 'claimed' | 'released' | 'suppressed')[], source: string) {
  const dueAt = new Date(Date.now() - 3 * 3_600_000);
  const jobs = [];
  for (const state of states) {
    const job = await insertTestJob(t.db, {
      dueAt,
      source,
      state: state === 'sent' ? 'sent' : 'pending',
      recipientEmail: `r${randomBytes(3).toString('hex')}@${source}.test`,
    });
    if (state) {
      await t.db.insert(noticeLedger).values({
        noticeKey: job.noticeKey,
        noticeType: job.noticeType,
        identity: job.identity,
        jobId: job.id,
        state,
        sentAt: state === 'sent' ? new Date() : null,
        claimToken: null,
        claimedBy: 'seed',
        recipientDomain: `${source}.test`,
      });
    }
    jobs.push(job);
  }
  return jobs;
}

async function approvedReplay(source: string): Promise<ReplayRow> {
  const requested = await requestReplay(t.db, { actor: operator, input: { reason: 'lost wake-ups', filter: { source } }, secret });
  if (!requested.ok) throw new Error(requested.refusal.message);
  const approved = await decideReplay(t.db, { id: requested.data.replay.id, actor: manager, decision: 'approve', reason: 'checked' });
  if (!approved.ok) throw new Error(approved.refusal.message);
  const started = await startReplay(t.db, { id: approved.data.id, actor: operator, reason: 'go' });
  if (!started.ok) throw new Error(started.refusal.message);
  return started.data;
}

function newQueue(): PgBossQueue {
  return createPgBossQueue({
    url: t.url,
    queueName: `replay-${randomBytes(4).toString('hex')}`,
    visibilityTimeoutMs: 30_000,
    retryDelaySeconds: 0,
    pollingIntervalMs: 100,
  });
}

async function wakeupsIn(queue: PgBossQueue): Promise<{ jobId: string; batchId?: string }[]> {
  const result = await t.pool.query<{ data: { jobId: string; batchId?: string } }>('select data from pgboss.job where name = $1', [queue.queueName]);
  return result.rows.map((row) => row.data);
}

beforeAll(async () => {
  t = await createTestDatabase();
  operator = await user('operator');
  operator2 = await user('operator');
  manager = await user('manager');
  manager2 = await user('manager');
});

afterAll(async () => {
  await t?.drop();
});

describe('dry run', () => {
  it('counts new vs existing keys by ledger state for a filter and says when the backlog was already delivered', async () => {
    await seedWindow([null, null, 'sent', 'sent', 'sent', 'claimed', 'released', 'suppressed'], 'dry-a');
    const mixed = await dryRunFilter(t.db, { filter: { source: 'dry-a' } });
    expect(mixed.counts).toEqual({ total: 8, newKeys: 2, existing: { sent: 3, claimed: 1, released: 1, suppressed: 1 }, blocked: {} });
    expect(mixed.verdict.kind).toBe('mixed');
    expect(mixed.verdict.wouldSend).toBe(3);

    await seedWindow([null, ...Array<'sent'>(99).fill('sent')], 'dry-b');
    const delivered = await dryRunFilter(t.db, { filter: { source: 'dry-b' } });
    expect(delivered.counts).toEqual({ total: 100, newKeys: 1, existing: { sent: 99 }, blocked: {} });
    expect(delivered.verdict.kind).toBe('already_delivered');

    // Jobs the ledger would let through but that would never reach a send are not "would be sent".
    const stopped = await Promise.all([
      insertTestJob(t.db, { source: 'dry-c' }),
      insertTestJob(t.db, { source: 'dry-c', state: 'suppressed' }),
      insertTestJob(t.db, { source: 'dry-c', state: 'cancelled' }),
      insertTestJob(t.db, { source: 'dry-c', state: 'failed' }),
      insertTestJob(t.db, { source: 'dry-c', dueAt: new Date(Date.now() - 7_200_000), deadlineAt: new Date(Date.now() - 60_000) }),
    ]);
    const honest = await dryRunFilter(t.db, { filter: { source: 'dry-c' } });
    expect(stopped).toHaveLength(5);
    expect(honest.counts).toEqual({ total: 5, newKeys: 5, existing: {}, blocked: { suppressed: 1, cancelled: 1, failed: 1, past_window: 1 } });
    expect(honest.verdict.wouldSend).toBe(1);
    expect(delivered.verdict.message).toMatch(/already delivered.*Stopping is the safe choice/);
  });

  it('counts uploaded keys set-based, de-duplicating repeats', async () => {
    const jobs = await seedWindow(['sent', 'claimed', null], 'dry-c');
    const unknown = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
    const keys = [...jobs.map((job) => job.noticeKey), ...unknown, jobs[0]?.noticeKey ?? ''];
    const result = await dryRunKeys(t.db, { keys });
    // The third job has no ledger row: it is new, like the two unknown keys.
    expect(result.counts).toEqual({ total: 5, newKeys: 3, existing: { sent: 1, claimed: 1 }, blocked: {} });
  });

  it('filters by due window and notice type', async () => {
    const inside = await insertTestJob(t.db, { dueAt: new Date('2026-01-10T10:00:00Z'), deadlineAt: new Date('2026-01-12T10:00:00Z'), source: 'dry-d' });
    await insertTestJob(t.db, { dueAt: new Date('2026-01-11T10:00:00Z'), deadlineAt: new Date('2026-01-12T10:00:00Z'), source: 'dry-d' });
    const result = await dryRunFilter(t.db, { filter: { dueFrom: '2026-01-10T00:00:00Z', dueTo: '2026-01-11T00:00:00Z', noticeType: inside.noticeType } });
    expect(result.counts.total).toBe(1);
    const none = await dryRunFilter(t.db, { filter: { dueFrom: '2026-01-10T00:00:00Z', dueTo: '2026-01-11T00:00:00Z', noticeType: 'payment_recovery' } });
    expect(none.counts.total).toBe(0);
    expect(none.verdict.kind).toBe('empty');
  });
});

describe('request → approve (four-eyes)', () => {
  async function snapshot(id: string) {
    const [row] = await t.db.select().from(replays).where(eq(replays.id, id));
    const audits = await t.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.targetId, row?.batchId ?? ''));
    return { row, audits: audits.length };
  }

  it('refuses the requester’s own approval and a non-manager, leaving the row unchanged, then a second manager approves', async () => {
    await seedWindow(['sent', null], 'four-eyes');
    const requested = await requestReplay(t.db, { actor: manager, input: { reason: 'incident 42', filter: { source: 'four-eyes' } }, secret });
    if (!requested.ok) throw new Error(requested.refusal.message);
    const id = requested.data.replay.id;
    const before = await snapshot(id);
    expect(before.row?.state).toBe('requested');
    expect(before.audits).toBe(1);

    const own = await decideReplay(t.db, { id, actor: manager, decision: 'approve', reason: 'mine' });
    expect(own).toEqual({ ok: false, refusal: { kind: 'forbidden', code: 'four_eyes', message: expect.stringMatching(/Four-eyes.*different manager/) } });
    const byOperator = await decideReplay(t.db, { id, actor: operator2, decision: 'approve', reason: 'looks fine' });
    expect(byOperator).toEqual({ ok: false, refusal: { kind: 'forbidden', code: 'forbidden', message: expect.stringMatching(/Only a manager/) } });
    expect(await snapshot(id)).toEqual(before);

    const approved = await decideReplay(t.db, { id, actor: manager2, decision: 'approve', reason: 'second pair of eyes' });
    expect(approved.ok && approved.data.state).toBe('approved');
    const after = await snapshot(id);
    expect(after.row?.decidedBy).toBe(manager2.id);
    const [entry] = await t.db
      .select()
      .from(auditLog)
      .where(sql`${auditLog.targetId} = ${before.row?.batchId} and ${auditLog.action} = 'replay.approve'`);
    expect(entry).toMatchObject({ actor: manager2.email, reason: 'second pair of eyes', before: { state: 'requested' }, after: { state: 'approved' } });
  });

  it('refuses an approval by the account that created the requester, and by one the requester created; the approval row names the rules that held', async () => {
    await seedWindow(['sent', null], 'four-eyes-created');
    const created = async (email: string, role: 'operator' | 'manager', createdBy: string) => {
      const [row] = await t.db.insert(users).values({ email, name: email, role, createdBy }).returning();
      if (!row || !isRole(row.role)) throw new Error('user insert returned nothing');
      return { id: row.id, email: row.email, role: row.role };
    };
    // An admin-like manager creates an operator account, and that operator creates a manager.
    const puppet = await created('puppet-operator@example.com', 'operator', manager2.id);
    const puppetsManager = await created('puppets-manager@example.com', 'manager', puppet.id);
    const requested = await requestReplay(t.db, { actor: puppet, input: { reason: 'incident 77', filter: { source: 'four-eyes-created' } }, secret });
    if (!requested.ok) throw new Error(requested.refusal.message);
    const id = requested.data.replay.id;
    const before = await snapshot(id);
    const byCreator = await decideReplay(t.db, { id, actor: manager2, decision: 'approve', reason: 'my own operator asked' });
    expect(byCreator).toMatchObject({ ok: false, refusal: { code: 'four_eyes', message: expect.stringMatching(/you created the account that requested/) } });
    const byCreated = await decideReplay(t.db, { id, actor: puppetsManager, decision: 'approve', reason: 'my creator asked' });
    expect(byCreated).toMatchObject({ ok: false, refusal: { code: 'four_eyes', message: expect.stringMatching(/created by the requester/) } });
    expect(await snapshot(id)).toEqual(before);
    // The statement itself refuses the pair, whatever the lib check said.
    expect(await decideReplayRow(t.db, { id, decidedBy: manager2.id, state: 'approved', reason: 'bypassing the check' })).toBeNull();
    // Control: a manager unrelated to the requester approves, and the audit row says which rules held.
    const approved = await decideReplay(t.db, { id, actor: manager, decision: 'approve', reason: 'an unrelated second pair of eyes' });
    expect(approved.ok && approved.data.state).toBe('approved');
    const [entry] = await t.db
      .select()
      .from(auditLog)
      .where(sql`${auditLog.targetId} = ${before.row?.batchId} and ${auditLog.action} = 'replay.approve'`);
    expect(entry?.after).toMatchObject({
      fourEyes: { held: ['approver_is_not_requester', 'approver_did_not_create_requester', 'approver_was_not_created_by_requester'] },
    });
  });

  it('the database refuses a self-approval even if the lib check were bypassed', async () => {
    await seedWindow([null], 'four-eyes-db');
    const requested = await requestReplay(t.db, { actor: manager, input: { reason: 'x', filter: { source: 'four-eyes-db' } }, secret });
    if (!requested.ok) throw new Error(requested.refusal.message);
    await expect(t.pool.query("update replays set state = 'approved', decided_by = requested_by where id = $1", [requested.data.replay.id])).rejects.toThrow(
      /replays_four_eyes/,
    );
  });

  it('a rejection is final and audited; an operator cannot request with an empty filter match', async () => {
    await seedWindow([null], 'reject-me');
    const requested = await requestReplay(t.db, { actor: operator, input: { reason: 'x', filter: { source: 'reject-me' } }, secret });
    if (!requested.ok) throw new Error(requested.refusal.message);
    const rejected = await decideReplay(t.db, { id: requested.data.replay.id, actor: manager, decision: 'reject', reason: 'already delivered' });
    expect(rejected.ok && rejected.data.state).toBe('rejected');
    const run = await startReplay(t.db, { id: requested.data.replay.id, actor: operator, reason: 'try' });
    expect(run.ok).toBe(false);
    const empty = await requestReplay(t.db, { actor: operator, input: { reason: 'x', filter: { source: 'no-such-source' } }, secret });
    expect(empty.ok).toBe(false);
  });
});

describe('run', () => {
  it("records in each required notice's evidence who dry-ran and requested the replay and who approved it, in the batch's transaction; a courtesy notice gets none", async () => {
    const dueAt = new Date(Date.now() - 3 * 3_600_000);
    const required = await insertTestJob(t.db, { dueAt, source: 'evidence-run', category: 'required', recipientEmail: 'req@evidence-run.test' });
    const courtesy = await insertTestJob(t.db, { dueAt, source: 'evidence-run', recipientEmail: 'court@evidence-run.test' });
    const replay = await approvedReplay('evidence-run');
    const queue = newQueue();
    await queue.start();
    try {
      const result = await runReplayToEnd({ db: t.db, queue, replayId: replay.id, perDomainPerSecond: 10_000, batchSize: 10, logger: silent });
      expect(result).toEqual({ state: 'completed', published: 2 });
    } finally {
      await queue.stop();
    }
    const entries = async (noticeKey: string) =>
      (
        await t.pool.query<{ kind: string; job_id: string; body: string; seq: number | null }>(
          'select e.kind, e.job_id::text, e.body, c.seq from evidence_entries e left join evidence_chain c on c.entry_id = e.id where e.notice_key = $1',
          [noticeKey],
        )
      ).rows;
    const [entry, ...more] = await entries(required.noticeKey);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ kind: 'replay.approved', job_id: required.id, seq: null });
    const [decided] = await t.db.select().from(replays).where(eq(replays.id, replay.id));
    expect(JSON.parse(entry?.body ?? '{}')).toMatchObject({
      replay: { id: replay.id, batchId: replay.batchId, filter: { source: 'evidence-run' } },
      dryRun: { by: { email: operator.email, role: 'operator' }, at: decided?.requestedAt.toISOString(), counts: { total: 2, newKeys: 2 } },
      requested: { by: { email: operator.email }, reason: 'lost wake-ups' },
      approved: { by: { email: manager.email, role: 'manager' }, at: decided?.decidedAt?.toISOString(), reason: 'checked' },
    });
    // Control: the courtesy notice of the same batch keeps no record (EVIDENCE_FOR=required).
    expect(await entries(courtesy.noticeKey)).toEqual([]);
  });

  it('publishes each job once with the batch id, and cancel between batches stops publishing', async () => {
    await seedWindow(Array<null>(10).fill(null), 'cancel-run');
    const replay = await approvedReplay('cancel-run');
    const queue = newQueue();
    await queue.start();
    try {
      const result = await runReplayToEnd({
        db: t.db,
        queue,
        replayId: replay.id,
        perDomainPerSecond: 10_000,
        batchSize: 3,
        logger: silent,
        onBatch: async ({ published }) => {
          if (published === 3) {
            const cancelled = await cancelReplay(t.db, { id: replay.id, actor: operator, reason: 'wrong window' });
            expect(cancelled.ok).toBe(true);
          }
        },
      });
      expect(result).toEqual({ state: 'cancelled', published: 3 });
      const wakeups = await wakeupsIn(queue);
      expect(wakeups).toHaveLength(3);
      expect(new Set(wakeups.map((w) => w.batchId))).toEqual(new Set([replay.batchId]));
      const [row] = await t.db.select().from(replays).where(eq(replays.id, replay.id));
      expect(row).toMatchObject({ state: 'cancelled', published: 3, total: 10 });
      // A second run of a cancelled replay publishes nothing.
      const again = await startReplay(t.db, { id: replay.id, actor: operator, reason: 'again' });
      expect(again.ok).toBe(false);
      expect(await wakeupsIn(queue)).toHaveLength(3);
      const actions = await t.db.select({ action: auditLog.action }).from(auditLog).where(eq(auditLog.targetId, replay.batchId)).orderBy(auditLog.id);
      expect(actions.map((a) => a.action)).toEqual(['replay.request', 'replay.approve', 'replay.run', 'replay.cancel']);
    } finally {
      await queue.stop();
    }
  });

  it('through the real send path: the new keys are sent exactly once, the delivered ones are suppressed, a resumed run publishes nothing more', async () => {
    const jobs = await seedWindow(['sent', 'sent', 'sent', null, null], 'e2e-run');
    // The "sent" jobs stand for notices that went out: their messages are not in this sink.
    const replay = await approvedReplay('e2e-run');
    expect(replay.total).toBe(5);
    const sink: SmtpSink = await startSmtpSink();
    const queue = newQueue();
    await queue.start();
    try {
      const limiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 });
      const mail = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'Notices <n@notices.test>', messageIdDomain: 'notices.test' });
      const handler = createWakeupHandler({
        db: t.db,
        mail,
        rateLimiter: limiter,
        workerId: 'replay-test',
        logger: silent,
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
      await queue.consume(handler, { concurrency: 2 });
      const result = await runReplayToEnd({
        db: t.db,
        queue,
        replayId: replay.id,
        perDomainPerSecond: 10_000,
        batchSize: 2,
        logger: silent,
      });
      expect(result).toEqual({ state: 'completed', published: 5 });
      await vi.waitFor(
        async () => {
          const progress = await replayProgress(t.db, { id: replay.id });
          expect(progress).toMatchObject({ published: 5, sent: 2, suppressed: 3, failed: 0 });
        },
        { timeout: 20_000, interval: 100 },
      );
      const newOnes = jobs.slice(3);
      for (const job of newOnes) expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
      expect(sink.messages()).toHaveLength(2);
      const attempts = await t.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.batchId, replay.batchId));
      expect(
        attempts
          .filter((a) => a.outcome === 'sent')
          .map((a) => a.jobId)
          .sort(),
      ).toEqual(newOnes.map((j) => j.id).sort());
      // The batch id is on the attempts, never in the key.
      const ledgerKeys = await t.db
        .select({ key: noticeLedger.noticeKey })
        .from(noticeLedger)
        .where(sql`${noticeLedger.jobId} = any(${sql.param(newOnes.map((j) => j.id))}::uuid[])`);
      expect(ledgerKeys.map((r) => r.key).sort()).toEqual(newOnes.map((j) => j.noticeKey).sort());

      // A completed replay is not claimed again: no worker publishes anything more for it.
      const resumed = await runReplayBatch({
        db: t.db,
        queue,
        replayId: replay.id,
        scheduleItem: scheduleUploadedItem,
        perDomainPerSecond: 10_000,
        batchSize: 200,
        now: new Date(Date.now() + 86_400_000),
        logger: silent,
      });
      expect(resumed).toBeNull();
      expect(await wakeupsIn(queue)).toHaveLength(5);
    } finally {
      await queue.stop();
      await sink.stop();
    }
  });

  it('an uploaded list schedules its rows as a producer would (idempotent on the key) before publishing', async () => {
    const [existing] = await seedWindow(['sent'], 'upload-run');
    if (!existing) throw new Error('no job');
    const due = new Date(Date.now() - 3_600_000).toISOString();
    const deadline = new Date(Date.now() + 86_400_000).toISOString();
    const identity = existing.identity as Record<string, string>;
    const anchor = new Date(Date.now() + 3 * 86_400_000);
    const renewal = csvJson({ customer_name: 'Ada Lovelace', plan_name: 'Pro annual', amount: '49.00', currency: 'EUR' });
    const recovery = csvJson({ customer_name: 'Ada Lovelace', amount: '120.50', currency: 'EUR', reference: 'RC-2026-0042' });
    const csv = [
      'notice_type,subscription_id,period_start,account_id,reconciliation_id,exception_id,revision,recipient_email,recipient_locale,recipient_phone,due_at,deadline_at,anchor_at,payload',
      `${existing.noticeType},${identity.subscription_id},${identity.period_start},,,,0,${existing.recipientEmail},,,${due},${deadline},${anchor.toISOString()},${renewal}`,
      `renewal_notice_t24,sub_upload_1,2026-12-01,,,,0,new@upload.test,de-at,,${due},${deadline},${anchor.toISOString()},${renewal}`,
      `renewal_notice_t24,sub_upload_2,not-a-date,,,,0,new@upload.test,,,${due},${deadline},${anchor.toISOString()},${renewal}`,
      `payment_recovery,,,acct_up,recon_up,exc_up,0,billing@upload.test,,+1 415 555 0100,${due},${deadline},,${recovery}`,
    ].join('\n');
    const requested = await requestReplay(t.db, { actor: operator, input: { reason: 'upstream export', csv }, secret });
    if (!requested.ok) throw new Error(requested.refusal.message);
    expect(requested.data.dryRun.counts).toEqual({ total: 3, newKeys: 2, existing: { sent: 1 }, blocked: {} });
    expect(requested.data.replay.uploadRejections).toEqual([
      { line: 4, reason: expect.stringMatching(/period_start/), raw: expect.stringContaining('sub_upload_2') },
    ]);
    const id = requested.data.replay.id;
    expect((await decideReplay(t.db, { id, actor: manager, decision: 'approve', reason: 'ok' })).ok).toBe(true);
    expect((await startReplay(t.db, { id, actor: operator, reason: 'go' })).ok).toBe(true);
    const queue = newQueue();
    await queue.start();
    try {
      const result = await runReplayToEnd({ db: t.db, queue, replayId: id, perDomainPerSecond: 10_000, logger: silent });
      expect(result).toEqual({ state: 'completed', published: 3 });
      const created = await t.db
        .select()
        .from(reminderJobs)
        .where(eq(reminderJobs.source, `replay:${requested.data.replay.batchId}`))
        .orderBy(reminderJobs.noticeType);
      // What the row gave beside the fact reaches the job, as a producer's request would: the
      // anchor the renewal template shows, the locale (canonical), the phone (E.164) and the
      // channel chosen from the type's channels, and the type's category.
      expect(
        created.map((job) => [job.noticeType, job.subjectId, job.anchorAt?.toISOString() ?? null, job.recipientLocale, job.channel, job.recipientPhone]),
      ).toEqual([
        ['payment_recovery', expect.any(String), null, null, 'sms', '+14155550100'],
        ['renewal_notice_t24', 'sub_upload_1', anchor.toISOString(), 'de-AT', 'email', null],
      ]);
      expect(created.map((job) => job.category)).toEqual(created.map((job) => activeNoticeConfig().config.noticeTypes[job.noticeType]?.category));
      expect(created.every((job) => job.batchId === requested.data.replay.batchId)).toBe(true);
      const createdIds = created.map((job) => job.id);
      const items = await t.db.select().from(replayItems).where(eq(replayItems.replayId, id));
      expect(items.map((item) => item.jobId).sort()).toEqual([existing.id, ...createdIds].sort());
      expect((await wakeupsIn(queue)).map((w) => w.jobId).sort()).toEqual([existing.id, ...createdIds].sort());
    } finally {
      await queue.stop();
    }
  });
});

describe("the workers' runner", () => {
  const batch = (queue: PgBossQueue, replayId: string, params: { now: Date; perDomainPerSecond?: number; batchSize?: number }) =>
    runReplayBatch({
      db: t.db,
      queue,
      replayId,
      scheduleItem: scheduleUploadedItem,
      perDomainPerSecond: params.perDomainPerSecond ?? 10_000,
      batchSize: params.batchSize ?? 200,
      now: params.now,
      logger: silent,
    });

  it("paces batches by the replay's next_batch_at, so any worker (or a restarted one) waits the same", async () => {
    await seedWindow(Array<null>(6).fill(null), 'paced-run');
    const replay = await approvedReplay('paced-run');
    const queue = newQueue();
    await queue.start();
    try {
      const start = new Date(Date.now() + 60_000);
      // Two wake-ups for one domain at 2 a second: the next batch may go one second later.
      expect(await batch(queue, replay.id, { now: start, perDomainPerSecond: 2, batchSize: 2 })).toMatchObject({ published: 2, state: 'running' });
      const [row] = await t.db.select().from(replays).where(eq(replays.id, replay.id));
      expect(row?.nextBatchAt?.getTime()).toBe(start.getTime() + 1_000);
      expect(await batch(queue, replay.id, { now: new Date(start.getTime() + 999), perDomainPerSecond: 2, batchSize: 2 })).toBeNull();
      expect(await batch(queue, replay.id, { now: new Date(start.getTime() + 1_000), perDomainPerSecond: 2, batchSize: 2 })).toMatchObject({ published: 2 });
      expect(await wakeupsIn(queue)).toHaveLength(4);
    } finally {
      await queue.stop();
    }
  });

  it('a replay whose batch another worker holds is skipped, not waited for; the batch goes once the holder lets go', async () => {
    await seedWindow(Array<null>(3).fill(null), 'held-run');
    const replay = await approvedReplay('held-run');
    const queue = newQueue();
    await queue.start();
    try {
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let holding: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        holding = resolve;
      });
      // The other worker: its batch transaction holds the replay row.
      const other = t.db.transaction(async (tx) => {
        expect(await claimDueReplay(tx, { now: new Date(), replayId: replay.id })).toMatchObject({ id: replay.id });
        holding();
        await released;
      });
      await held;
      expect(await batch(queue, replay.id, { now: new Date() })).toBeNull();
      expect(await wakeupsIn(queue)).toHaveLength(0);
      release();
      await other;
      expect(await batch(queue, replay.id, { now: new Date() })).toMatchObject({ published: 3, state: 'completed' });
    } finally {
      await queue.stop();
    }
  });

  it('an item that cannot be scheduled ends the run failed and audited, with nothing of its batch published', async () => {
    const due = new Date(Date.now() - 3_600_000).toISOString();
    const deadline = new Date(Date.now() + 86_400_000).toISOString();
    const csv = [
      'notice_type,subscription_id,period_start,revision,recipient_email,due_at,deadline_at,anchor_at,payload',
      `renewal_notice_t24,sub_fail_1,2026-12-01,0,a@fail.test,${due},${deadline},${deadline},${csvJson({ customer_name: 'A', plan_name: 'B', amount: '1.00', currency: 'EUR' })}`,
    ].join('\n');
    const requested = await requestReplay(t.db, { actor: operator, input: { reason: 'fails', csv }, secret });
    if (!requested.ok) throw new Error(requested.refusal.message);
    const id = requested.data.replay.id;
    expect((await decideReplay(t.db, { id, actor: manager, decision: 'approve', reason: 'ok' })).ok).toBe(true);
    expect((await startReplay(t.db, { id, actor: operator, reason: 'go' })).ok).toBe(true);
    // At rest since the upload, the row no longer parses.
    await t.db.update(replayItems).set({ noticeType: 'no_such_notice' }).where(eq(replayItems.replayId, id));
    const queue = newQueue();
    await queue.start();
    try {
      await expect(batch(queue, id, { now: new Date() })).rejects.toThrow();
      const [row] = await t.db.select().from(replays).where(eq(replays.id, id));
      expect(row).toMatchObject({ state: 'failed', published: 0 });
      const actions = await t.db
        .select({ action: auditLog.action })
        .from(auditLog)
        .where(eq(auditLog.targetId, requested.data.replay.batchId))
        .orderBy(auditLog.id);
      expect(actions.map((a) => a.action)).toEqual(['replay.request', 'replay.approve', 'replay.run', 'replay.fail']);
      expect(await wakeupsIn(queue)).toHaveLength(0);
    } finally {
      await queue.stop();
    }
  });
});
