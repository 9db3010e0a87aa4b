import { listAtRisk } from '@/lib/api/console/windows';
import { config } from '@/lib/config';
import { loadAtRiskPage } from '@/lib/console/windows';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listAtRisk, async ({ db, input }) =>
  ok(await loadAtRiskPage(db, { now: new Date(), atRiskWithinMs: config().WINDOW_AT_RISK_WITHIN, input, retryCeiling: config().MAX_ATTEMPTS })),
);
