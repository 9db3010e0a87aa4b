import { guarded, jsonError, jsonOk, parseQuery } from '@/lib/auth/guard';
import { replayIdQuery } from '@/lib/replay/requests';
import { getReplayView } from '@/lib/replay/view';

export const dynamic = 'force-dynamic';

/** One replay with live progress (the page polls this while it runs). */
export const GET = guarded('replay.read', async ({ db, request }) => {
  const query = parseQuery(request, replayIdQuery);
  if (!query.ok) return query.response;
  const view = await getReplayView(db, { id: query.data.id });
  if (!view) return jsonError(404, { code: 'not_found', message: 'No such replay.' });
  return jsonOk(view);
});
