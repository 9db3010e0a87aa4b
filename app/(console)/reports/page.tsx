import type { Metadata } from 'next';
import { getDb } from '@/lib/process-db';
import { config } from '@/lib/config';
import { reportCsvContract, reportQuerySchema } from '@/lib/api/console/reports';
import { consoleUrl } from '@/lib/http/client';
import { duplicateCauses } from '@/lib/api/console/reports';
import { causeLabels, rateSeries, reportTables } from '@/lib/console/duplicate-report';
import { loadDuplicateReport } from '@/lib/console/report';
import { PrintButton } from '@/components/reports/print-button';
import { RateChart } from '@/components/reports/rate-chart';
import { ReportTables } from '@/components/reports/report-tables';
import styles from '@/components/reports/report.module.css';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';

export const metadata: Metadata = { title: 'Duplicate-rate report' };
export const dynamic = 'force-dynamic';

export default async function ReportsPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const auth = await requirePage('reports.read', '/reports');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const raw = Object.fromEntries(Object.entries(await searchParams).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = reportQuerySchema.safeParse(raw);
  const query = parsed.success ? parsed.data : reportQuerySchema.parse({});
  const report = await loadDuplicateReport(getDb(), { query, quarantineAfterMs: config().QUARANTINE_AFTER });
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Duplicate-rate report</h1>
          <p>
            {query.from} to {query.to} (UTC, end exclusive), by {query.granularity}. Duplicates are wake-ups the ledger refused or found already done; the rate
            is duplicates per claim minted.
          </p>
        </div>
      </div>
      {!parsed.success ? <div className="notice error">The range was not understood and the default is shown: {parsed.error.issues[0]?.message}</div> : null}
      <form className={styles.toolbar} method="get" action="/reports">
        <div>
          <label htmlFor="report-granularity">By</label>
          <select id="report-granularity" name="granularity" defaultValue={query.granularity}>
            <option value="week">week</option>
            <option value="day">day</option>
          </select>
        </div>
        <div>
          <label htmlFor="report-from">From</label>
          <input id="report-from" type="date" name="from" defaultValue={query.from} />
        </div>
        <div>
          <label htmlFor="report-to">To (exclusive)</label>
          <input id="report-to" type="date" name="to" defaultValue={query.to} />
        </div>
        <button type="submit" className="primary">
          Show
        </button>
        <a className="button" href={consoleUrl(reportCsvContract, query)} data-testid="report-csv" download>
          Export CSV
        </a>
        <PrintButton />
      </form>
      <RateChart points={rateSeries(report)} granularity={query.granularity} />
      <ReportTables tables={reportTables(report)} />
      <p className={styles.definitions}>
        Causes: {duplicateCauses.map((cause) => causeLabels[cause]).join(', ')}. A wake-up carrying a replay batch id counts as Replay; a wake-up for a job
        already finished counts as queue redelivery; a claim refused because another attempt held it counts as concurrent worker. &ldquo;Shadow: would have
        duplicated&rdquo; are refusals shadow mode recorded while it sent anyway. Quarantine inflow counts claims still <code>claimed</code>{' '}
        {Math.round(config().QUARANTINE_AFTER / 60_000)} minutes after the claim, by when they entered quarantine.
      </p>
    </>
  );
}
