import { randomBytes } from 'node:crypto';
import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { findUserById } from '@/db/queries/users';
import {
  cancelReplayRow,
  countFilterKeysByLedgerState,
  countReplayItems,
  decideReplay as decideReplayRow,
  getReplay,
  insertReplay,
  insertUploadedItems,
  materializeFilterItems,
  startReplayRun,
} from '@/db/queries/replays';
import type { ReplayFilter, ReplayRow } from '@/db/schema/replays';
import type { DryRun, UploadDryRun } from '@/lib/api/console/replays';
import { ok, refuse, type Refusal, type Result } from '@/lib/http/refusal';
import { countKeysAgainstLedger } from './dry-run';
import { startRetryRun } from './retry-run';
import { checkCancel, checkDecision, checkRequest, checkRun, fourEyesRules, replayRefusal, type Actor } from './transitions';
import { MAX_STORED_REJECTIONS, validateUpload, type UploadedRow, type UploadValidation } from './upload';
import { dryRunVerdict } from './verdict';

function conflict(message: string): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: replayRefusal('conflict', message) };
}

export function newBatchId(now = new Date()): string {
  return `replay-${now.toISOString().slice(0, 10).replace(/-/g, '')}-${randomBytes(4).toString('hex')}`;
}

export async function dryRunFilter(db: DbOrTx, { filter }: { filter: ReplayFilter }): Promise<DryRun> {
  const started = performance.now();
  const counts = await countFilterKeysByLedgerState(db, { filter });
  return { counts, verdict: dryRunVerdict(counts), elapsedMs: Math.round(performance.now() - started) };
}

/** Distinct keys against the ledger, one set-based statement per key range (lib/replay/dry-run.ts). */
export async function dryRunKeys(db: DbOrTx, { keys }: { keys: readonly string[] }): Promise<DryRun> {
  const started = performance.now();
  const counts = await countKeysAgainstLedger(db, { keys });
  return { counts, verdict: dryRunVerdict(counts), elapsedMs: Math.round(performance.now() - started) };
}

export type UploadCheck = { rows: UploadedRow[]; dryRun: UploadDryRun };

/** A file that cannot be read as an upload at all (no header, wrong columns) is invalid input. */
export async function dryRunUpload(db: DbOrTx, { csv, secret }: { csv: string; secret: string }): Promise<Result<UploadCheck>> {
  return dryRunValidated(db, { validation: validateUpload({ csv, secret }) });
}

/** The same for a file already validated as it arrived (the console's streamed upload). */
export async function dryRunValidated(db: DbOrTx, { validation }: { validation: UploadValidation }): Promise<Result<UploadCheck>> {
  if (!validation.ok) return refuse('invalid_input', validation.error);
  const dryRun = await dryRunKeys(db, { keys: validation.rows.map((row) => row.key) });
  return ok({ rows: validation.rows, dryRun: { ...dryRun, accepted: validation.rows.length, rejections: validation.rejections } });
}

export type RequestInput = { reason: string } & ({ filter: Omit<ReplayFilter, 'uploaded'> } | { csv: string } | { upload: UploadValidation });

export type RequestResult = { replay: ReplayRow; dryRun: DryRun | UploadDryRun };

/** An operator's request: dry run, replay row, uploaded items and the audit row in one transaction. */
export async function requestReplay(
  db: DbOrTx,
  { actor, input, secret }: { actor: Actor; input: RequestInput; secret: string },
): Promise<Result<RequestResult>> {
  const refusal = checkRequest({ actor });
  if (refusal) return { ok: false, refusal };
  let rows: UploadedRow[] = [];
  let dryRun: DryRun | UploadDryRun;
  let filter: ReplayFilter;
  if ('csv' in input || 'upload' in input) {
    const check = 'csv' in input ? await dryRunUpload(db, { csv: input.csv, secret }) : await dryRunValidated(db, { validation: input.upload });
    if (!check.ok) return conflict(check.refusal.message);
    if (check.data.rows.length === 0)
      return conflict(`No row of the file is valid (${check.data.dryRun.rejections.length} rejected); download the rejected rows to see why.`);
    rows = check.data.rows;
    dryRun = check.data.dryRun;
    filter = { uploaded: true };
  } else {
    filter = input.filter;
    dryRun = await dryRunFilter(db, { filter });
    if (dryRun.counts.total === 0) return conflict(dryRun.verdict.message);
  }
  const rejections = 'rejections' in dryRun ? dryRun.rejections.slice(0, MAX_STORED_REJECTIONS) : null;
  const replay = await db.transaction(async (tx) => {
    const row = await insertReplay(tx, {
      batchId: newBatchId(),
      filter,
      dryRun: dryRun.counts,
      requestedBy: actor.id,
      requestReason: input.reason,
      total: dryRun.counts.total,
      uploadRejections: rejections,
    });
    await insertUploadedItems(tx, {
      replayId: row.id,
      items: rows.map((r) => ({
        noticeKey: r.key,
        line: r.line,
        noticeType: r.fact.type,
        identity: r.fact.identity,
        revision: r.fact.revision,
        recipientEmail: r.recipientEmail,
        recipientTimeZone: r.recipientTimeZone,
        customerId: r.customerId,
        dueAt: r.dueAt,
        deadlineAt: r.deadlineAt,
        evidenceRef: r.evidenceRef,
        payload: r.payload,
        anchorAt: r.anchorAt,
        recipientLocale: r.recipientLocale,
        recipientPhone: r.recipientPhone,
        channel: r.channel,
      })),
    });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: actor.email,
          action: 'replay.request',
          targetType: 'replay',
          targetId: row.batchId,
          reason: input.reason,
          before: null,
          after: { id: row.id, state: row.state, filter, dryRun: dryRun.counts, rejectedRows: rejections?.length ?? 0 },
        },
      ],
    });
    return row;
  });
  return ok({ replay, dryRun });
}

