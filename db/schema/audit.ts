import { bigserial, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Who did what, when, why, with before/after. Append-only. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    /** A user's email, `system:<component>` or `token:<prefix>`. */
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    targetType: text('target_type').notNull(),
    targetId: text('target_id').notNull(),
    reason: text('reason').notNull(),
    before: jsonb('before').$type<Record<string, unknown>>(),
    after: jsonb('after').$type<Record<string, unknown>>(),
  },
  (table) => [index('audit_log_at_idx').on(table.at), index('audit_log_target_idx').on(table.targetId), index('audit_log_actor_idx').on(table.actor, table.at)],
);

export type AuditRow = typeof auditLog.$inferSelect;
