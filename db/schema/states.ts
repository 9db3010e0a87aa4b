/**
 * The closed sets of states and reasons. They live in one place so the check constraints,
 * the zod schemas and the UI labels cannot drift apart.
 */
export const ledgerStates = ['claimed', 'sent', 'released', 'suppressed'] as const;
export type LedgerState = (typeof ledgerStates)[number];

/**
 * Where a `sent` row stands at a provider whose answer is provisional (SendGrid's 202 "queued for
 * processing", one X-Message-Id for the whole request and no per-message result): `accepted` from
 * the answer until the provider's own event for this message arrives; then `processed` (any
 * hand-over event: processed, delivered, deferred, bounce) or `dropped` (SendGrid dropped it
 * without sending: a suppressed or invalid address). Null for every other transport, whose answer
 * is already per message and final.
 */
export const providerHandOverStatuses = ['accepted', 'processed', 'dropped'] as const;
export type ProviderHandOverStatus = (typeof providerHandOverStatuses)[number];

export const jobStates = ['pending', 'claimed', 'sent', 'suppressed', 'failed', 'cancelled'] as const;
export type JobState = (typeof jobStates)[number];

export const attemptOutcomes = [
  'sent',
  'deferred',
  'discarded',
  'suppressed_duplicate',
  'would_suppress',
  'suppressed_policy',
  'retryable_failure',
  'permanent_failure',
  'unknown',
] as const;
export type AttemptOutcome = (typeof attemptOutcomes)[number];

/**
 * `window_missed`: the send window's latest instant passed before the notice could go out (it is
 * never sent late); the attempt's detail says why (`window_missed`, or `quiet_hours_cover_window`
 * for a courtesy notice whose remaining window was all quiet hours). Migration 0008 renamed the
 * former `deadline_passed` and `quiet_hours_past_deadline` to it.
 */
export const suppressionReasons = ['duplicate', 'window_missed', 'unsubscribed', 'hard_bounce', 'complaint', 'evidence_resolved', 'operator'] as const;
export type SuppressionReason = (typeof suppressionReasons)[number];

/** `required`: a legal notice the rules call for; `courtesy`: the merchant's own reminder. */
export const noticeCategories = ['required', 'courtesy'] as const;
export type NoticeCategory = (typeof noticeCategories)[number];

export const recipientSuppressionReasons = ['hard_bounce', 'complaint', 'unsubscribed', 'manual'] as const;
export type RecipientSuppressionReason = (typeof recipientSuppressionReasons)[number];

/** `unsubscribe` / `resubscribe`: the recipient changed their subscription at the provider (lib/events/ingest.ts writes the preference). */
export const providerEventTypes = [
  'accepted',
  'delivered',
  'deferred',
  'bounce',
  'soft_bounce',
  'complaint',
  'dropped',
  'unsubscribe',
  'resubscribe',
  'other',
] as const;
export type ProviderEventType = (typeof providerEventTypes)[number];

/** Events that come only after the provider accepted the message from us (see lib/events/types.ts). */
export const handOverEventTypes = ['accepted', 'delivered', 'deferred', 'bounce', 'soft_bounce', 'complaint'] as const satisfies readonly ProviderEventType[];

export const replayStates = ['requested', 'approved', 'rejected', 'running', 'completed', 'cancelled', 'failed'] as const;
export type ReplayState = (typeof replayStates)[number];

export const roles = ['support', 'oncall', 'operator', 'manager', 'admin'] as const;
export type Role = (typeof roles)[number];

/** What a producer API token may do: one scope per family of /api/v1 routes (lib/api/producer.ts says which). */
export const apiTokenScopes = ['reminders:write', 'events:write', 'evidence:write', 'preferences:write', 'notices:read', 'webhooks:manage'] as const;
export type ApiTokenScope = (typeof apiTokenScopes)[number];
/**
 * The scopes of a token made without naming any (and of the tokens made before scopes): the
 * producer routes. `webhooks:manage` (where the ledger's events go) is held only when asked for.
 */
export const defaultApiTokenScopes = [
  'reminders:write',
  'events:write',
  'evidence:write',
  'preferences:write',
  'notices:read',
] as const satisfies readonly ApiTokenScope[];

/** `state in ('a','b')` for a check constraint; values are compile-time constants, never input. */
export function inList(values: readonly string[]): string {
  return values.map((value) => `'${value}'`).join(', ');
}

/** How a notice reaches its recipient. Part of what a notice is (its type's configuration), never of a replay. */
export const channels = ['email', 'sms'] as const;
export type Channel = (typeof channels)[number];

/**
 * A recipient's standing for one category of notice on one channel. `required`: a notice the law
 * calls for, which an opt-out cannot stop (a hard bounce or a complaint still does); it is the only
 * state of the `required` category and never one of `courtesy`.
 */
export const preferenceStates = ['opted_in', 'opted_out', 'required'] as const;
export type PreferenceState = (typeof preferenceStates)[number];

/** Who changed a preference: the recipient (one-click, the recipient page, an SMS keyword), the provider, the producer, or support. */
export const preferenceSources = ['one_click', 'recipient_page', 'provider_event', 'sms_keyword', 'producer_api', 'support'] as const;
export type PreferenceSource = (typeof preferenceSources)[number];

/** Where a customer asked to cancel from: only the recipient page today. */
export const cancellationSources = ['recipient_page'] as const;
export type CancellationSource = (typeof cancellationSources)[number];

/**
 * A Twilio message's status as its callbacks report it (Twilio "Message resource: status"), in
 * the order a message moves through them: a status only ever moves to a higher rank, so a late
 * or duplicated callback cannot move it back. The four final ones share the top rank: the first
 * to arrive stays (`read` follows `delivered` on WhatsApp/RCS only, so it ranks above).
 */
export const smsStatusRank = {
  accepted: 0,
  scheduled: 0,
  queued: 1,
  sending: 2,
  sent: 3,
  delivered: 4,
  undelivered: 4,
  failed: 4,
  canceled: 4,
  read: 5,
} as const;
export type SmsStatus = keyof typeof smsStatusRank;
export const smsStatuses = Object.keys(smsStatusRank) as [SmsStatus, ...SmsStatus[]];
