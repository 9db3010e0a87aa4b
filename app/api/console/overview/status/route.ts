import { getStatusOverview } from '@/lib/api/console/overview';
import { config } from '@/lib/config';
import { getWakeupPublisher } from '@/lib/queue';
import { loadStatusOverview } from '@/lib/console/overview';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(getStatusOverview, async ({ db }) =>
  ok(
    await loadStatusOverview(db, {
      now: new Date(),
      quarantineAfterMs: config().QUARANTINE_AFTER,
      atRiskWithinMs: config().WINDOW_AT_RISK_WITHIN,
      retryCeiling: config().MAX_ATTEMPTS,
      countDeadLettered: async () => (await getWakeupPublisher()).deadLetteredCount(),
    }),
  ),
);
