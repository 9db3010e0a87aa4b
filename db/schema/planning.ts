import { sql } from 'drizzle-orm';
import { bigserial, check, index, integer, jsonb, pgTable, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core';
import { inList, noticeCategories } from './states';

/**
 * A business fact as a producer reported it (`POST /api/v1/events`): a renewal charged at
 * `anchor_at`, a reconciliation exception. One row per (type, identity, revision); the body's
 * hash tells a repeat of the same post (200) from a different body under the same revision (409).
 * The notices it called for are reminder_jobs with `event_id`; the ones that could not be planned
 * are unplanned_notices.
 */
export const businessEvents = pgTable(
  'business_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    type: text('type').notNull(),
    identity: jsonb('identity').$type<Record<string, string>>().notNull(),
    revision: integer('revision').notNull().default(0),
    /** SHA-256 of the canonical request body: the same post again is recognised, a changed one refused. */
    bodySha256: text('body_sha256').notNull(),
    anchorAt: timestamp('anchor_at', { withTimezone: true }).notNull(),
    /** ISO 3166-2 (`US-CA`) or a country code (`FR`): which jurisdiction rules apply. */
    region: text('region').notNull(),
    timeZone: text('time_zone').notNull(),
    /** Email, optional phone, locale: what the notices need to reach the recipient. */
    recipient: jsonb('recipient').$type<Record<string, string>>().notNull(),
    /** Term, trial, price change, payment network: what the rules read. */
    contract: jsonb('contract').$type<Record<string, unknown>>().notNull().default({}),
    /** Compact template data only, as on a job. */
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull().default({}),
    /** The rule set that planned this revision's notices (lib/windows, `rules-<hash>`). */
    ruleSetVersion: text('rule_set_version').notNull(),
    source: text('source').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    unique('business_events_fact_unique').on(table.type, table.identity, table.revision),
    check('business_events_revision_nonnegative', sql`revision >= 0`),
    // Retention deletes the oldest first in small batches (lib/retention.ts); without this each batch scans.
    index('business_events_received_idx').on(table.receivedAt),
  ],
);

/**
 * A notice an event called for that could not be planned, with the reason and the rules: for a
 * `required` notice this is a compliance gap, shown on the console until someone resolves it.
 * Never dropped silently.
 */
export const unplannedNotices = pgTable(
  'unplanned_notices',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => businessEvents.id, { onDelete: 'cascade' }),
    noticeType: text('notice_type').notNull(),
    category: text('category', { enum: noticeCategories }).notNull(),
    /** lib/windows UnplannedReason: window_passed, rules_conflict, outside_merchant_window, … */
    reason: text('reason').notNull(),
    detail: text('detail'),
    ruleIds: text('rule_ids')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    ruleSetVersion: text('rule_set_version').notNull(),
    region: text('region').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Set when a person worked the gap (sent by other means, accepted by counsel, …), with why. */
    resolvedAt: timestamp('resolved_at', { withTimezone: true }),
    resolvedBy: text('resolved_by'),
    resolution: text('resolution'),
  },
  (table) => [
    check('unplanned_notices_category_check', sql.raw(`category in (${inList(noticeCategories)})`)),
    index('unplanned_notices_open_idx')
      .on(table.createdAt)
      .where(sql`resolved_at is null`),
    index('unplanned_notices_event_idx').on(table.eventId),
  ],
);
