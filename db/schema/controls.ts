import { sql } from 'drizzle-orm';
import { check, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The operator's runtime controls, read by every worker on a short cache
 * (RUNTIME_CONTROLS_REFRESH, lib/controls/runtime-controls.ts), one cheap query for all of them:
 * - `pause:all`, `pause:notice_type:<type>`, `pause:channel:<channel>`: `paused` or `running`
 *   (resuming keeps the row, with who and why);
 * - `ledger_mode`: `shadow` or `enforce`, the one mode of every worker (the first worker to start
 *   stores its LEDGER_MODE when the row is absent; after that the row decides, lib/controls/rollout.ts);
 * - `ledger_mode_request`: `enforce`, an operator's pending request to enforce, which a second
 *   person approves (four-eyes); deleted when decided.
 * Changed only through lib/controls/service.ts, which audits every change.
 */
export const runtimeControls = pgTable(
  'runtime_controls',
  {
    name: text('name').primaryKey(),
    value: text('value').notNull(),
    reason: text('reason').notNull(),
    changedBy: text('changed_by').notNull(),
    changedAt: timestamp('changed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  () => [
    check(
      'runtime_controls_value_check',
      sql`(name like 'pause:%' and value in ('paused', 'running')) or (name = 'ledger_mode' and value in ('shadow', 'enforce')) or (name = 'ledger_mode_request' and value = 'enforce')`,
    ),
  ],
);

export type RuntimeControlRow = typeof runtimeControls.$inferSelect;
