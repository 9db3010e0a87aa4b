import { z } from 'zod';
import { consoleContract } from '@/lib/http/contract';
import { reason } from '@/lib/api/fields';

/** The guided rollout (shadow → backfill → enforce): what the Rollout page and `npm run ledger -- backfill` read and do. */

export const ledgerMode = z.enum(['shadow', 'enforce']);

export const backfillCounts = z.object({
  /** Sent jobs looked at: new and already in the ledger. */
  total: z.number().int().nonnegative(),
  /** Written (a run), 0 for a dry run. */
  inserted: z.number().int().nonnegative(),
  /** New keys: what a run writes (a dry run's count), or wrote. */
  newKeys: z.number().int().nonnegative(),
  /** Keys the ledger already holds (a shadow claim or an earlier backfill): left as they are. */
  existing: z.number().int().nonnegative(),
  dryRun: z.boolean(),
});
export type BackfillCounts = z.infer<typeof backfillCounts>;

export const rolloutView = z.object({
  mode: ledgerMode,
  /** false: nothing stored yet; the first worker to start stores its LEDGER_MODE. */
  stored: z.boolean(),
  since: z.string().nullable(),
  changedBy: z.string().nullable(),
  reason: z.string().nullable(),
  /** Whole days in shadow so far (null in enforce). */
  daysInShadow: z.number().nullable(),
  longestCycle: z.object({ days: z.number().int().nonnegative(), source: z.string() }),
  /** Start of the duplicate counts below: the shadow period's start, or 90 days back in enforce. */
  duplicatesFrom: z.string(),
  duplicates: z.array(
    z.object({
      noticeType: z.string(),
      label: z.string(),
      sent: z.number().int().nonnegative(),
      wouldSuppress: z.number().int().nonnegative(),
      /** wouldSuppress / sent: of the notices shadow sent, the share enforce would have stopped as duplicates; null with none sent. */
      rate: z.number().nullable(),
    }),
  ),
  backfill: z.object({
    /** Sent jobs the ledger has no row for: what enforcing now would treat as new. Enforce is refused while it is above 0. */
    treatedAsNew: z.number().int().nonnegative(),
    last: z.object({ at: z.string(), actor: z.string(), reason: z.string(), counts: backfillCounts }).nullable(),
  }),
  /** A pending request to enforce, waiting for a second person. */
  request: z.object({ requestedBy: z.string(), reason: z.string(), at: z.string() }).nullable(),
  refreshMs: z.number(),
});
export type RolloutView = z.infer<typeof rolloutView>;

export const getRolloutContract = consoleContract({
  method: 'GET',
  path: '/api/console/rollout',
  permission: 'overview.read',
  input: z.strictObject({}),
  output: rolloutView,
});

/** `shadow`: back to shadow at once (no second person: it stops no send); `request_enforce`: ask a second person; `cancel_request`: withdraw it. */
export const changeRolloutContract = consoleContract({
  method: 'POST',
  path: '/api/console/rollout',
  permission: 'rollout.manage',
  input: z.strictObject({ action: z.enum(['shadow', 'request_enforce', 'cancel_request']), reason: reason() }),
  output: z.object({ mode: ledgerMode, requested: z.boolean() }),
});

export const decideEnforceContract = consoleContract({
  method: 'POST',
  path: '/api/console/rollout/decide',
  permission: 'rollout.approve',
  input: z.strictObject({ decision: z.enum(['approve', 'reject']), reason: reason() }),
  output: z.object({ mode: ledgerMode }),
});

export const backfillContract = consoleContract({
  method: 'POST',
  path: '/api/console/rollout/backfill',
  permission: 'rollout.manage',
  input: z.strictObject({ dryRun: z.boolean(), reason: reason() }),
  output: backfillCounts,
});
