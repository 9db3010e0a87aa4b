import type { DbOrTx } from '@/db/client';
import { countBatchOutcomes, listReplays, type ReplayListRow } from '@/db/queries/replays';
import type { ReplayProgress, ReplayView } from '@/lib/api/console/replays';
import { dryRunVerdict } from './verdict';
import { isUuid } from '@/db/uuid';

/** What the console and the CLI show about a replay: the row, its dry run, and live progress (lib/api/console/replays.ts). */
function toView(row: ReplayListRow, outcomes: { suppressed: number; duplicates: number; sent: number; failed: number } | undefined): ReplayView {
  return {
    id: row.id,
    batchId: row.batchId,
    state: row.state,
    filter: row.filter,
    dryRun: row.dryRun,
    verdict: row.dryRun ? dryRunVerdict(row.dryRun) : null,
    requestedBy: row.requestedBy,
    requesterEmail: row.requesterEmail,
    requestReason: row.requestReason,
    deciderEmail: row.deciderEmail,
    decisionReason: row.decisionReason,
    requestedAt: row.requestedAt.toISOString(),
    decidedAt: row.decidedAt?.toISOString() ?? null,
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    rejectedRows: row.uploadRejections?.length ?? 0,
    progress: {
      total: row.total,
      published: row.published,
      suppressed: outcomes?.suppressed ?? 0,
      duplicates: outcomes?.duplicates ?? 0,
      sent: outcomes?.sent ?? 0,
      failed: outcomes?.failed ?? 0,
    },
  };
}

export async function listReplayViews(db: DbOrTx, { limit = 50 }: { limit?: number } = {}): Promise<ReplayView[]> {
  const rows = await listReplays(db, { limit });
  const outcomes = await countBatchOutcomes(db, { batchIds: rows.filter((row) => row.startedAt).map((row) => row.batchId) });
  return rows.map((row) => toView(row, outcomes.get(row.batchId)));
}

export async function getReplayView(db: DbOrTx, { id }: { id: string }): Promise<ReplayView | null> {
  if (!isUuid(id)) return null;
  const [row] = await listReplays(db, { limit: 1, id });
  if (!row) return null;
  const outcomes = await countBatchOutcomes(db, { batchIds: [row.batchId] });
  return toView(row, outcomes.get(row.batchId));
}

export async function replayProgress(db: DbOrTx, { id }: { id: string }): Promise<ReplayProgress | null> {
  return (await getReplayView(db, { id }))?.progress ?? null;
}
