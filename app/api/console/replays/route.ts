import { guarded, jsonOk, parseBody } from '@/lib/auth/guard';
import { config } from '@/lib/config';
import { actorOf, refusalResponse } from '@/lib/replay/http';
import { replayCreateRequest } from '@/lib/replay/requests';
import { requestReplay } from '@/lib/replay/service';
import { listReplayViews } from '@/lib/replay/view';

export const dynamic = 'force-dynamic';

export const GET = guarded('replay.read', async ({ db }) => jsonOk(await listReplayViews(db, { limit: 50 })));

export const POST = guarded('replay.request', async ({ db, request, session }) => {
  const body = await parseBody(request, replayCreateRequest);
  if (!body.ok) return body.response;
  const result = await requestReplay(db, { actor: actorOf(session), input: body.data, secret: config().NOTICE_KEY_SECRET });
  if (!result.ok) return refusalResponse(result.refusal);
  return jsonOk({ id: result.value.replay.id, batchId: result.value.replay.batchId, dryRun: result.value.dryRun }, 201);
});
