import { guarded, jsonOk, parseBody } from '@/lib/auth/guard';
import { actorOf, refusalResponse } from '@/lib/replay/http';
import { replayDecideRequest } from '@/lib/replay/requests';
import { decideReplay } from '@/lib/replay/service';

export const dynamic = 'force-dynamic';

/** Approve or reject: managers only, never the requester (four-eyes, also a database check). */
export const POST = guarded('replay.approve', async ({ db, request, session }) => {
  const body = await parseBody(request, replayDecideRequest);
  if (!body.ok) return body.response;
  const result = await decideReplay(db, { ...body.data, actor: actorOf(session) });
  if (!result.ok) return refusalResponse(result.refusal);
  return jsonOk({ id: result.value.id, state: result.value.state });
});
