import { getSeriesOverview } from '@/lib/api/console/overview';
import { loadSeriesOverview } from '@/lib/console/overview';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(getSeriesOverview, async ({ db, input }) => ok(await loadSeriesOverview(db, { now: new Date(), range: input.range })));
