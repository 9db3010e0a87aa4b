import { sql } from 'drizzle-orm';
import { boolean, check, integer, jsonb, pgTable, timestamp } from 'drizzle-orm/pg-core';

export type PendingBucketCount = { noticeType: string; bucket: string; count: number };

/**
 * The overview's pending-jobs-by-due-bucket figure as last counted: one row, replaced whole.
 * Counting 1 M pending jobs takes ~60 ms, so the console counts at most once per freshness
 * window across all its processes and shows the instant it counted (counted_at). Nothing on
 * the send path writes here: a counter maintained per job would serialise the workers.
 */
export const pendingDueSnapshot = pgTable(
  'pending_due_snapshot',
  {
    /** Always true: the table holds one row. */
    id: boolean('id').primaryKey().default(true),
    /** The instant the bucket edges were computed from and the count ran at; the figure is exact then. */
    countedAt: timestamp('counted_at', { withTimezone: true }).notNull(),
    /** How long the count took, for the operator wondering what a recount costs. */
    countMs: integer('count_ms').notNull(),
    counts: jsonb('counts').$type<PendingBucketCount[]>().notNull(),
  },
  () => [check('pending_due_snapshot_one_row', sql`id`)],
);
