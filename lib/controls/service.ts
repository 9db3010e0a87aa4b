import type { Db, DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { countPauseCost } from '@/db/queries/pause-cost';
import { listRuntimeControls, setRuntimeControl } from '@/db/queries/runtime-controls';
import type { PauseView } from '@/lib/api/console/controls';
import { describePause, pauseControlName, snapshotOf, type PauseTarget } from './runtime-controls';

/**
 * The kill switch, the one way the console and the CLI change a pause: the row and its audit
 * row in one transaction. Every worker sees it within RUNTIME_CONTROLS_REFRESH.
 */
export async function setPause(
  db: Db,
  { action, target, reason, actor }: { action: 'pause' | 'resume'; target: PauseTarget; reason: string; actor: string },
): Promise<{ changed: boolean; name: string; value: 'paused' | 'running' }> {
  const name = pauseControlName(target);
  const value = action === 'pause' ? 'paused' : 'running';
  return db.transaction(async (tx) => {
    const before = await setRuntimeControl(tx, { name, value, reason, changedBy: actor });
    const changed = (before?.value ?? 'running') !== value;
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: action === 'pause' ? 'sending.pause' : 'sending.resume',
          targetType: 'runtime_control',
          targetId: name,
          reason,
          before: before ? { value: before.value, changedBy: before.changedBy, changedAt: before.changedAt.toISOString() } : null,
          after: { value, label: describePause(target), changed },
        },
      ],
    });
    return { changed, name, value };
  });
}

/** The pauses that hold, each with what it costs: unsent notices in scope, and those whose window closes within the horizon. */
export async function listPauseViews(db: DbOrTx, { horizonMs }: { horizonMs: number }): Promise<PauseView[]> {
  const { pauses } = snapshotOf(await listRuntimeControls(db));
  return Promise.all(
    pauses.map(async (pause) => {
      const cost = await countPauseCost(db, {
        noticeType: pause.target.scope === 'notice_type' ? pause.target.noticeType : null,
        channel: pause.target.scope === 'channel' ? pause.target.channel : null,
        horizonMs,
      });
      return {
        name: pause.name,
        label: describePause(pause.target),
        reason: pause.reason,
        changedBy: pause.changedBy,
        since: pause.since.toISOString(),
        ...cost,
      };
    }),
  );
}
