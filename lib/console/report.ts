import 'server-only';
import type { DbOrTx } from '@/db/client';
import { countClaimsMinted, countDuplicates, countQuarantineActions, quarantineFlow } from '@/db/queries/reports';
import type { DuplicateReport, ReportQuery } from '@/lib/api/console/reports';
import { buildReport } from './duplicate-report';

/** `to` is exclusive: a range ending 2026-11-30 covers the 29th in full. */
export async function loadDuplicateReport(
  db: DbOrTx,
  { query, quarantineAfterMs }: { query: ReportQuery; quarantineAfterMs: number },
): Promise<DuplicateReport> {
  const range = { granularity: query.granularity, from: new Date(`${query.from}T00:00:00Z`), to: new Date(`${query.to}T00:00:00Z`) };
  const [claims, duplicates, quarantine, actions] = await Promise.all([
    countClaimsMinted(db, range),
    countDuplicates(db, range),
    quarantineFlow(db, { ...range, quarantineAfterMs }),
    countQuarantineActions(db, range),
  ]);
  return buildReport({ range: query, claims, duplicates, quarantine, actions });
}