/** A manager's approval or rejection; never the requester's own (four-eyes, also a DB check). */
export async function decideReplay(
  db: DbOrTx,
  { id, actor, decision, reason }: { id: string; actor: Actor; decision: 'approve' | 'reject'; reason: string },
): Promise<Result<ReplayRow>> {
  return db.transaction(async (tx) => {
    const replay = await getReplay(tx, { id });
    if (!replay) return conflict('No such replay.');
    const [requester, approver] = await Promise.all([findUserById(tx, { id: replay.requestedBy }), findUserById(tx, { id: actor.id })]);
    // Who created whom, for the four-eyes rule; the decision's statement checks the same again (db/queries/replays.ts).
    const accounts = { requesterCreatedBy: requester?.createdBy ?? null, approverCreatedBy: approver?.createdBy ?? null };
    const refusal = checkDecision({ replay, actor, accounts });
    if (refusal) return { ok: false, refusal };
    const updated = await decideReplayRow(tx, { id, decidedBy: actor.id, state: decision === 'approve' ? 'approved' : 'rejected', reason });
    if (!updated) return conflict('The replay changed meanwhile; reload and try again.');
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: actor.email,
          action: `replay.${decision}`,
          targetType: 'replay',
          targetId: replay.batchId,
          reason,
          before: { state: replay.state },
          after: { state: updated.state, decidedBy: actor.email, fourEyes: { held: fourEyesRules } },
        },
      ],
    });
    return ok(updated);
  });
}

export async function cancelReplay(db: DbOrTx, { id, actor, reason }: { id: string; actor: Actor; reason: string }): Promise<Result<ReplayRow>> {
  return db.transaction(async (tx) => {
    const replay = await getReplay(tx, { id });
    if (!replay) return conflict('No such replay.');
    const refusal = checkCancel({ replay, actor });
    if (refusal) return { ok: false, refusal };
    // Waits for a worker's in-flight batch (it holds the row `for update`), so nothing is published after this commits.
    const updated = await cancelReplayRow(tx, { id });
    if (!updated) return conflict('The replay finished meanwhile.');
    const items = await countReplayItems(tx, { replayId: id });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: actor.email,
          action: 'replay.cancel',
          targetType: 'replay',
          targetId: replay.batchId,
          reason,
          before: { state: replay.state, published: replay.published },
          after: { state: updated.state, published: items.published, unpublished: items.total - items.published },
        },
      ],
    });
    return ok(updated);
  });
}

/** Moves an approved replay to running and freezes its job set; the workers then publish it (lib/replay/runner.ts). */
export async function startReplay(db: DbOrTx, { id, actor, reason }: { id: string; actor: Actor; reason: string }): Promise<Result<ReplayRow>> {
  return db.transaction(async (tx) => {
    const replay = await getReplay(tx, { id });
    if (!replay) return conflict('No such replay.');
    const refusal = checkRun({ replay, actor });
    if (refusal) return { ok: false, refusal };
    const retry = replay.filter.retryFailed;
    if (retry) await startRetryRun(tx, { replayId: id, retry, now: new Date() });
    else if (!replay.filter.uploaded) await materializeFilterItems(tx, { replayId: id, filter: replay.filter });
    const items = await countReplayItems(tx, { replayId: id });
    const updated = await startReplayRun(tx, { id, total: items.total });
    if (!updated) return conflict('The replay changed meanwhile; reload and try again.');
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: actor.email,
          action: 'replay.run',
          targetType: 'replay',
          targetId: replay.batchId,
          reason,
          before: { state: replay.state, published: items.published },
          after: { state: updated.state, total: items.total },
        },
      ],
    });
    return ok(updated);
  });
}
