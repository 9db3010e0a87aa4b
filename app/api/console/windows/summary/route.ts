import { getWindowsSummary } from '@/lib/api/console/windows';
import { config } from '@/lib/config';
import { loadWindowsSummary } from '@/lib/console/windows';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(getWindowsSummary, async ({ db }) =>
  ok(await loadWindowsSummary(db, { now: new Date(), atRiskWithinMs: config().WINDOW_AT_RISK_WITHIN, retryCeiling: config().MAX_ATTEMPTS })),
);
