import { getDb } from '@/db/client';
import { guarded, jsonOk, parseBody } from '@/lib/auth/guard';
import { startBackgroundRun } from '@/lib/replay/background';
import { actorOf, refusalResponse } from '@/lib/replay/http';
import { replayRunRequest } from '@/lib/replay/requests';
import { startReplay } from '@/lib/replay/service';

export const dynamic = 'force-dynamic';

/** Starts (or resumes) an approved replay; publishing continues in the background, paced per domain. */
export const POST = guarded('replay.request', async ({ db, request, session }) => {
  const body = await parseBody(request, replayRunRequest);
  if (!body.ok) return body.response;
  const result = await startReplay(db, { id: body.data.id, actor: actorOf(session), reason: body.data.reason ?? 'run approved replay' });
  if (!result.ok) return refusalResponse(result.refusal);
  startBackgroundRun({ db: getDb(), replayId: result.value.id });
  return jsonOk({ id: result.value.id, state: result.value.state, total: result.value.total }, 202);
});
