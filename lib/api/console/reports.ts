import { z } from 'zod';
import { consoleContract, csvFile } from '@/lib/http/contract';

/** Why a duplicate was suppressed, as the report counts them. */
export const duplicateCauses = ['queue_redelivery', 'concurrent_worker', 'replay', 'producer_retry', 'unclassified'] as const;
export type DuplicateCause = (typeof duplicateCauses)[number];

export const reportQuerySchema = z
  .object({
    granularity: z.enum(['day', 'week']).default('week'),
    from: z.iso.date().optional(),
    to: z.iso.date().optional(),
  })
  .transform((query, ctx) => {
    const to = query.to ?? new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const from = query.from ?? new Date(new Date(`${to}T00:00:00Z`).getTime() - 28 * 86_400_000).toISOString().slice(0, 10);
    if (from >= to) ctx.addIssue({ code: 'custom', message: 'from must be before to', path: ['from'] });
    if (new Date(`${to}T00:00:00Z`).getTime() - new Date(`${from}T00:00:00Z`).getTime() > 400 * 86_400_000) {
      ctx.addIssue({ code: 'custom', message: 'the range may span at most 400 days', path: ['from'] });
    }
    return { granularity: query.granularity, from, to };
  });

export type ReportQuery = z.infer<typeof reportQuerySchema>;

const count = z.number().int().nonnegative();

export const duplicateRow = z.object({
  period: z.string(),
  noticeType: z.string(),
  claimsMinted: count,
  duplicates: count,
  byCause: z.record(z.enum(duplicateCauses), count),
  /** Duplicates suppressed per claim minted; null without claims. */
  rate: z.number().nonnegative().nullable(),
  /** Shadow mode: refusals enforce mode would have made (the mail went out anyway). */
  wouldDuplicate: count,
});
export type DuplicateRow = z.infer<typeof duplicateRow>;

export const quarantineFlowRow = z.object({
  period: z.string(),
  inflow: count,
  resolved: count,
  open: count,
  medianMinutesToResolve: z.number().nullable(),
  maxMinutesToResolve: z.number().nullable(),
  operatorActions: count,
});
export type QuarantineRow = z.infer<typeof quarantineFlowRow>;

export const reportRange = z.object({ granularity: z.enum(['day', 'week']), from: z.iso.date(), to: z.iso.date() });
export type ReportRange = z.infer<typeof reportRange>;

/** The whole range by channel: claims minted, duplicates suppressed, their rate. */
export const channelRow = z.object({ channel: z.enum(['email', 'sms']), claimsMinted: count, duplicates: count, rate: z.number().nonnegative().nullable() });

export const duplicateReport = z.object({
  range: reportRange,
  rows: z.array(duplicateRow),
  total: duplicateRow,
  channels: z.array(channelRow),
  quarantine: z.array(quarantineFlowRow),
});
export type DuplicateReport = z.infer<typeof duplicateReport>;

/** `labelColumns`: how many leading columns are words (left-aligned); the rest are figures. Default 2. */
export const reportTable = z.object({
  title: z.string(),
  header: z.array(z.string()),
  rows: z.array(z.array(z.string())),
  labelColumns: z.number().int().optional(),
});
export type Table = z.infer<typeof reportTable>;

export const getReportContract = consoleContract({
  method: 'GET',
  path: '/api/console/reports',
  permission: 'reports.read',
  input: reportQuerySchema,
  output: z.object({ report: duplicateReport, tables: z.array(reportTable) }),
});

/** Exactly the tables the report page shows for the same query, as CSV. */
export const reportCsvContract = consoleContract({
  method: 'GET',
  path: '/api/console/reports/csv',
  permission: 'reports.read',
  input: reportQuerySchema,
  output: csvFile,
  format: 'csv',
});
