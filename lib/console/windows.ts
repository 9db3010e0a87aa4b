import 'server-only';
import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import {
  countComplianceGaps,
  countMissedWindows,
  countWindowsAtRisk,
  listComplianceGaps,
  listMissedWindows,
  listWindowsAtRisk,
  lockComplianceGap,
  markGapResolved,
  type GapRow,
  type WindowJobRow,
} from '@/db/queries/windows';
import type { AtRiskPage, GapPage, GapView, MissedPage, NoticeConfigView, ResolveGapOutcome, WindowJobView, WindowsSummary } from '@/lib/api/console/windows';
import { ok, refuse, type Result } from '@/lib/http/refusal';
import { activeNoticeConfig } from '@/lib/windows/active';

/** Rows per page on the Windows page. */
export const WINDOWS_PAGE_SIZE = 50;

function typeInfo(noticeType: string): { label: string; category: string | null } {
  const type = activeNoticeConfig().config.noticeTypes[noticeType];
  return type ? { label: type.label, category: type.category } : { label: noticeType, category: null };
}

/** At risk, missed in the last 24 h / 7 d, and open gaps, by notice type × region: the overview's banner and table. */
export async function loadWindowsSummary(
  db: DbOrTx,
  { now, atRiskWithinMs, retryCeiling }: { now: Date; atRiskWithinMs: number; retryCeiling?: number },
): Promise<WindowsSummary> {
  const [atRisk, missed, gaps] = await Promise.all([
    countWindowsAtRisk(db, { now, withinMs: atRiskWithinMs, retryCeiling }),
    countMissedWindows(db, { now }),
    countComplianceGaps(db),
  ]);
  const rows = new Map<string, WindowsSummary['rows'][number]>();
  const rowFor = (noticeType: string, region: string) => {
    const id = `${noticeType}\u0000${region}`;
    let row = rows.get(id);
    if (!row) {
      row = { noticeType, ...typeInfo(noticeType), region, atRisk: 0, missed24h: 0, missed7d: 0, gaps: 0 };
      rows.set(id, row);
    }
    return row;
  };
  for (const row of atRisk) rowFor(row.noticeType, row.region).atRisk = row.count;
  for (const row of missed) Object.assign(rowFor(row.noticeType, row.region), { missed24h: row.last24h, missed7d: row.last7d });
  for (const row of gaps) rowFor(row.noticeType, row.region).gaps = row.count;
  const sorted = [...rows.values()].sort(
    (a, b) =>
      b.gaps - a.gaps || b.atRisk - a.atRisk || b.missed24h - a.missed24h || a.noticeType.localeCompare(b.noticeType) || a.region.localeCompare(b.region),
  );
  const sum = (pick: (row: WindowsSummary['rows'][number]) => number) => sorted.reduce((total, row) => total + pick(row), 0);
  return {
    generatedAt: now.toISOString(),
    atRiskWithinMs,
    totals: { atRisk: sum((row) => row.atRisk), missed24h: sum((row) => row.missed24h), missed7d: sum((row) => row.missed7d), gaps: sum((row) => row.gaps) },
    rows: sorted,
  };
}

function jobView(row: WindowJobRow): WindowJobView {
  return {
    id: row.id,
    noticeKey: row.noticeKey,
    noticeType: row.noticeType,
    category: row.category,
    region: row.region,
    subjectId: row.subjectId,
    state: row.state,
    dueAt: row.dueAt.toISOString(),
    windowEarliest: row.windowEarliest?.toISOString() ?? null,
    windowLatest: row.deadlineAt.toISOString(),
    ruleIds: row.ruleIds,
    ruleSetVersion: row.ruleSetVersion,
    suppressionReason: row.suppressionReason,
    attempts: row.attempts,
    lastErrorClass: row.lastErrorClass,
    updatedAt: row.updatedAt.toISOString(),
  };
}

type JobPageInput = { afterAt?: string; afterId?: string };

function nextJobCursor(rows: WindowJobRow[], limit: number): { afterAt: string; afterId: string } | null {
  const last = rows[limit - 1];
  return rows.length === limit && last ? { afterAt: last.cursorAt, afterId: last.id } : null;
}

export async function loadAtRiskPage(
  db: DbOrTx,
  {
    now,
    atRiskWithinMs,
    input,
    limit = WINDOWS_PAGE_SIZE,
    retryCeiling,
  }: { now: Date; atRiskWithinMs: number; input: JobPageInput; limit?: number; retryCeiling?: number },
): Promise<AtRiskPage> {
  const after = input.afterAt && input.afterId ? { at: input.afterAt, id: input.afterId } : undefined;
  const rows = await listWindowsAtRisk(db, { now, withinMs: atRiskWithinMs, limit, after, retryCeiling });
  return { generatedAt: now.toISOString(), atRiskWithinMs, rows: rows.map(jobView), next: nextJobCursor(rows, limit) };
}

