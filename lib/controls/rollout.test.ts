import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { recordAttempt } from '@/db/queries/attempts';
import { listAuditEntries } from '@/db/queries/audit';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { createUser } from '@/db/queries/users';
import { createLogger } from '@/lib/log';
import type { Actor } from '@/lib/replay/transitions';
import { activeNoticeConfig, noticeTypeLabel } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { cancelEnforceRequest, decideEnforce, loadRolloutView, requestEnforce, runBackfill, setShadowMode, storeInitialLedgerMode } from './rollout';
import { longestRenewalCycle } from './rollout-cycle';
import { startWorkerControls, type WorkerControls } from './worker-controls';

/** The guided rollout against real PostgreSQL: the stored mode, the backfill gate with its count, the audited backfill, four-eyes to enforce. */

let t: TestDatabase;
let controls: WorkerControls;
let operator: Actor;
let manager: Actor;
let createdByOperator: Actor;

async function user(role: Actor['role'], createdBy?: string): Promise<Actor> {
  const email = `${role}-${randomBytes(3).toString('hex')}@test.local`;
  const row = await createUser(t.db, { email, name: role, role, passwordHash: null, ...(createdBy ? { createdBy } : {}) });
  if (!row) throw new Error('user not created');
  return { id: row.id, email: row.email, role };
}

const view = () => loadRolloutView(t.db, { fallbackMode: 'enforce', notices: activeNoticeConfig(), label: noticeTypeLabel, refreshMs: 100 });

beforeAll(async () => {
  t = await createTestDatabase();
  controls = await startWorkerControls({ db: t.db, refreshMs: 100, logger: createLogger('test', 'silent') });
  operator = await user('operator');
  manager = await user('manager');
  createdByOperator = await user('manager', operator.id);
});

afterAll(async () => {
  await controls?.stop();
  await t?.drop();
});

describe('the longest renewal cycle', () => {
  it('is the annual agreement of the shipped rules (a year), named with its source', () => {
    expect(longestRenewalCycle(activeNoticeConfig())).toEqual({ days: 365, source: expect.stringContaining('termMonths gte 12') });
  });

  it('is a merchant window when no rule reaches further (control)', () => {
    const config = { noticeTypes: { weekly: { window: { from: -10 * 86_400_000, to: 2 * 86_400_000 } }, none: { window: null } } };
    expect(longestRenewalCycle({ config, ruleSet: { rules: [] } })).toEqual({ days: 12, source: 'weekly: its window around the anchor' });
  });
});

