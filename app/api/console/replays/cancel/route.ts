import { guarded, jsonOk, parseBody } from '@/lib/auth/guard';
import { actorOf, refusalResponse } from '@/lib/replay/http';
import { replayCancelRequest } from '@/lib/replay/requests';
import { cancelReplay } from '@/lib/replay/service';

export const dynamic = 'force-dynamic';

export const POST = guarded('replay.request', async ({ db, request, session }) => {
  const body = await parseBody(request, replayCancelRequest);
  if (!body.ok) return body.response;
  const result = await cancelReplay(db, { ...body.data, actor: actorOf(session) });
  if (!result.ok) return refusalResponse(result.refusal);
  return jsonOk({ id: result.value.id, state: result.value.state });
});
