import { guarded, jsonOk, parseQuery } from '@/lib/auth/guard';
import { config } from '@/lib/config';
import { loadQuarantinePage } from '@/lib/console/quarantine-view';
import { quarantineListQuery } from '@/lib/console/requests';

export const dynamic = 'force-dynamic';

export const GET = guarded('quarantine.read', async ({ db, request }) => {
  const query = parseQuery(request, quarantineListQuery);
  if (!query.ok) return query.response;
  return jsonOk(await loadQuarantinePage(db, { query: query.data, quarantineAfterMs: config().QUARANTINE_AFTER }));
});
