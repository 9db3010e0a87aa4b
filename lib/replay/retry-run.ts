import type { DbOrTx } from '@/db/client';
import { materializeRetryItems, reopenFailedJobs } from '@/db/queries/failures';
import type { ReplayFilter } from '@/db/schema/replays';

/**
 * An approved bulk retry starts: its job set is frozen as replay items (failed, matching, window
 * still open now) and those jobs go back to pending in the same transaction; the replay runner
 * then publishes their wake-ups batch by batch, paced like any replay (lib/replay/runner.ts).
 */
export async function startRetryRun(
  tx: DbOrTx,
  { replayId, retry, now }: { replayId: string; retry: NonNullable<ReplayFilter['retryFailed']>; now: Date },
): Promise<number> {
  const filter = { errorClass: retry.errorClass, from: new Date(retry.from), to: new Date(retry.to), noticeType: retry.noticeType, channel: retry.channel };
  const jobIds = await materializeRetryItems(tx, { replayId, filter, now });
  const reopened = await reopenFailedJobs(tx, { ids: jobIds, now });
  return reopened.length;
}
