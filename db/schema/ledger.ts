import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { inList, ledgerStates, providerHandOverStatuses } from './states';

/**
 * The only answer to "did this notice go out?". One row per business fact (notice_key).
 *
 * A claim is `insert … on conflict (notice_key) do nothing` (or re-claims a `released` row);
 * `claim_token` names the attempt that owns the claim, so a late worker whose claim was
 * released and re-claimed cannot commit over the new owner.
 */
export const noticeLedger = pgTable(
  'notice_ledger',
  {
    noticeKey: text('notice_key').primaryKey(),
    noticeType: text('notice_type').notNull(),
    identity: jsonb('identity').$type<Record<string, string>>().notNull(),
    revision: integer('revision').notNull().default(0),
    jobId: uuid('job_id'),
    state: text('state', { enum: ledgerStates }).notNull(),
    claimToken: uuid('claim_token'),
    claimedBy: text('claimed_by'),
    claimedAt: timestamp('claimed_at', { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    providerMessageId: text('provider_message_id'),
    recipientDomain: text('recipient_domain'),
    /** Minted once per notice and reused by every deliberate resend; never shown or logged. */
    oneTimeCode: text('one_time_code'),
    source: text('source', { enum: ['worker', 'backfill', 'operator'] })
      .notNull()
      .default('worker'),
    resolution: text('resolution'),
    resolvedAt: timestamp('resolved_at', { withTimezone: true }),
    /**
     * The template files the sent message was rendered from (template_versions.id); null before they
     * were recorded, or for a backfilled or operator row. No foreign key, on purpose: adding one
     * would scan the whole ledger under a write-blocking lock at migration, and check a row on every
     * commit; the send path stores the version before the commit that names it
     * (lib/jobs/template-versions.ts) and names none it could not store.
     */
    templateVersionId: text('template_version_id'),
    /**
     * Only where the provider's answer is provisional (SendGrid): `accepted` from its 202 until its
     * own event for this message, then `processed` or `dropped` (states.ts providerHandOverStatuses).
     * Null elsewhere. The row is `sent` all along: a 202 is a hand-over, and a resend is never
     * made from it; `dropped` is reported (status API, lookup, notice.failed), not retried.
     */
    providerStatus: text('provider_status', { enum: providerHandOverStatuses }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    check('notice_ledger_state_check', sql.raw(`state in (${inList(ledgerStates)})`)),
    check('notice_ledger_sent_has_time', sql`state <> 'sent' or sent_at is not null`),
    check('notice_ledger_provider_status_check', sql.raw(`provider_status is null or provider_status in (${inList(providerHandOverStatuses)})`)),
    // Quarantine: stuck claims oldest first. Partial, so it stays tiny at 10 M rows.
    index('notice_ledger_claimed_idx')
      .on(table.claimedAt)
      .where(sql`state = 'claimed'`),
    index('notice_ledger_provider_message_id_idx')
      .on(table.providerMessageId)
      .where(sql`provider_message_id is not null`),
    index('notice_ledger_job_id_idx').on(table.jobId),
  ],
);

export type LedgerRow = typeof noticeLedger.$inferSelect;
