import type { AuditActionCount, ClaimCount, DuplicateCount, Granularity, QuarantineFlow } from '@/db/queries/reports';
import { duplicateCauses, type DuplicateCause, type DuplicateReport, type DuplicateRow, type ReportRange, type Table } from '@/lib/api/console/reports';
import { toCsv } from '@/lib/replay/csv';

/**
 * Report maths, pure: the SQL hands over grouped counts, this turns them into the rows a
 * manager reads, and the same rows into CSV, so the export is exactly what is on screen.
 */

export const causeLabels: Record<DuplicateCause, string> = {
  queue_redelivery: 'Queue redelivery',
  concurrent_worker: 'Concurrent worker',
  replay: 'Replay',
  producer_retry: 'Producer retry',
  unclassified: 'Unclassified',
};

function emptyCauses(): Record<DuplicateCause, number> {
  return { queue_redelivery: 0, concurrent_worker: 0, replay: 0, producer_retry: 0, unclassified: 0 };
}

function isCause(value: string): value is DuplicateCause {
  return (duplicateCauses as readonly string[]).includes(value);
}

export function duplicateRate(duplicates: number, claims: number): number | null {
  return claims === 0 ? null : duplicates / claims;
}

/** One point per period, every notice type together, oldest first: the manager's chart of the rate over time. */
export type RatePoint = { period: string; claimsMinted: number; duplicates: number; ratePercent: number | null };

export function rateSeries(report: DuplicateReport): RatePoint[] {
  const byPeriod = new Map<string, { claimsMinted: number; duplicates: number }>();
  for (const row of report.rows) {
    const point = byPeriod.get(row.period) ?? { claimsMinted: 0, duplicates: 0 };
    point.claimsMinted += row.claimsMinted;
    point.duplicates += row.duplicates;
    byPeriod.set(row.period, point);
  }
  return [...byPeriod.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([period, { claimsMinted, duplicates }]) => {
      const rate = duplicateRate(duplicates, claimsMinted);
      return { period, claimsMinted, duplicates, ratePercent: rate === null ? null : Math.round(rate * 10_000) / 100 };
    });
}

export function buildReport(params: {
  range: ReportRange;
  claims: ClaimCount[];
  duplicates: DuplicateCount[];
  quarantine: QuarantineFlow[];
  actions: AuditActionCount[];
}): DuplicateReport {
  const rows = new Map<string, DuplicateRow>();
  const rowFor = (period: string, noticeType: string): DuplicateRow => {
    const id = `${period}\u0000${noticeType}`;
    let row = rows.get(id);
    if (!row) {
      row = { period, noticeType, claimsMinted: 0, duplicates: 0, byCause: emptyCauses(), rate: null, wouldDuplicate: 0 };
      rows.set(id, row);
    }
    return row;
  };
  for (const claim of params.claims) rowFor(claim.period, claim.noticeType).claimsMinted += claim.claims;
  for (const duplicate of params.duplicates) {
    const row = rowFor(duplicate.period, duplicate.noticeType);
    if (duplicate.shadow) {
      row.wouldDuplicate += duplicate.count;
      continue;
    }
    row.duplicates += duplicate.count;
    row.byCause[isCause(duplicate.cause) ? duplicate.cause : 'unclassified'] += duplicate.count;
  }
  const sorted = [...rows.values()].sort((a, b) => (a.period === b.period ? a.noticeType.localeCompare(b.noticeType) : b.period.localeCompare(a.period)));
  const total: DuplicateRow = { period: 'Total', noticeType: 'all', claimsMinted: 0, duplicates: 0, byCause: emptyCauses(), rate: null, wouldDuplicate: 0 };
  for (const row of sorted) {
    row.rate = duplicateRate(row.duplicates, row.claimsMinted);
    total.claimsMinted += row.claimsMinted;
    total.duplicates += row.duplicates;
    total.wouldDuplicate += row.wouldDuplicate;
    for (const cause of duplicateCauses) total.byCause[cause] += row.byCause[cause];
  }
  total.rate = duplicateRate(total.duplicates, total.claimsMinted);
  const channels = (['email', 'sms'] as const).map((channel) => {
    const claimsMinted = params.claims.filter((claim) => (claim.channel ?? 'email') === channel).reduce((sum, claim) => sum + claim.claims, 0);
    const duplicates = params.duplicates
      .filter((duplicate) => !duplicate.shadow && (duplicate.channel ?? 'email') === channel)
      .reduce((sum, duplicate) => sum + duplicate.count, 0);
    return { channel, claimsMinted, duplicates, rate: duplicateRate(duplicates, claimsMinted) };
  });

  const actionsByPeriod = new Map<string, number>();
  for (const action of params.actions) actionsByPeriod.set(action.period, (actionsByPeriod.get(action.period) ?? 0) + action.count);
  const periods = new Set([...params.quarantine.map((q) => q.period), ...actionsByPeriod.keys()]);
  const flows = new Map(params.quarantine.map((q) => [q.period, q]));
  const quarantine = [...periods]
    .sort((a, b) => b.localeCompare(a))
    .map((period) => ({
      ...(flows.get(period) ?? { period, inflow: 0, resolved: 0, open: 0, medianMinutesToResolve: null, maxMinutesToResolve: null }),
      operatorActions: actionsByPeriod.get(period) ?? 0,
    }));
  return { range: params.range, rows: sorted, total, channels, quarantine };
}

