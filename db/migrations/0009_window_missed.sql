-- Send windows are enforced at send: a notice whose window closed before it went out is
-- suppressed `window_missed` (it is never sent late). The two former reasons for the same
-- outcome become that one; the attempts keep why in their detail, the words the lookup shows.
UPDATE "reminder_jobs" SET "suppression_reason" = 'window_missed', "updated_at" = now()
  WHERE "state" = 'suppressed' AND "suppression_reason" IN ('deadline_passed', 'quiet_hours_past_deadline');--> statement-breakpoint
UPDATE "delivery_attempts" SET "detail" = 'window_missed'
  WHERE "outcome" = 'suppressed_policy' AND "detail" = 'deadline_passed';--> statement-breakpoint
UPDATE "delivery_attempts" SET "detail" = 'quiet_hours_cover_window'
  WHERE "outcome" = 'suppressed_policy' AND "detail" = 'quiet_hours_past_deadline';
