import { sql } from 'drizzle-orm';
import { bigserial, boolean, check, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { cancellationSources, channels, inList, noticeCategories, preferenceSources, preferenceStates } from './states';

/**
 * A recipient's current preference per category × channel. `recipient` is the address the channel
 * sends to, normalised: a lower-cased email address, or an E.164 phone number. No row means
 * opted in (a courtesy notice is sent until the recipient says otherwise).
 */
export const recipientPreferences = pgTable(
  'recipient_preferences',
  {
    recipient: text('recipient').notNull(),
    category: text('category', { enum: noticeCategories }).notNull(),
    channel: text('channel', { enum: channels }).notNull(),
    state: text('state', { enum: preferenceStates }).notNull(),
    source: text('source', { enum: preferenceSources }).notNull(),
    changedAt: timestamp('changed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.recipient, table.category, table.channel] }),
    check('recipient_preferences_state_check', sql.raw(`state in (${inList(preferenceStates)})`)),
    check('recipient_preferences_source_check', sql.raw(`source in (${inList(preferenceSources)})`)),
    check('recipient_preferences_channel_check', sql.raw(`channel in (${inList(channels)})`)),
    // A required notice cannot be opted out of, and only a required notice is `required`.
    check('recipient_preferences_required_check', sql`(category = 'required') = (state = 'required')`),
    check('recipient_preferences_email_lowercase', sql`channel <> 'email' or recipient = lower(recipient)`),
  ],
);

/** Every change of a preference, with where it came from: the history support reads. Append-only. */
export const recipientPreferenceChanges = pgTable(
  'recipient_preference_changes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    recipient: text('recipient').notNull(),
    category: text('category', { enum: noticeCategories }).notNull(),
    channel: text('channel', { enum: channels }).notNull(),
    /** null: no row before (opted in by default). */
    fromState: text('from_state', { enum: preferenceStates }),
    toState: text('to_state', { enum: preferenceStates }).notNull(),
    source: text('source', { enum: preferenceSources }).notNull(),
    /** The console user, the provider event id, the notice correlation of a link, the API token name. */
    actor: text('actor'),
    reason: text('reason'),
    changedAt: timestamp('changed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    check('recipient_preference_changes_source_check', sql.raw(`source in (${inList(preferenceSources)})`)),
    index('recipient_preference_changes_recipient_idx').on(table.recipient, table.changedAt),
    // Retention deletes superseded history oldest first in small batches (lib/retention.ts).
    index('recipient_preference_changes_changed_idx').on(table.changedAt),
  ],
);

export type RecipientPreferenceRow = typeof recipientPreferences.$inferSelect;
export type RecipientPreferenceChangeRow = typeof recipientPreferenceChanges.$inferSelect;

/**
 * A customer's request to cancel the renewal a notice is about, made from the notice's link.
 * One per notice key: asking again is the same request (the first time stands). The producer
 * reads them (`GET /api/v1/cancellation-requests`) and cancels the subscription itself; nothing
 * here cancels a notice. The business subject is copied from the job so the request outlives
 * the job's retention. Nothing identifying the requester's device is stored.
 */
export const cancellationRequests = pgTable(
  'cancellation_requests',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    noticeKey: text('notice_key').notNull().unique('cancellation_requests_notice_key_unique'),
    /** The job at the time of the request; no foreign key, so retention deletes jobs without looking here. */
    jobId: uuid('job_id').notNull(),
    noticeType: text('notice_type').notNull(),
    identity: jsonb('identity').$type<Record<string, string>>().notNull(),
    subjectId: text('subject_id').notNull(),
    customerId: text('customer_id'),
    source: text('source', { enum: cancellationSources }).notNull(),
    /** True when the customer typed the notice's one-time code (its type asks for it). */
    codeVerified: boolean('code_verified').notNull().default(false),
    requestedAt: timestamp('requested_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    check('cancellation_requests_source_check', sql.raw(`source in (${inList(cancellationSources)})`)),
    // The producer's listing reads by time (since) and pages by id.
    index('cancellation_requests_requested_idx').on(table.requestedAt, table.id),
  ],
);

export type CancellationRequestRow = typeof cancellationRequests.$inferSelect;
