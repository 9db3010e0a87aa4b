import type { Db } from '@/db/client';
import { listRuntimeControls } from '@/db/queries/runtime-controls';
import type { Logger } from '@/lib/log';
import { ledgerModeGauge, sendingPaused } from '@/lib/metrics/registry';
import { startPeriodic } from '@/lib/periodic';
import { emptySnapshot, snapshotOf, type ControlsSnapshot } from './runtime-controls';

export type WorkerControls = {
  /** The latest snapshot: synchronous, never a query (the send path calls it per notice). */
  current: () => ControlsSnapshot;
  /** How long a paused job is deferred: one refresh, so a resume is seen within about two. */
  refreshMs: number;
  refresh: () => Promise<void>;
  stop: () => Promise<void>;
};

/** Publishes the snapshot's pauses as notice_ledger_sending_paused{scope,target} (alert NoticeLedgerSendingPaused). */
function publishGauge(snapshot: ControlsSnapshot, fallbackMode: 'shadow' | 'enforce'): void {
  const mode = snapshot.ledgerMode ?? fallbackMode;
  ledgerModeGauge.set({ mode: 'shadow' }, mode === 'shadow' ? 1 : 0);
  ledgerModeGauge.set({ mode: 'enforce' }, mode === 'enforce' ? 1 : 0);
  sendingPaused.reset();
  for (const pause of snapshot.pauses) {
    const target = pause.target.scope === 'all' ? '*' : pause.target.scope === 'channel' ? pause.target.channel : pause.target.noticeType;
    sendingPaused.set({ scope: pause.target.scope, target }, 1);
  }
}

/**
 * Each worker's copy of runtime_controls: one query (a handful of rows) at start and every
 * `refreshMs`, never per notice. A failed refresh keeps the last snapshot (logged). The ledger
 * mode is the stored one (`ledger_mode`, which the worker stores from LEDGER_MODE at start when
 * absent, lib/controls/rollout.ts); `fallbackMode` only fills the gauge before a row exists.
 */
export async function startWorkerControls({
  db,
  refreshMs,
  logger,
  fallbackMode = 'enforce',
}: {
  db: Db;
  refreshMs: number;
  logger: Logger;
  fallbackMode?: 'shadow' | 'enforce';
}): Promise<WorkerControls> {
  let snapshot: ControlsSnapshot = emptySnapshot;
  const refresh = async () => {
    snapshot = snapshotOf(await listRuntimeControls(db));
    publishGauge(snapshot, fallbackMode);
  };
  await refresh();
  const periodic = startPeriodic({
    every: refreshMs,
    run: refresh,
    onError: (error) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'runtime controls refresh failed; keeping the last'),
  });
  return { current: () => snapshot, refreshMs, refresh, stop: periodic.stop };
}
