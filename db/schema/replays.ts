import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { inList, replayStates } from './states';

export type ReplayFilter = {
  dueFrom?: string;
  dueTo?: string;
  noticeType?: string;
  source?: string;
  /** Set when the replay came from an uploaded CSV; rows live in `replay_items`. */
  uploaded?: boolean;
};

export type DryRunCounts = {
  total: number;
  newKeys: number;
  existing: Record<string, number>;
};

/** A replay request: requested by an operator, approved by a different manager, then run. */
export const replays = pgTable(
  'replays',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    batchId: text('batch_id').notNull().unique('replays_batch_id_unique'),
    state: text('state', { enum: replayStates }).notNull().default('requested'),
    filter: jsonb('filter').$type<ReplayFilter>().notNull(),
    dryRun: jsonb('dry_run').$type<DryRunCounts>(),
    requestedBy: uuid('requested_by').notNull(),
    requestReason: text('request_reason').notNull(),
    decidedBy: uuid('decided_by'),
    decisionReason: text('decision_reason'),
    total: integer('total').notNull().default(0),
    published: integer('published').notNull().default(0),
    suppressed: integer('suppressed').notNull().default(0),
    sent: integer('sent').notNull().default(0),
    failed: integer('failed').notNull().default(0),
    requestedAt: timestamp('requested_at', { withTimezone: true }).notNull().defaultNow(),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (table) => [
    check('replays_state_check', sql.raw(`state in (${inList(replayStates)})`)),
    check('replays_four_eyes', sql`decided_by is null or decided_by <> requested_by`),
    index('replays_requested_at_idx').on(table.requestedAt),
  ],
);

export type ReplayRow = typeof replays.$inferSelect;
