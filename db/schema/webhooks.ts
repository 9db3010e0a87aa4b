import { sql } from 'drizzle-orm';
import { bigserial, bigint, check, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * A producer's webhook endpoint (Standard Webhooks v1). `secrets` holds the signing keys sealed
 * (AES-256-GCM, lib/webhooks/secrets.ts), newest first; during a rotation's overlap both sign.
 * The plain `whsec_` secret is shown once, at creation or rotation, and never again.
 */
export type SealedWebhookSecret = { keyId: string; sealed: string; createdAt: string; expiresAt: string | null };

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    url: text('url').notNull(),
    description: text('description'),
    /** Event types the endpoint receives (lib/webhooks/events.ts). */
    eventTypes: text('event_types').array().notNull(),
    secrets: jsonb('secrets').$type<SealedWebhookSecret[]>().notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** The first failed attempt of the current run of failures; cleared by a success. */
    failingSince: timestamp('failing_since', { withTimezone: true }),
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    disabledReason: text('disabled_reason'),
  },
  (_table) => [check('webhook_endpoints_disabled_reason', sql`(disabled_at is null) = (disabled_reason is null)`)],
);

/** The last sequence number given to a subject (a notice's job, a business event). */
export const outboxSequences = pgTable('outbox_sequences', {
  subject: text('subject').primaryKey(),
  last: bigint('last', { mode: 'number' }).notNull(),
});

/**
 * The transactional outbox: one row per event, written in the transaction of the state change
 * it reports, and only when an enabled endpoint subscribes to its type. `webhook_id` (`msg_…`)
 * is the Standard Webhooks id, the same on every attempt.
 */
export const outboxEvents = pgTable(
  'outbox_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    webhookId: text('webhook_id').notNull().unique(),
    type: text('type').notNull(),
    jobId: uuid('job_id'),
    /** `job:<id>` or `event:<id>`: what the sequence counts. */
    subject: text('subject').notNull(),
    sequence: bigint('sequence', { mode: 'number' }).notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('outbox_events_job_idx').on(table.jobId), index('outbox_events_created_idx').on(table.createdAt)],
);

/** One event × one endpoint: the delivery the dispatcher claims (`for update skip locked`) and retries. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    eventId: bigint('event_id', { mode: 'number' })
      .notNull()
      .references(() => outboxEvents.id, { onDelete: 'cascade' }),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    /** pending → delivered | failed (the schedule ran out). */
    state: text('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** Due time; a claim moves it forward by the lease, so a killed dispatcher's delivery is due again. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    lastLatencyMs: integer('last_latency_ms'),
    doneAt: timestamp('done_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.eventId, table.endpointId] }),
    check('webhook_deliveries_state', sql`state in ('pending', 'delivered', 'failed')`),
    index('webhook_deliveries_due_idx')
      .on(table.nextAttemptAt)
      .where(sql`state = 'pending'`),
    index('webhook_deliveries_endpoint_idx').on(table.endpointId, table.createdAt),
  ],
);

/** Each attempt of a delivery: the log the console shows (status, latency; never a secret or the body). */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: bigint('event_id', { mode: 'number' }).notNull(),
    endpointId: uuid('endpoint_id').notNull(),
    attempt: integer('attempt').notNull(),
    status: integer('status'),
    error: text('error'),
    latencyMs: integer('latency_ms').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('webhook_attempts_endpoint_idx').on(table.endpointId, table.at), index('webhook_attempts_event_idx').on(table.eventId)],
);

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type OutboxEventRow = typeof outboxEvents.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
