import type { Db, DbOrTx } from '@/db/client';
import { insertAuditEntries, listAuditEntries } from '@/db/queries/audit';
import { countSentJobsWithoutLedgerRow } from '@/db/queries/ledger/backfill';
import { countShadowDuplicates } from '@/db/queries/rollout';
import { deleteRuntimeControl, insertRuntimeControlIfAbsent, listRuntimeControls, lockRuntimeControl, setRuntimeControl } from '@/db/queries/runtime-controls';
import { findUserByEmail, findUserById } from '@/db/queries/users';
import type { BackfillCounts, RolloutView } from '@/lib/api/console/rollout';
import { can } from '@/lib/auth/permissions';
import { ok, refuse, type Result } from '@/lib/http/refusal';
import { backfillFromCsv, backfillFromJobs, type BackfillReport } from '@/lib/ledger/backfill';
import { brokenFourEyesRule, fourEyesRules, type Actor, type FourEyesRule } from '@/lib/replay/transitions';
import type { NoticeConfig, RuleSet } from '@/lib/windows/load-config';
import { longestRenewalCycle } from './rollout-cycle';

/**
 * The guided rollout: shadow → backfill → enforce. The ledger mode is one stored setting,
 * `runtime_controls.ledger_mode`, that every worker reads with its other controls
 * (lib/controls/worker-controls.ts); LEDGER_MODE is only the value the first worker stores when no
 * row exists (`storeInitialLedgerMode`), so a fleet never runs two modes for longer than one refresh.
 * - back to shadow: one operator, with a reason (it stops no send);
 * - enforce: an operator asks, a second person approves (the replays' four-eyes rules,
 *   lib/replay/transitions.ts), and both are refused while sent jobs lack a ledger row — enforce
 *   would treat them as new — with that count;
 * - backfill from the job table (console and CLI) or a CSV (CLI): a dry run counts new vs existing
 *   keys; both a dry run and a run are audited with their counts.
 */

export type LedgerMode = 'shadow' | 'enforce';

const modeName = 'ledger_mode';
const requestName = 'ledger_mode_request';

/** At worker start: stores LEDGER_MODE when nothing is stored (audited), and returns the mode that holds. */
export async function storeInitialLedgerMode(
  db: Db,
  { initial, actor }: { initial: LedgerMode; actor: string },
): Promise<{ mode: LedgerMode; stored: boolean }> {
  return db.transaction(async (tx) => {
    const { row, inserted } = await insertRuntimeControlIfAbsent(tx, {
      name: modeName,
      value: initial,
      reason: 'initial value from LEDGER_MODE',
      changedBy: actor,
    });
    if (inserted) {
      await insertAuditEntries(tx, {
        entries: [
          {
            actor,
            action: 'ledger_mode.initial',
            targetType: 'runtime_control',
            targetId: modeName,
            reason: row.reason,
            before: null,
            after: { value: initial },
          },
        ],
      });
    }
    return { mode: row.value === 'shadow' ? 'shadow' : 'enforce', stored: inserted };
  });
}

function treatedAsNewRefusal(count: number) {
  return refuse(
    'conflict',
    `Enforcing now would treat ${count} notice${count === 1 ? '' : 's'} already sent as new (sent jobs with no ledger row): run the backfill first.`,
    { code: 'backfill_required', details: { treatedAsNew: count } },
  );
}

/** Back to shadow (or a first shadow): no second person, since shadow suppresses nothing. Withdraws a pending request. */
export async function setShadowMode(db: Db, { actor, reason }: { actor: string; reason: string }): Promise<Result<{ mode: LedgerMode; requested: boolean }>> {
  return db.transaction(async (tx) => {
    const before = await setRuntimeControl(tx, { name: modeName, value: 'shadow', reason, changedBy: actor });
    const withdrawn = await deleteRuntimeControl(tx, { name: requestName });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: 'ledger_mode.shadow',
          targetType: 'runtime_control',
          targetId: modeName,
          reason,
          before: before ? { value: before.value, changedBy: before.changedBy } : null,
          after: { value: 'shadow', withdrawnRequest: withdrawn ? withdrawn.changedBy : null },
        },
      ],
    });
    return ok({ mode: 'shadow' as const, requested: false });
  });
}