export function formatRate(rate: number | null): string {
  return rate === null ? '—' : `${(rate * 100).toFixed(2)} %`;
}

function formatMinutes(minutes: number | null): string {
  return minutes === null ? '—' : minutes.toFixed(1);
}

function periodLabel(period: string, granularity: Granularity): string {
  return granularity === 'week' && period !== 'Total' ? `week of ${period}` : period;
}

function duplicateCells(row: DuplicateRow, granularity: Granularity): string[] {
  return [
    periodLabel(row.period, granularity),
    row.noticeType,
    String(row.claimsMinted),
    String(row.duplicates),
    ...duplicateCauses.map((cause) => String(row.byCause[cause])),
    formatRate(row.rate),
    String(row.wouldDuplicate),
  ];
}

/** The tables exactly as the page shows them; the CSV is these cells, nothing more or less. */
export function reportTables(report: DuplicateReport): Table[] {
  const { granularity } = report.range;
  return [
    {
      title: 'Duplicates suppressed',
      header: [
        'Period',
        'Notice type',
        'Claims minted',
        'Duplicates suppressed',
        ...duplicateCauses.map((cause) => causeLabels[cause]),
        'Duplicate rate',
        'Shadow: would have duplicated',
      ],
      rows: [...report.rows.map((row) => duplicateCells(row, granularity)), duplicateCells(report.total, granularity)],
    },
    {
      title: 'By channel',
      labelColumns: 1,
      header: ['Channel', 'Claims minted', 'Duplicates suppressed', 'Duplicate rate'],
      rows: report.channels.map((row) => [row.channel === 'sms' ? 'SMS' : 'Email', String(row.claimsMinted), String(row.duplicates), formatRate(row.rate)]),
    },
    {
      title: 'Quarantine',
      header: ['Period', 'Inflow', 'Resolved', 'Still open', 'Median minutes to resolve', 'Max minutes to resolve', 'On-call actions'],
      rows: report.quarantine.map((row) => [
        periodLabel(row.period, granularity),
        String(row.inflow),
        String(row.resolved),
        String(row.open),
        formatMinutes(row.medianMinutesToResolve),
        formatMinutes(row.maxMinutesToResolve),
        String(row.operatorActions),
      ]),
    },
  ];
}

export function reportCsv(report: DuplicateReport): string {
  const rows: string[][] = [[`Duplicate-rate report ${report.range.from} to ${report.range.to} by ${report.range.granularity}`]];
  for (const table of reportTables(report)) rows.push([], [table.title], table.header, ...table.rows);
  return toCsv(rows);
}
