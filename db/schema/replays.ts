import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { channels, inList, replayStates } from './states';

export type ReplayFilter = {
  dueFrom?: string;
  dueTo?: string;
  noticeType?: string;
  source?: string;
  /** Set when the replay came from an uploaded CSV; rows live in `replay_items`. */
  uploaded?: boolean;
  /**
   * A bulk retry of failed notices above BULK_RETRY_APPROVAL_ABOVE (lib/console/failures.ts): by
   * error class and the instant they failed, [from, to). Its run reopens them (window still open) and publishes them.
   */
  retryFailed?: { errorClass: string; from: string; to: string; noticeType?: string; channel?: 'email' | 'sms' };
};

export type DryRunCounts = {
  total: number;
  newKeys: number;
  existing: Record<string, number>;
  /**
   * Of the keys the ledger would let through (new or released), those whose job would not reach
   * a send, by cause: suppressed, cancelled, failed, sent, past_window. Absent in dry runs
   * stored before it was counted.
   */
  blocked?: Record<string, number>;
};

/** One CSV row the upload validation refused, kept so the requester can download the list. */
export type UploadRejection = { line: number; reason: string; raw: string };

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
    /** A running replay's pacing: no worker publishes its next batch before this (null: at once). */
    nextBatchAt: timestamp('next_batch_at', { withTimezone: true }),
    /** Rows of an uploaded CSV that failed validation (capped); the accepted rows are in replay_items. */
    uploadRejections: jsonb('upload_rejections').$type<UploadRejection[]>(),
  },
  (table) => [
    check('replays_state_check', sql.raw(`state in (${inList(replayStates)})`)),
    check('replays_four_eyes', sql`decided_by is null or decided_by <> requested_by`),
    index('replays_requested_at_idx').on(table.requestedAt),
  ],
);

export type ReplayRow = typeof replays.$inferSelect;

/**
 * The jobs one replay publishes, one row per notice key: uploaded rows (with the fact and
 * recipient, scheduled as a producer would when the run reaches them) or, for a filter
 * replay, the matching jobs materialised when the run starts. `published_at` makes the run
 * resumable and publishes each job at most once per replay.
 */
export const replayItems = pgTable(
  'replay_items',
  {
    replayId: uuid('replay_id')
      .notNull()
      .references(() => replays.id, { onDelete: 'cascade' }),
    noticeKey: text('notice_key').notNull(),
    line: integer('line'),
    jobId: uuid('job_id'),
    noticeType: text('notice_type'),
    identity: jsonb('identity').$type<Record<string, string>>(),
    revision: integer('revision'),
    recipientEmail: text('recipient_email'),
    recipientTimeZone: text('recipient_time_zone'),
    customerId: text('customer_id'),
    dueAt: timestamp('due_at', { withTimezone: true }),
    deadlineAt: timestamp('deadline_at', { withTimezone: true }),
    evidenceRef: text('evidence_ref'),
    payload: jsonb('payload').$type<Record<string, unknown>>(),
    /** What the row gave beside the fact, written to its job as a producer's request would be (lib/replay/schedule-item.ts). */
    anchorAt: timestamp('anchor_at', { withTimezone: true }),
    recipientLocale: text('recipient_locale'),
    /** E.164, normalised at upload. */
    recipientPhone: text('recipient_phone'),
    /** The channel chosen at upload from the type's channels and the row's addresses; null for a filter replay's items. */
    channel: text('channel', { enum: channels }),
    publishedAt: timestamp('published_at', { withTimezone: true }),
  },
  (table) => [
    primaryKey({ name: 'replay_items_pkey', columns: [table.replayId, table.noticeKey] }),
    // The runner's next batch: unpublished items of one replay, in key order.
    index('replay_items_unpublished_idx')
      .on(table.replayId, table.noticeKey)
      .where(sql`published_at is null`),
  ],
);

export type ReplayItemRow = typeof replayItems.$inferSelect;
