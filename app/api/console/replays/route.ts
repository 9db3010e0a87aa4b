import { listReplaysContract, requestReplayContract } from '@/lib/api/console/replays';
import { config } from '@/lib/config';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';
import { requestReplay } from '@/lib/replay/service';
import { actorOf } from '@/lib/replay/transitions';
import { listReplayViews } from '@/lib/replay/view';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listReplaysContract, async ({ db }) => ok(await listReplayViews(db, { limit: 50 })));

export const POST = consoleRoute(requestReplayContract, async ({ db, input, upload, session }) => {
  // An uploaded file arrives validated (streamed, lib/replay/upload-body.ts); input.csv only marks it.
  const request = 'filter' in input ? input : { reason: input.reason, upload: upload ?? { ok: false as const, error: 'The file is empty.' } };
  const result = await requestReplay(db, { actor: actorOf(session), input: request, secret: config().NOTICE_KEY_SECRET });
  if (!result.ok) return result;
  return ok({ id: result.data.replay.id, batchId: result.data.replay.batchId, dryRun: result.data.dryRun });
});
