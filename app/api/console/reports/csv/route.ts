import { guarded, parseQuery } from '@/lib/auth/guard';
import { config } from '@/lib/config';
import { reportCsv, reportQuerySchema } from '@/lib/replay/duplicate-report';
import { csvResponse } from '@/lib/replay/http';
import { loadDuplicateReport } from '@/lib/replay/report';

export const dynamic = 'force-dynamic';

/** Exactly the tables the report page shows for the same query, as CSV. */
export const GET = guarded('reports.read', async ({ db, request }) => {
  const query = parseQuery(request, reportQuerySchema);
  if (!query.ok) return query.response;
  const report = await loadDuplicateReport(db, { query: query.data, quarantineAfterMs: config().QUARANTINE_AFTER });
  return csvResponse(reportCsv(report), `duplicate-rate-${query.data.from}-${query.data.to}-${query.data.granularity}.csv`);
});
