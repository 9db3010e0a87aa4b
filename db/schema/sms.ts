import { sql } from 'drizzle-orm';
import { check, index, pgTable, smallint, text, timestamp } from 'drizzle-orm/pg-core';
import { inList, smsStatuses } from './states';

/**
 * Each Twilio message we know of and the furthest status its callbacks reported. Written only by
 * the status callback route (lib/sms/callbacks.ts), forward only (`status_rank` grows); the
 * callbacks themselves are provider_events rows like every provider's.
 */
export const smsMessages = pgTable(
  'sms_messages',
  {
    messageSid: text('message_sid').primaryKey(),
    /** The notice's correlation from the StatusCallback URL; null for a message we did not send. */
    correlationId: text('correlation_id'),
    noticeKey: text('notice_key'),
    status: text('status', { enum: smsStatuses }).notNull(),
    statusRank: smallint('status_rank').notNull(),
    /** Twilio's ErrorCode of an undelivered or failed message (30003 unreachable, 30007 filtered, …). */
    errorCode: text('error_code'),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    check('sms_messages_status_check', sql.raw(`status in (${inList(smsStatuses)})`)),
    index('sms_messages_notice_key_idx')
      .on(table.noticeKey)
      .where(sql`notice_key is not null`),
  ],
);

export type SmsMessageRow = typeof smsMessages.$inferSelect;
