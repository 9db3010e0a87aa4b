import { decideEnforceContract } from '@/lib/api/console/rollout';
import { decideEnforce } from '@/lib/controls/rollout';
import { consoleRoute } from '@/lib/http/console-route';
import { getDb } from '@/lib/process-db';
import { actorOf } from '@/lib/replay/transitions';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(decideEnforceContract, async ({ input, session }) =>
  decideEnforce(getDb(), { actor: actorOf(session), decision: input.decision, reason: input.reason }),
);
