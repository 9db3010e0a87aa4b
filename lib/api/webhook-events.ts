/** The outbound event types (Standard Webhooks `type`), in the ledger's own words (lib/webhooks/events.ts re-exports them). */
export const webhookEventTypes = [
  'notice.sent',
  'notice.delivered',
  'notice.bounced',
  'notice.complained',
  'notice.failed',
  'notice.suppressed',
  'notice.window_missed',
  'notice.outcome_unknown',
  'notice.resolved',
  'cancellation.requested',
  'preference.changed',
  'compliance_gap.opened',
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];

/** The type of a test send (`POST /api/v1/webhook-endpoints/{id}/test`): delivered to that endpoint only, whatever it subscribes to. */
export const webhookTestEventType = 'webhook.test';
