import { runReplayContract } from '@/lib/api/console/replays';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';
import { startReplay } from '@/lib/replay/service';
import { actorOf } from '@/lib/replay/transitions';

export const dynamic = 'force-dynamic';

/** Only moves the replay to running; the workers publish it (lib/replay/runner.ts), so a console deploy pauses nothing. */
export const POST = consoleRoute(runReplayContract, async ({ db, input, session }) => {
  const result = await startReplay(db, { id: input.id, actor: actorOf(session), reason: input.reason ?? 'run approved replay' });
  if (!result.ok) return result;
  return ok({ id: result.data.id, state: result.data.state, total: result.data.total });
});
