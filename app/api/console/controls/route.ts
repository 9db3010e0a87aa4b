import { listControls, setPauseContract } from '@/lib/api/console/controls';
import { config } from '@/lib/config';
import { listPauseViews, setPause } from '@/lib/controls/service';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';
import { getDb } from '@/lib/process-db';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listControls, async ({ db }) => {
  const horizonMs = config().WINDOW_AT_RISK_WITHIN;
  return ok({ pauses: await listPauseViews(db, { horizonMs }), horizonMs });
});

export const POST = consoleRoute(setPauseContract, async ({ input, actor }) => ok(await setPause(getDb(), { ...input, actor })));
