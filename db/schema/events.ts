import { sql } from 'drizzle-orm';
import { bigserial, check, index, jsonb, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { inList, providerEventTypes, recipientSuppressionReasons } from './states';

/** What the mail provider said happened. Idempotent on (provider, event_id). */
export const providerEvents = pgTable(
  'provider_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type', { enum: providerEventTypes }).notNull(),
    rawType: text('raw_type').notNull(),
    correlationId: text('correlation_id'),
    providerMessageId: text('provider_message_id'),
    /** Linked ledger row, once matched by correlation tag, Message-ID or provider id. */
    noticeKey: text('notice_key'),
    recipient: text('recipient'),
    bounceType: text('bounce_type'),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    /** The event as received, with message content and headers other than ours removed. */
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
  },
  (table) => [
    unique('provider_events_provider_event_unique').on(table.provider, table.eventId),
    check('provider_events_type_check', sql.raw(`event_type in (${inList(providerEventTypes)})`)),
    index('provider_events_notice_key_idx')
      .on(table.noticeKey)
      .where(sql`notice_key is not null`),
    index('provider_events_correlation_idx')
      .on(table.correlationId)
      .where(sql`correlation_id is not null`),
    index('provider_events_provider_message_idx')
      .on(table.providerMessageId)
      .where(sql`provider_message_id is not null`),
    index('provider_events_received_idx').on(table.receivedAt),
  ],
);

/** Addresses the send path must not mail, and why. Keyed on the lower-cased address. */
export const recipientSuppressions = pgTable(
  'recipient_suppressions',
  {
    email: text('email').primaryKey(),
    reason: text('reason', { enum: recipientSuppressionReasons }).notNull(),
    sourceEventId: text('source_event_id'),
    note: text('note'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  () => [
    check('recipient_suppressions_reason_check', sql.raw(`reason in (${inList(recipientSuppressionReasons)})`)),
    check('recipient_suppressions_lowercase', sql`email = lower(email)`),
  ],
);

/** The business evidence a reminder is about (e.g. a reconciliation exception). */
export const evidence = pgTable(
  'evidence',
  {
    ref: text('ref').primaryKey(),
    kind: text('kind').notNull(),
    state: text('state', { enum: ['open', 'resolved'] })
      .notNull()
      .default('open'),
    summary: text('summary'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    openedAt: timestamp('opened_at', { withTimezone: true }).notNull().defaultNow(),
    resolvedAt: timestamp('resolved_at', { withTimezone: true }),
    resolvedBy: text('resolved_by'),
  },
  () => [check('evidence_state_check', sql`state in ('open', 'resolved')`)],
);

export type ProviderEventRow = typeof providerEvents.$inferSelect;