/** An operator asks to enforce; refused while enforcing would treat sent notices as new. */
export async function requestEnforce(db: Db, { actor, reason }: { actor: Actor; reason: string }): Promise<Result<{ mode: LedgerMode; requested: boolean }>> {
  return db.transaction(async (tx) => {
    const mode = await lockRuntimeControl(tx, { name: modeName });
    if (mode?.value === 'enforce') return refuse('conflict', 'The ledger already enforces.');
    if (await lockRuntimeControl(tx, { name: requestName })) return refuse('conflict', 'A request to enforce is already waiting for a second person.');
    const treatedAsNew = await countSentJobsWithoutLedgerRow(tx);
    if (treatedAsNew > 0) return treatedAsNewRefusal(treatedAsNew);
    await setRuntimeControl(tx, { name: requestName, value: 'enforce', reason, changedBy: actor.email });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: actor.email,
          action: 'ledger_mode.enforce_request',
          targetType: 'runtime_control',
          targetId: modeName,
          reason,
          before: { value: mode?.value ?? null },
          after: { requested: 'enforce', treatedAsNew },
        },
      ],
    });
    return ok({ mode: 'shadow' as const, requested: true });
  });
}

export async function cancelEnforceRequest(
  db: Db,
  { actor, reason }: { actor: string; reason: string },
): Promise<Result<{ mode: LedgerMode; requested: boolean }>> {
  return db.transaction(async (tx) => {
    const removed = await deleteRuntimeControl(tx, { name: requestName });
    if (!removed) return refuse('conflict', 'No request to enforce is waiting.');
    const mode = await lockRuntimeControl(tx, { name: modeName });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: 'ledger_mode.enforce_cancel',
          targetType: 'runtime_control',
          targetId: modeName,
          reason,
          before: { requestedBy: removed.changedBy },
          after: null,
        },
      ],
    });
    return ok({ mode: mode?.value === 'enforce' ? ('enforce' as const) : ('shadow' as const), requested: false });
  });
}

const fourEyesMessages: Record<FourEyesRule, string> = {
  approver_is_not_requester: 'Four-eyes rule: you asked to enforce, so a different manager must approve or reject it.',
  approver_did_not_create_requester:
    'Four-eyes rule: you created the account that asked to enforce, so it is not a second person; a manager you did not create must decide.',
  approver_was_not_created_by_requester:
    'Four-eyes rule: your account was created by the person who asked to enforce, so it is not a second person; a manager they did not create must decide.',
};

/** A second person approves (the mode becomes enforce, every worker sees it within a refresh) or rejects. */
export async function decideEnforce(
  db: Db,
  { actor, decision, reason }: { actor: Actor; decision: 'approve' | 'reject'; reason: string },
): Promise<Result<{ mode: LedgerMode }>> {
  return db.transaction(async (tx) => {
    const request = await lockRuntimeControl(tx, { name: requestName });
    if (!request) return refuse('conflict', 'No request to enforce is waiting.');
    const requester = await findUserByEmail(tx, { email: request.changedBy });
    const approver = await findUserById(tx, { id: actor.id });
    const broken = brokenFourEyesRule({
      replay: { state: 'requested', requestedBy: requester?.id ?? request.changedBy },
      actor,
      accounts: { requesterCreatedBy: requester?.createdBy ?? null, approverCreatedBy: approver?.createdBy ?? null },
    });
    if (broken) return refuse('forbidden', fourEyesMessages[broken], { code: 'four_eyes' });
    if (!can(actor.role, 'rollout.approve')) return refuse('forbidden', `Only a manager may approve or reject enforcing; your role is ${actor.role}.`);
    const mode = await lockRuntimeControl(tx, { name: modeName });
    if (decision === 'approve') {
      const treatedAsNew = await countSentJobsWithoutLedgerRow(tx);
      if (treatedAsNew > 0) return treatedAsNewRefusal(treatedAsNew);
      await setRuntimeControl(tx, { name: modeName, value: 'enforce', reason: request.reason, changedBy: actor.email });
    }
    await deleteRuntimeControl(tx, { name: requestName });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: actor.email,
          action: decision === 'approve' ? 'ledger_mode.enforce' : 'ledger_mode.enforce_reject',
          targetType: 'runtime_control',
          targetId: modeName,
          reason,
          before: { value: mode?.value ?? null, requestedBy: request.changedBy, requestReason: request.reason },
          after: { value: decision === 'approve' ? 'enforce' : (mode?.value ?? null), decidedBy: actor.email, fourEyes: { held: fourEyesRules } },
        },
      ],
    });
    return ok({ mode: decision === 'approve' ? ('enforce' as const) : mode?.value === 'enforce' ? ('enforce' as const) : ('shadow' as const) });
  });
}

