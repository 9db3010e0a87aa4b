import type { Db } from '@/db/client';
import { finishReplayRun, getReplay, listRunningReplayIds } from '@/db/queries/replays';
import { insertAuditEntries } from '@/db/queries/audit';
import { config } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { getWakeupPublisher } from '@/lib/queue';
import { runReplay } from './runner';
import { scheduleUploadedItem } from './schedule-item';

/**
 * The console starts an approved run in its own process and returns at once; the page polls
 * progress. One runner per replay per process. A run interrupted by a restart stays
 * `running` and is picked up again by `resumeRunningReplays` (or `npm run ledger -- replay --run`).
 */

const active = new Map<string, Promise<void>>();
const log = createLogger('replay-runner');

export function startBackgroundRun({ db, replayId }: { db: Db; replayId: string }): void {
  if (active.has(replayId)) return;
  const run = (async () => {
    // The console's one publisher: with pg-boss the wake-ups commit with each batch.
    const queue = await getWakeupPublisher();
    await runReplay({ db, queue, replayId, scheduleItem: scheduleUploadedItem, perDomainPerSecond: config().RATE_LIMIT_PER_DOMAIN, logger: log });
  })()
    .catch(async (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      log.error({ replayId, err: message }, 'replay run failed');
      const replay = await getReplay(db, { id: replayId });
      if (!replay) return;
      await db.transaction(async (tx) => {
        const failed = await finishReplayRun(tx, { id: replayId, state: 'failed' });
        if (!failed) return;
        await insertAuditEntries(tx, {
          entries: [
            {
              actor: 'system:replay-runner',
              action: 'replay.fail',
              targetType: 'replay',
              targetId: replay.batchId,
              reason: message.slice(0, 500),
              before: { state: 'running' },
              after: { state: 'failed', published: failed.published },
            },
          ],
        });
      });
    })
    .finally(() => active.delete(replayId));
  active.set(replayId, run);
}

/** Waits for this process's runner of a replay, if any (tests, shutdown). */
export async function backgroundRunSettled(replayId: string): Promise<void> {
  await active.get(replayId);
}

export async function resumeRunningReplays(db: Db): Promise<number> {
  const ids = await listRunningReplayIds(db);
  for (const replayId of ids) startBackgroundRun({ db, replayId });
  return ids.length;
}
