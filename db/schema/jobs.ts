import { sql } from 'drizzle-orm';
import { bigserial, check, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { businessEvents } from './planning';
import { attemptOutcomes, channels, inList, jobStates, noticeCategories } from './states';

/** The durable obligation. The queue only wakes work up; this row is the truth. */
export const reminderJobs = pgTable(
  'reminder_jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    noticeKey: text('notice_key').notNull().unique('reminder_jobs_notice_key_unique'),
    noticeType: text('notice_type').notNull(),
    identity: jsonb('identity').$type<Record<string, string>>().notNull(),
    revision: integer('revision').notNull().default(0),
    /** The business subject used by support lookup: subscription_id or account_id. */
    subjectId: text('subject_id').notNull(),
    customerId: text('customer_id'),
    /** Null only for an `sms` job whose producer gave no email (no fallback to email is possible then). */
    recipientEmail: text('recipient_email'),
    recipientTimeZone: text('recipient_time_zone').notNull().default('UTC'),
    /** BCP 47 (canonical): which template locale and number/date formats the notice uses; null: the fallback locale. */
    recipientLocale: text('recipient_locale'),
    /** The instant the notice is about (the charge): templates show it as the charge date. Null: scheduled without anchorAt. */
    anchorAt: timestamp('anchor_at', { withTimezone: true }),
    /** How the notice goes out, chosen at scheduling from its type's channels (lib/windows/channel.ts). */
    channel: text('channel', { enum: channels }).notNull().default('email'),
    /** The recipient's phone number in E.164, normalised at scheduling; required for an `sms` job. */
    recipientPhone: text('recipient_phone'),
    /**
     * Set when a required SMS was refused for good (Twilio 21610 STOP, 21211 invalid number, 21614 /
     * 21635 / 30006 landline) and the notice fell back to email: the refusal's code; or
     * `sms_not_configured` (a worker without Twilio, the type also goes by email). The job then goes
     * by `email` under the same key, ledger row and one-time code (lib/jobs/sms-fallback.ts).
     */
    smsRefusedCode: text('sms_refused_code'),
    dueAt: timestamp('due_at', { withTimezone: true }).notNull(),
    /**
     * The allowed window is [window_earliest, deadline_at]: merchant window ∩ every applicable
     * rule. A wake-up before window_earliest defers without counting an attempt; after
     * deadline_at the notice is suppressed `window_missed`, never sent late. Null earliest: a
     * reminder scheduled without an anchor (its window opens at due_at).
     */
    windowEarliest: timestamp('window_earliest', { withTimezone: true }),
    deadlineAt: timestamp('deadline_at', { withTimezone: true }).notNull(),
    category: text('category', { enum: noticeCategories }).notNull().default('courtesy'),
    /** The recipient's region (ISO 3166-2 `US-CA` or a country `FR`) the rules were applied for; null when none was given. */
    region: text('region'),
    /** `id@version` of each rule that bounded the window, and the rule set they came from. */
    ruleIds: text('rule_ids')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    ruleSetVersion: text('rule_set_version'),
    /** The business event that planned this notice (null: scheduled directly by POST /api/v1/reminders). */
    eventId: uuid('event_id').references(() => businessEvents.id, { onDelete: 'set null' }),
    state: text('state', { enum: jobStates }).notNull().default('pending'),
    suppressionReason: text('suppression_reason'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull(),
    lastErrorClass: text('last_error_class'),
    /** When the last wake-up was handed to the queue; the sweeper re-publishes stale ones. */
    wakeupPublishedAt: timestamp('wakeup_published_at', { withTimezone: true }),
    evidenceRef: text('evidence_ref'),
    source: text('source').notNull(),
    batchId: text('batch_id'),
    /** Compact template data only (plan name, amount, dates); never bodies or card data. */
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull().default({}),
    /**
     * The W3C traceparent of the span that scheduled it (the producer's request), when tracing
     * was on: every wake-up's span links to it. Observability only: not part of the key, the
     * queue payload or any decision.
     */
    traceparent: text('traceparent'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    check('reminder_jobs_state_check', sql.raw(`state in (${inList(jobStates)})`)),
    check('reminder_jobs_deadline_after_due', sql`deadline_at >= due_at`),
    check('reminder_jobs_window_ordered', sql`window_earliest is null or window_earliest <= deadline_at`),
    check('reminder_jobs_category_check', sql.raw(`category in (${inList(noticeCategories)})`)),
    check('reminder_jobs_attempts_nonnegative', sql`attempts >= 0`),
    check('reminder_jobs_channel_check', sql.raw(`channel in (${inList(channels)})`)),
    check('reminder_jobs_sms_has_phone', sql`channel <> 'sms' or recipient_phone is not null`),
    check('reminder_jobs_email_has_address', sql`channel <> 'email' or recipient_email is not null`),
    // Support's lookup by the number a text went to. Written at scheduling only, so no HOT update is lost.
    index('reminder_jobs_phone_idx')
      .on(table.recipientPhone)
      .where(sql`recipient_phone is not null`),
    // Overview buckets, oldest pending, and the sweeper: all read pending jobs only.
    index('reminder_jobs_pending_idx')
      .on(table.nextAttemptAt)
      .where(sql`state = 'pending'`),
    index('reminder_jobs_pending_due_idx')
      .on(table.noticeType, table.dueAt)
      .where(sql`state = 'pending'`),
    index('reminder_jobs_email_idx').on(sql`lower(${table.recipientEmail})`),
    index('reminder_jobs_subject_idx').on(table.subjectId),
    // The producer's status API (db/queries/notice-status.ts): by business identity, and pages
    // keyed on (created_at, id). Columns written at scheduling only, so no HOT update is lost.
    index('reminder_jobs_identity_idx').on(table.noticeType, table.identity, table.revision),
    index('reminder_jobs_created_idx').on(table.createdAt, table.id),
    index('reminder_jobs_customer_idx')
      .on(table.customerId)
      .where(sql`customer_id is not null`),
    index('reminder_jobs_batch_idx')
      .on(table.batchId)
      .where(sql`batch_id is not null`),
    index('reminder_jobs_event_idx')
      .on(table.eventId)
      .where(sql`event_id is not null`),
    index('reminder_jobs_evidence_idx')
      .on(table.evidenceRef)
      .where(sql`evidence_ref is not null`),
    // Windows at risk: a range on the deadline of unsent jobs, index-only for the counts by type × region.
    // deadline_at, notice_type, region and due_at are written at scheduling and not by the send path, and
    // state is already an indexed (predicate) column, so this index costs the worker's updates no
    // HOT update they had (see bench/console-scale.ts).
    index('reminder_jobs_open_deadline_idx')
      .on(table.deadlineAt, table.noticeType, table.region, table.dueAt)
      .where(sql`state in ('pending', 'claimed')`),
    // Missed windows by when they were missed (the suppression's update); only suppressed rows enter.
    index('reminder_jobs_missed_idx')
      .on(table.updatedAt, table.id)
      .where(sql`state = 'suppressed' and suppression_reason in ('window_missed', 'deadline_passed')`),
    // Required notices retrying past MAX_ATTEMPTS are at risk whatever their deadline (lib/jobs/backoff.ts):
    // the few retrying rows by deadline. Every job update already sets updated_at, an indexed column,
    // so none of them was HOT; the one that was (wake-up published: wakeup_published_at alone) stays HOT.
    index('reminder_jobs_retrying_idx')
      .on(table.deadlineAt, table.id)
      .where(sql`state = 'pending' and last_error_class is not null`),
    // The Failures page (lib/console/failures.ts): failed, retrying, deferred and missed notices by
    // when they last changed; keyset on (updated_at, id). The same HOT reasoning as above.
    index('reminder_jobs_attention_idx')
      .on(table.updatedAt, table.id)
      .where(
        sql`state = 'failed' or (state = 'suppressed' and suppression_reason = 'window_missed') or (state = 'pending' and (last_error_class is not null or next_attempt_at > due_at))`,
      ),
    // Retention deletes finished jobs oldest first in small batches; without this each batch scans.
    index('reminder_jobs_finished_idx')
      .on(table.updatedAt)
      .where(sql`state in ('sent', 'suppressed', 'failed', 'cancelled')`),
  ],
);

/** One compact row per handling of a job: who, when, outcome, error class. No bodies. */
export const deliveryAttempts = pgTable(
  'delivery_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    jobId: uuid('job_id'),
    noticeKey: text('notice_key').notNull(),
    workerId: text('worker_id').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }).notNull().defaultNow(),
    outcome: text('outcome', { enum: attemptOutcomes }).notNull(),
    /** Why: the suppression reason, the deferral cause, or the error class. */
    detail: text('detail'),
    errorClass: text('error_class'),
    queueMessageId: text('queue_message_id'),
    batchId: text('batch_id'),
    correlationId: text('correlation_id'),
    /** Milliseconds between the claim commit and the result commit, when both happened. */
    claimToCommitMs: integer('claim_to_commit_ms'),
    mode: text('mode', { enum: ['shadow', 'enforce'] })
      .notNull()
      .default('enforce'),
  },
  (table) => [
    check('delivery_attempts_outcome_check', sql.raw(`outcome in (${inList(attemptOutcomes)})`)),
    index('delivery_attempts_job_idx').on(table.jobId),
    index('delivery_attempts_notice_key_idx').on(table.noticeKey),
    // Covering (outcome, claim_to_commit_ms) so the overview's series over a week of attempts
    // is an index-only scan: at 10 M rows the heap fetches were 70 of its 110 ms.
    index('delivery_attempts_started_idx').on(table.startedAt, table.outcome, table.claimToCommitMs),
    index('delivery_attempts_batch_idx')
      .on(table.batchId)
      .where(sql`batch_id is not null`),
  ],
);

export type JobRow = typeof reminderJobs.$inferSelect;
export type AttemptRow = typeof deliveryAttempts.$inferSelect;
