import { getReplay } from '@/db/queries/replays';
import { rejectedRowsContract } from '@/lib/api/console/replays';
import { consoleRoute } from '@/lib/http/console-route';
import { ok, refuse } from '@/lib/http/refusal';
import { rejectionsCsv } from '@/lib/replay/upload';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(rejectedRowsContract, async ({ db, input }) => {
  const replay = await getReplay(db, { id: input.id });
  if (!replay) return refuse('not_found', 'No such replay.');
  return ok({ filename: `${replay.batchId}-rejected.csv`, csv: rejectionsCsv(replay.uploadRejections ?? []) });
});