export type BackfillSource = { kind: 'jobs'; limit?: number } | { kind: 'csv'; text: string; secret: string };

export function countsOf(report: BackfillReport): BackfillCounts {
  return {
    total: report.total,
    inserted: report.inserted,
    newKeys: report.dryRun ? report.total - report.existing : report.inserted,
    existing: report.existing,
    dryRun: report.dryRun,
  };
}

/**
 * One backfill, from the console or the CLI, audited with its counts (`ledger.backfill` or
 * `ledger.backfill_dry_run`). A CSV with any invalid row writes nothing and is not audited (nothing changed).
 */
export async function runBackfill(
  db: Db,
  { source, dryRun, actor, reason }: { source: BackfillSource; dryRun: boolean; actor: string; reason: string },
): Promise<BackfillReport> {
  return db.transaction(async (tx) => {
    const report =
      source.kind === 'csv'
        ? await backfillFromCsv({ db: tx, text: source.text, secret: source.secret, dryRun })
        : await backfillFromJobs({ db: tx, dryRun, ...(source.limit === undefined ? {} : { limit: source.limit }) });
    if (report.invalid.length > 0) return report;
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: dryRun ? 'ledger.backfill_dry_run' : 'ledger.backfill',
          targetType: 'ledger',
          targetId: `backfill:${source.kind}`,
          reason,
          before: null,
          after: countsOf(report),
        },
      ],
    });
    return report;
  });
}

const dayMs = 86_400_000;

/** The Rollout page's figures: the mode and since when, days in shadow against the longest cycle, shadow's duplicate rate by type, the backfill state. */
export async function loadRolloutView(
  db: DbOrTx,
  {
    fallbackMode,
    notices,
    label,
    refreshMs,
    now = new Date(),
  }: { fallbackMode: LedgerMode; notices: { config: NoticeConfig; ruleSet: RuleSet }; label: (type: string) => string; refreshMs: number; now?: Date },
): Promise<RolloutView> {
  const rows = await listRuntimeControls(db);
  const stored = rows.find((row) => row.name === modeName) ?? null;
  const request = rows.find((row) => row.name === requestName) ?? null;
  const mode: LedgerMode = stored ? (stored.value === 'shadow' ? 'shadow' : 'enforce') : fallbackMode;
  const shadowSince = mode === 'shadow' && stored ? stored.changedAt : null;
  const duplicatesFrom = shadowSince ?? new Date(now.getTime() - 90 * dayMs);
  const [duplicates, treatedAsNew, lastBackfill] = await Promise.all([
    countShadowDuplicates(db, { from: duplicatesFrom }),
    countSentJobsWithoutLedgerRow(db),
    listAuditEntries(db, { filter: { action: 'ledger.backfill' }, limit: 1 }),
  ]);
  const last = lastBackfill[0] ?? null;
  return {
    mode,
    stored: stored !== null,
    since: stored ? stored.changedAt.toISOString() : null,
    changedBy: stored?.changedBy ?? null,
    reason: stored?.reason ?? null,
    daysInShadow: shadowSince ? Math.floor((now.getTime() - shadowSince.getTime()) / dayMs) : null,
    longestCycle: longestRenewalCycle(notices),
    duplicatesFrom: duplicatesFrom.toISOString(),
    duplicates: duplicates.map((row) => ({ ...row, label: label(row.noticeType), rate: row.sent === 0 ? null : row.wouldSuppress / row.sent })),
    backfill: {
      treatedAsNew,
      last: last ? { at: last.at.toISOString(), actor: last.actor, reason: last.reason, counts: last.after as BackfillCounts } : null,
    },
    request: request ? { requestedBy: request.changedBy, reason: request.reason, at: request.changedAt.toISOString() } : null,
    refreshMs,
  };
}