export async function loadMissedPage(
  db: DbOrTx,
  { now, input, limit = WINDOWS_PAGE_SIZE }: { now: Date; input: JobPageInput; limit?: number },
): Promise<MissedPage> {
  const after = input.afterAt && input.afterId ? { at: input.afterAt, id: input.afterId } : undefined;
  const rows = await listMissedWindows(db, { now, limit, after });
  return { generatedAt: now.toISOString(), rows: rows.map(jobView), next: nextJobCursor(rows, limit) };
}

function gapView(row: GapRow): GapView {
  return {
    id: row.id,
    noticeType: row.noticeType,
    label: typeInfo(row.noticeType).label,
    reason: row.reason,
    detail: row.detail,
    ruleIds: row.ruleIds,
    ruleSetVersion: row.ruleSetVersion,
    region: row.region,
    createdAt: row.createdAt.toISOString(),
    eventType: row.eventType,
    identity: row.identity,
    anchorAt: row.anchorAt.toISOString(),
    revision: row.revision,
  };
}

export async function loadGapPage(
  db: DbOrTx,
  { now, input, limit = WINDOWS_PAGE_SIZE }: { now: Date; input: { afterAt?: string; afterId?: number }; limit?: number },
): Promise<GapPage> {
  const after = input.afterAt && input.afterId ? { at: input.afterAt, id: input.afterId } : undefined;
  const rows = await listComplianceGaps(db, { limit, after });
  const last = rows[limit - 1];
  return { generatedAt: now.toISOString(), rows: rows.map(gapView), next: rows.length === limit && last ? { afterAt: last.cursorAt, afterId: last.id } : null };
}

/**
 * Resolves one compliance gap in ONE transaction: lock it, refuse one already resolved (by
 * someone else meanwhile: 409, nothing written), mark it, and write the audit row with before
 * and after, as quarantine resolution does.
 */
export async function resolveComplianceGap(
  db: DbOrTx,
  { id, reason, actor, now = new Date() }: { id: number; reason: string; actor: string; now?: Date },
): Promise<Result<ResolveGapOutcome>> {
  return db.transaction(async (tx) => {
    const gap = await lockComplianceGap(tx, { id });
    if (!gap) return refuse('not_found', `No compliance gap ${id}: it may have been deleted with its event.`);
    if (gap.resolvedAt) {
      return refuse(
        'conflict',
        `Gap ${id} was already resolved by ${gap.resolvedBy ?? 'someone'} at ${gap.resolvedAt.toISOString()}: ${gap.resolution ?? ''}`,
        {
          code: 'already_resolved',
        },
      );
    }
    const marked = await markGapResolved(tx, { id, by: actor, resolution: reason, at: now });
    if (!marked) return refuse('conflict', `Gap ${id} was resolved meanwhile.`, { code: 'already_resolved' });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: 'gap.resolve',
          targetType: 'unplanned_notice',
          targetId: String(id),
          reason,
          before: {
            noticeType: gap.noticeType,
            region: gap.region,
            reason: gap.reason,
            ruleIds: gap.ruleIds,
            eventType: gap.eventType,
            identity: gap.identity,
            resolvedAt: null,
          },
          after: { resolvedAt: marked.resolvedAt.toISOString(), resolvedBy: actor, resolution: reason },
        },
      ],
    });
    return ok({ id, resolvedAt: marked.resolvedAt.toISOString(), resolvedBy: actor });
  });
}

const clock = (minute: number) => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

/** What activeNoticeConfig() loaded, for the read-only admin page. Offsets in ms as the planner uses them. */
export function loadNoticeConfigView(): NoticeConfigView {
  const { config, ruleSet } = activeNoticeConfig();
  return {
    file: config.file,
    ruleSetVersion: ruleSet.version,
    eventTypes: Object.entries(config.eventTypes).map(([name, event]) => ({
      name,
      label: event.label,
      identity: Object.keys(event.identity),
      anchor: event.anchor,
      subjectField: event.subjectField,
    })),
    noticeTypes: Object.values(config.noticeTypes).map((type) => ({
      name: type.name,
      label: type.label,
      event: type.event,
      identity: type.identity,
      channel: type.channel,
      category: type.category,
      window: type.window ? { fromMs: type.window.from, toMs: type.window.to } : null,
      obligation: type.obligation,
      quietHours: type.quietHours ? `${clock(type.quietHours.startMinute)}-${clock(type.quietHours.endMinute)}` : null,
      template: type.template,
      correction: type.correction,
      enabled: type.enabled,
    })),
    rules: ruleSet.rules.map((rule) => ({
      id: rule.id,
      version: rule.version,
      title: rule.title,
      jurisdiction: rule.jurisdiction,
      obligation: rule.obligation,
      anchor: rule.anchor,
      window: { unit: rule.window.unit, min: rule.window.min ?? null, max: rule.window.max ?? null },
      dutyHolder: rule.dutyHolder,
      sourceUrl: rule.sourceUrl,
      checkedAt: rule.checkedAt,
      unconfirmed: rule.unconfirmed,
      enabled: rule.enabled,
    })),
  };
}
