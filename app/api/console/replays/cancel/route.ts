import { cancelReplayContract } from '@/lib/api/console/replays';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';
import { cancelReplay } from '@/lib/replay/service';
import { actorOf } from '@/lib/replay/transitions';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(cancelReplayContract, async ({ db, input, session }) => {
  const result = await cancelReplay(db, { ...input, actor: actorOf(session) });
  return result.ok ? ok({ id: result.data.id, state: result.data.state }) : result;
});
