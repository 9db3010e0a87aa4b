import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { inList } from './states';

/** What the provider reconciler last heard when it asked about a claim (lib/ledger/provider-reconcile.ts). */
export const providerLookupOutcomes = ['not_found', 'lookup_failed', 'gave_up', 'found'] as const;
export type ProviderLookupOutcome = (typeof providerLookupOutcomes)[number];

/**
 * One row per claim the reconciler asked its provider about (Postmark's Messages API, SendGrid's
 * Email Logs): how often, when last, and what it heard. Kept beside the ledger, not on it, so the
 * send path's updates of notice_ledger stay as they were; the quarantine page shows `detail`
 * once the reconciler gave up. Retention goes with the ledger row (deleted when it is).
 */
export const providerLookups = pgTable(
  'provider_lookups',
  {
    noticeKey: text('notice_key').primaryKey(),
    provider: text('provider').notNull(),
    outcome: text('outcome', { enum: providerLookupOutcomes }).notNull(),
    checks: integer('checks').notNull().default(1),
    firstCheckedAt: timestamp('first_checked_at', { withTimezone: true }).notNull().defaultNow(),
    lastCheckedAt: timestamp('last_checked_at', { withTimezone: true }).notNull().defaultNow(),
    /** Why, for a person: the reason shown in quarantine, or the lookup's error class. Never the recipient. */
    detail: text('detail'),
  },
  (table) => [
    check('provider_lookups_outcome_check', sql.raw(`outcome in (${inList(providerLookupOutcomes)})`)),
    index('provider_lookups_checked_idx').on(table.lastCheckedAt),
  ],
);

export type ProviderLookupRow = typeof providerLookups.$inferSelect;
