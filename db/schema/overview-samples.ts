import { doublePrecision, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The overview's charts over time, written by one worker at a time every OVERVIEW_SAMPLE_EVERY
 * (lib/metrics/overview-writer.ts) so a page view reads these few rows and never the ledger.
 * One row per (instant, series, key): `pending` by due bucket, `quarantined`, `latency_p50` /
 * `latency_p99` and `attempts` over the interval since the previous sample, `failures` by error
 * class over that interval, `handed_over` / `delivered` / `gap` by `channel/provider` (the
 * shared accepted-vs-delivered definition, lib/metrics/delivery-gap.ts; `delivered` and `gap`
 * are absent for a provider with no delivery evidence). Pruned after OVERVIEW_SAMPLE_RETENTION.
 */
export const overviewSamples = pgTable(
  'overview_samples',
  {
    at: timestamp('at', { withTimezone: true }).notNull(),
    series: text('series').notNull(),
    key: text('key').notNull().default(''),
    value: doublePrecision('value').notNull(),
  },
  // Every read is a range of `at` across all series: the primary key's leading column serves it.
  (table) => [primaryKey({ columns: [table.at, table.series, table.key] })],
);
