import { reportCsvContract } from '@/lib/api/console/reports';
import { config } from '@/lib/config';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';
import { reportCsv } from '@/lib/console/duplicate-report';
import { loadDuplicateReport } from '@/lib/console/report';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(reportCsvContract, async ({ db, input }) => {
  const report = await loadDuplicateReport(db, { query: input, quarantineAfterMs: config().QUARANTINE_AFTER });
  return ok({ filename: `duplicate-rate-${input.from}-${input.to}-${input.granularity}.csv`, csv: reportCsv(report) });
});
