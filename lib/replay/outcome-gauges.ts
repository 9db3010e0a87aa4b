import type { DbOrTx } from '@/db/client';
import { countBatchOutcomes, listRunningBatchIds } from '@/db/queries/replays';
import { replayOutcomes } from '@/lib/metrics/registry';

/**
 * notice_ledger_replay_outcomes, read at scrape time from the attempt log (delivery_attempts by
 * batch_id, a partial index): per running replay, its notices sent, suppressed as duplicate
 * (the ledger refused them: already sent or claimed) and failed. Only running replays are
 * labelled, so the label set stays as small as the replays in flight; a finished one drops out
 * and its counts stay on the replay page.
 */
export async function refreshReplayGauges(db: DbOrTx): Promise<void> {
  const batchIds = await listRunningBatchIds(db);
  const outcomes = await countBatchOutcomes(db, { batchIds });
  replayOutcomes.reset();
  for (const batch of batchIds) {
    const counts = outcomes.get(batch);
    replayOutcomes.set({ batch_id: batch, outcome: 'sent' }, counts?.sent ?? 0);
    replayOutcomes.set({ batch_id: batch, outcome: 'suppressed_duplicate' }, counts?.duplicates ?? 0);
    replayOutcomes.set({ batch_id: batch, outcome: 'failed' }, counts?.failed ?? 0);
  }
}
