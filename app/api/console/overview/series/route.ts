import { guarded, jsonOk, parseQuery } from '@/lib/auth/guard';
import { loadSeriesOverview } from '@/lib/console/overview';
import { rangeQuery } from '@/lib/console/requests';

export const dynamic = 'force-dynamic';

export const GET = guarded('overview.read', async ({ db, request }) => {
  const query = parseQuery(request, rangeQuery);
  if (!query.ok) return query.response;
  return jsonOk(await loadSeriesOverview(db, { now: new Date(), range: query.data.range }));
});
