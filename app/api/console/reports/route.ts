import { guarded, jsonOk, parseQuery } from '@/lib/auth/guard';
import { config } from '@/lib/config';
import { reportQuerySchema, reportTables } from '@/lib/replay/duplicate-report';
import { loadDuplicateReport } from '@/lib/replay/report';

export const dynamic = 'force-dynamic';

export const GET = guarded('reports.read', async ({ db, request }) => {
  const query = parseQuery(request, reportQuerySchema);
  if (!query.ok) return query.response;
  const report = await loadDuplicateReport(db, { query: query.data, quarantineAfterMs: config().QUARANTINE_AFTER });
  return jsonOk({ report, tables: reportTables(report) });
});
