import { getReplay } from '@/db/queries/replays';
import { guarded, jsonError, parseQuery } from '@/lib/auth/guard';
import { csvResponse } from '@/lib/replay/http';
import { replayIdQuery } from '@/lib/replay/requests';
import { rejectionsCsv } from '@/lib/replay/upload';

export const dynamic = 'force-dynamic';

/** The uploaded rows a replay refused, and why, as CSV. */
export const GET = guarded('replay.read', async ({ db, request }) => {
  const query = parseQuery(request, replayIdQuery);
  if (!query.ok) return query.response;
  const replay = await getReplay(db, { id: query.data.id });
  if (!replay) return jsonError(404, { code: 'not_found', message: 'No such replay.' });
  return csvResponse(rejectionsCsv(replay.uploadRejections ?? []), `${replay.batchId}-rejected.csv`);
});
