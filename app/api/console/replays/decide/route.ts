import { decideReplayContract } from '@/lib/api/console/replays';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';
import { decideReplay } from '@/lib/replay/service';
import { actorOf } from '@/lib/replay/transitions';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(decideReplayContract, async ({ db, input, session }) => {
  const result = await decideReplay(db, { ...input, actor: actorOf(session) });
  return result.ok ? ok({ id: result.data.id, state: result.data.state }) : result;
});
