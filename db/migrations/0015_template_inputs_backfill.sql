-- Notices planned from a business event before the job row carried them: the event's anchor and
-- the recipient's locale, so their templates show the charge date and speak the recipient's language.
UPDATE "reminder_jobs" AS j
SET "anchor_at" = e."anchor_at", "recipient_locale" = e."recipient"->>'locale'
FROM "business_events" AS e
WHERE j."event_id" = e."id" AND j."anchor_at" IS NULL;
