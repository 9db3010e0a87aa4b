-- Four eyes (lib/replay/transitions.ts) refuse an approver who created the requester or was created by them.
-- Users created before users.created_by existed get their creator from the audit row of their creation,
-- where the actor is the creating console user's email (a CLI creation's actor is cli:<os user>: no user, stays null).
UPDATE "users" AS "u" SET "created_by" = "creator"."id"
FROM "audit_log" AS "a"
JOIN "users" AS "creator" ON "creator"."email" = "a"."actor"
WHERE "a"."action" = 'user.create'
  AND "a"."target_type" = 'user'
  AND "a"."target_id" = "u"."id"::text
  AND "u"."created_by" IS NULL
  AND "creator"."id" <> "u"."id";