describe('the rollout', () => {
  it('stores LEDGER_MODE only when nothing is stored, then the stored mode holds', async () => {
    expect(await storeInitialLedgerMode(t.db, { initial: 'shadow', actor: 'system:worker:a' })).toEqual({ mode: 'shadow', stored: true });
    // A second worker started with the other value does not change it.
    expect(await storeInitialLedgerMode(t.db, { initial: 'enforce', actor: 'system:worker:b' })).toEqual({ mode: 'shadow', stored: false });
    await controls.refresh();
    expect(controls.current().ledgerMode).toBe('shadow');
    const audit = await listAuditEntries(t.db, { filter: { action: 'ledger_mode.initial' }, limit: 10 });
    expect(audit.map((row) => [row.actor, row.after])).toEqual([['system:worker:a', { value: 'shadow' }]]);
    expect(await view()).toMatchObject({ mode: 'shadow', stored: true, daysInShadow: 0, changedBy: 'system:worker:a', longestCycle: { days: 365 } });
  });

  it('counts shadow duplicates by type from the attempts shadow recorded', async () => {
    const job = await insertTestJob(t.db);
    const at = new Date();
    const attempt = (outcome: 'sent' | 'would_suppress', mode: 'shadow' | 'enforce') =>
      recordAttempt(t.db, { jobId: job.id, noticeKey: job.noticeKey, workerId: 'w', startedAt: at, outcome, mode });
    for (let i = 0; i < 4; i += 1) await attempt('sent', 'shadow');
    await attempt('would_suppress', 'shadow');
    // Enforce's own attempts are not shadow's records (control).
    await attempt('sent', 'enforce');
    const { duplicates } = await view();
    expect(duplicates).toEqual([{ noticeType: job.noticeType, label: noticeTypeLabel(job.noticeType), sent: 4, wouldSuppress: 1, rate: 0.25 }]);
  });

  it('refuses enforce with the count of sent notices it would treat as new; the backfill dry run counts, the run writes, both audited', async () => {
    const before = await insertTestJob(t.db, { state: 'sent' });
    const another = await insertTestJob(t.db, { state: 'sent' });
    const refused = await requestEnforce(t.db, { actor: operator, reason: 'a full cycle in shadow' });
    expect(refused).toMatchObject({ ok: false, refusal: { kind: 'conflict', code: 'backfill_required', details: { treatedAsNew: 2 } } });
    expect(refused.ok ? '' : refused.refusal.message).toContain('would treat 2 notices already sent as new');
    expect((await view()).request).toBeNull();

    const dry = await runBackfill(t.db, { source: { kind: 'jobs' }, dryRun: true, actor: operator.email, reason: 'see what a backfill writes' });
    expect(dry).toMatchObject({ total: 2, inserted: 0, existing: 0, dryRun: true });
    expect(await getLedgerRow(t.db, { noticeKey: before.noticeKey })).toBeNull();
    const run = await runBackfill(t.db, { source: { kind: 'jobs' }, dryRun: false, actor: operator.email, reason: 'backfill before enforcing' });
    expect(run).toMatchObject({ total: 2, inserted: 2, existing: 0 });
    expect(await getLedgerRow(t.db, { noticeKey: another.noticeKey })).toMatchObject({ state: 'sent', source: 'backfill' });
    // `existing` is reported: a second dry run finds both in the ledger.
    expect(await runBackfill(t.db, { source: { kind: 'jobs' }, dryRun: true, actor: operator.email, reason: 'again' })).toMatchObject({
      total: 2,
      existing: 2,
      inserted: 0,
    });
    const audit = await listAuditEntries(t.db, { filter: { action: 'ledger.backfill' }, limit: 10 });
    expect(audit.map((row) => [row.action, row.actor, row.after])).toEqual([
      ['ledger.backfill_dry_run', operator.email, { total: 2, inserted: 0, newKeys: 0, existing: 2, dryRun: true }],
      ['ledger.backfill', operator.email, { total: 2, inserted: 2, newKeys: 2, existing: 0, dryRun: false }],
      ['ledger.backfill_dry_run', operator.email, { total: 2, inserted: 0, newKeys: 2, existing: 0, dryRun: true }],
    ]);
    expect((await view()).backfill).toMatchObject({ treatedAsNew: 0, last: { actor: operator.email, counts: { dryRun: true, existing: 2 } } });
  });

  it('enforcing needs a second person who is neither the requester nor their creator; then every worker reads enforce', async () => {
    const asked = await requestEnforce(t.db, { actor: operator, reason: 'a full cycle in shadow, 0.2% duplicates' });
    expect(asked).toEqual({ ok: true, data: { mode: 'shadow', requested: true } });
    expect((await view()).request).toMatchObject({ requestedBy: operator.email });
    expect(await requestEnforce(t.db, { actor: operator, reason: 'twice' })).toMatchObject({ ok: false, refusal: { kind: 'conflict' } });

    // The requester, even promoted, cannot approve; neither can a manager the requester created.
    expect(await decideEnforce(t.db, { actor: { ...operator, role: 'manager' }, decision: 'approve', reason: 'mine' })).toMatchObject({
      ok: false,
      refusal: { code: 'four_eyes' },
    });
    expect(await decideEnforce(t.db, { actor: createdByOperator, decision: 'approve', reason: 'made by them' })).toMatchObject({
      ok: false,
      refusal: { code: 'four_eyes', message: expect.stringContaining('created by the person who asked') },
    });
    const otherOperator = await user('operator');
    expect(await decideEnforce(t.db, { actor: otherOperator, decision: 'approve', reason: 'not a manager' })).toMatchObject({
      ok: false,
      refusal: { kind: 'forbidden', message: expect.stringContaining('Only a manager') },
    });
    await controls.refresh();
    expect(controls.current().ledgerMode).toBe('shadow');

    // A sent job without a ledger row that appears after the request: the approval is refused with its count too.
    const late = await insertTestJob(t.db, { state: 'sent' });
    expect(await decideEnforce(t.db, { actor: manager, decision: 'approve', reason: 'looks right' })).toMatchObject({
      ok: false,
      refusal: { code: 'backfill_required', details: { treatedAsNew: 1 } },
    });
    await runBackfill(t.db, { source: { kind: 'jobs' }, dryRun: false, actor: operator.email, reason: 'the late one' });
    expect(await getLedgerRow(t.db, { noticeKey: late.noticeKey })).toMatchObject({ state: 'sent' });

    expect(await decideEnforce(t.db, { actor: manager, decision: 'approve', reason: 'looks right' })).toEqual({ ok: true, data: { mode: 'enforce' } });
    await vi.waitFor(() => expect(controls.current().ledgerMode).toBe('enforce'), { timeout: 5_000, interval: 20 });
    expect(await view()).toMatchObject({ mode: 'enforce', request: null, daysInShadow: null, changedBy: manager.email });
    const [decision] = await listAuditEntries(t.db, { filter: { action: 'ledger_mode.enforce' }, limit: 10 });
    expect(decision).toMatchObject({
      actor: manager.email,
      action: 'ledger_mode.enforce',
      before: { value: 'shadow', requestedBy: operator.email },
      after: { value: 'enforce', fourEyes: { held: expect.arrayContaining(['approver_is_not_requester']) } },
    });

    // Back to shadow is one operator's call, with a reason; a request can be withdrawn.
    expect(await setShadowMode(t.db, { actor: operator.email, reason: 'rollback drill' })).toMatchObject({ ok: true, data: { mode: 'shadow' } });
    expect(await requestEnforce(t.db, { actor: operator, reason: 'again' })).toMatchObject({ ok: true });
    expect(await cancelEnforceRequest(t.db, { actor: operator.email, reason: 'not yet' })).toMatchObject({ ok: true, data: { requested: false } });
    expect(await decideEnforce(t.db, { actor: manager, decision: 'approve', reason: 'nothing asked' })).toMatchObject({
      ok: false,
      refusal: { kind: 'conflict' },
    });
    await controls.refresh();
    expect(controls.current().ledgerMode).toBe('shadow');
  });
});
