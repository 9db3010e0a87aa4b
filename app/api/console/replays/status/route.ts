import { replayStatusContract } from '@/lib/api/console/replays';
import { consoleRoute } from '@/lib/http/console-route';
import { ok, refuse } from '@/lib/http/refusal';
import { getReplayView } from '@/lib/replay/view';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(replayStatusContract, async ({ db, input }) => {
  const view = await getReplayView(db, { id: input.id });
  return view ? ok(view) : refuse('not_found', 'No such replay.');
});
