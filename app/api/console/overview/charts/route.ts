import { getChartsOverview } from '@/lib/api/console/overview';
import { loadOverviewCharts } from '@/lib/console/overview-charts';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(getChartsOverview, async ({ db, input }) => ok(await loadOverviewCharts(db, { now: new Date(), range: input.range })));
