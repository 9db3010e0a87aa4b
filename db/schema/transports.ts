import { sql } from 'drizzle-orm';
import { check, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** The transports of lib/channels/registry.ts (lib/transport/phases.ts TransportName). */
export const transportNames = ['smtp', 'twilio', 'postmark', 'ses', 'sendgrid'] as const;
export const transportStates = ['up', 'down'] as const;
/** Why a breaker opened: the relay or Twilio unreachable, or our credentials / sender refused (lib/transport/phases.ts). */
export const transportDownReasons = ['nothing_left', 'config_broken'] as const;

/**
 * The state of each transport's breaker as the workers last saw it (lib/transport/breaker.ts):
 * one row per transport, written by a worker when its breaker opens, after each failed probe
 * (`checked_at`) and when a probe closes it. The console shows a banner on every page while a
 * row says `down`. Each worker keeps its own breaker; the row is the latest word of any of them.
 */
export const transportStatus = pgTable(
  'transport_status',
  {
    transport: text('transport', { enum: transportNames }).primaryKey(),
    state: text('state', { enum: transportStates }).notNull(),
    /** When it went down (or came back): kept across probes while the state stays. */
    since: timestamp('since', { withTimezone: true }).notNull(),
    reason: text('reason', { enum: transportDownReasons }),
    /** The last failure's class (`connect_failed`, `smtp_535`, `twilio_20003`) and reply code. */
    errorClass: text('error_class'),
    code: integer('code'),
    workerId: text('worker_id').notNull(),
    checkedAt: timestamp('checked_at', { withTimezone: true }).notNull(),
  },
  () => [
    check('transport_status_transport_check', sql`transport in ('smtp', 'twilio', 'postmark', 'ses', 'sendgrid')`),
    check('transport_status_state_check', sql`state in ('up', 'down')`),
    check('transport_status_reason_check', sql`reason is null or reason in ('nothing_left', 'config_broken')`),
  ],
);
