import { z } from 'zod';
import { consoleContract } from '@/lib/http/contract';
import { noticeTypeName, reason } from '@/lib/api/fields';

/** What a pause stops: all sending, one notice type, or one channel. */
export const pauseTarget = z.discriminatedUnion('scope', [
  z.strictObject({ scope: z.literal('all') }),
  z.strictObject({ scope: z.literal('notice_type'), noticeType: noticeTypeName }),
  z.strictObject({ scope: z.literal('channel'), channel: z.enum(['email', 'sms']) }),
]);

export const pauseRequest = z.strictObject({ action: z.enum(['pause', 'resume']), target: pauseTarget, reason: reason() });

export const pauseView = z.object({
  name: z.string(),
  label: z.string(),
  reason: z.string(),
  changedBy: z.string(),
  since: z.string(),
  /** Pending or claimed notices in its scope, not sent. */
  inScope: z.number().int().nonnegative(),
  /** Of them, those whose window closes within the at-risk horizon (WINDOW_AT_RISK_WITHIN): what the pause costs if it lasts that long. */
  closingWithinHorizon: z.number().int().nonnegative(),
});
export type PauseView = z.infer<typeof pauseView>;

export const controlsView = z.object({ pauses: z.array(pauseView), horizonMs: z.number() });

export const listControls = consoleContract({
  method: 'GET',
  path: '/api/console/controls',
  permission: 'overview.read',
  input: z.strictObject({}),
  output: controlsView,
});

export const setPauseContract = consoleContract({
  method: 'POST',
  path: '/api/console/controls',
  permission: 'controls.manage',
  input: pauseRequest,
  output: z.object({ changed: z.boolean(), name: z.string(), value: z.enum(['paused', 'running']) }),
});
