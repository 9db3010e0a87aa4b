import { after } from 'next/server';
import { getDb } from '@/lib/process-db';
import { scrapeConsoleMetrics } from '@/lib/api/metrics';
import { config } from '@/lib/config';
import { renderConsoleMetrics } from '@/lib/console/metrics';
import { scrapeRoute } from '@/lib/http/scrape-route';
import { registry } from '@/lib/metrics/registry';

export const dynamic = 'force-dynamic';

export const GET = scrapeRoute(scrapeConsoleMetrics, async () => ({
  contentType: registry.contentType,
  text: await renderConsoleMetrics(getDb(), {
    quarantineAfterMs: config().QUARANTINE_AFTER,
    windowAtRiskWithinMs: config().WINDOW_AT_RISK_WITHIN,
    retryCeiling: config().MAX_ATTEMPTS,
    recountLater: after,
  }),
}));
