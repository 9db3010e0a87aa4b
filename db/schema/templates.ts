import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The operator's template files as a notice was rendered from them (issue 30 item 5): one row
 * per template × channel × locale × layout strings, content-addressed. `id` is the SHA-256 of the
 * canonical JSON of `content` (the template's definition, the files' names and text, the
 * fallback locale), so an edited and redeployed file is a new row and the old one stays for
 * the notices sent with it. Written once per process per version (`on conflict do nothing`),
 * never updated or deleted; `notice_ledger.template_version_id` names the row a send used.
 */
export const templateVersions = pgTable('template_versions', {
  id: text('id').primaryKey(),
  templateId: text('template_id').notNull(),
  channel: text('channel', { enum: ['email', 'sms'] }).notNull(),
  /** The template's own locale the render picked (not the recipient's). */
  locale: text('locale').notNull(),
  content: jsonb('content').$type<Record<string, unknown>>().notNull(),
  firstSeenAt: timestamp('first_seen_at', { withTimezone: true }).notNull().defaultNow(),
});

export type TemplateVersionRow = typeof templateVersions.$inferSelect;
