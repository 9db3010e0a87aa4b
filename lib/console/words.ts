import type { AttemptOutcome, SuppressionReason } from '@/db/schema/states';
import { smsRefusalText } from '@/lib/sms/refusals';

/** What each recorded state means, in words support can read to a customer. */
export const suppressionReasonText: Record<SuppressionReason, string> = {
  duplicate: 'it had already been sent (duplicate)',
  window_missed: 'its send window closed before it could be sent (it is never sent late)',
  unsubscribed: 'the recipient had unsubscribed',
  hard_bounce: "the recipient's address hard-bounced before",
  complaint: 'the recipient marked an earlier email as spam',
  evidence_resolved: 'the problem it was about had already been resolved',
  operator: 'an operator suppressed it',
};

export const attemptOutcomeText: Record<AttemptOutcome, string> = {
  sent: 'Sent: the provider accepted the message',
  deferred: 'Deferred',
  discarded: 'Wake-up discarded: the notice was already handled',
  suppressed_duplicate: 'Duplicate suppressed: another attempt already held the claim, so no second email was sent',
  would_suppress: 'Shadow mode: would have been suppressed as a duplicate (it was sent anyway)',
  suppressed_policy: 'Suppressed by policy',
  retryable_failure: 'The provider refused for now; it will be retried',
  permanent_failure: 'The provider refused permanently',
  unknown: 'Outcome unknown: the worker lost contact mid-send; the claim is held until someone resolves it',
};

const deferralText: Record<string, string> = {
  early: 'an early wake-up: its send window had not opened yet',
  not_due: 'an early wake-up: it was not due yet',
  quiet_hours: "the recipient's quiet hours",
  rate_limited: "the recipient domain's rate limit",
  rate_limit: "the recipient domain's rate limit",
  transport_down: 'its transport was down: sending was paused, no attempt counted, until a probe reached it again',
};

/** Why a policy suppression happened, when the attempt's detail says more than the reason. */
const suppressionDetailText: Record<string, string> = {
  opted_out: 'the recipient had opted out of courtesy notices by email',
  quiet_hours_cover_window: "its send window closed during the recipient's quiet hours (a courtesy notice is not sent inside them)",
  // Rows recorded before migration 0008 kept their words.
  deadline_passed: 'its send window closed before it could be sent (it is never sent late)',
  quiet_hours_past_deadline: "its send window closed during the recipient's quiet hours (a courtesy notice is not sent inside them)",
};

/** Details on a `sent` attempt. */
const sentDetailText: Record<string, string> = {
  quiet_hours_overridden: "sent inside the recipient's quiet hours: they covered the rest of a required notice's window",
};

/** A transport's error class (lib/mail/transport.ts, lib/sms/transport.ts, the send path's own), in words. */
const errorClassText: Record<string, string> = {
  connect_failed: 'the mail relay refused the connection, so nothing was sent',
  timeout: 'the provider did not answer in time',
  connection_lost: 'the connection to the provider was lost mid-send',
  render_failed: 'its template could not be rendered',
  too_many_segments: 'the text message was longer than its type allows',
  sms_not_configured: 'text messages are not configured (no Twilio settings)',
};

export function explainErrorClass(errorClass: string): string {
  if (errorClass in errorClassText) return errorClassText[errorClass] ?? errorClass;
  const smtp = /^smtp_(\d{3})$/.exec(errorClass);
  if (smtp?.[1]) return smtp[1].startsWith('4') ? `the mail server said to try later (SMTP ${smtp[1]})` : `the mail server refused it (SMTP ${smtp[1]})`;
  const twilio = /^twilio_(\d+)$/.exec(errorClass);
  if (twilio?.[1]) return `Twilio refused it (error ${twilio[1]})`;
  return errorClass.replaceAll('_', ' ');
}

/**
 * A policy suppression's detail: a reason or a known detail, else the error class a notice was
 * being retried for when its window closed (lib/jobs/backoff.ts: the window is the budget).
 */
function explainPolicyDetail(detail: string): string {
  if (detail in suppressionDetailText) return suppressionDetailText[detail] ?? detail;
  if (detail in suppressionReasonText) return suppressionReasonText[detail as SuppressionReason];
  return `its send window closed while it was being retried after ${explainErrorClass(detail)} (it is never sent late)`;
}

/** Why a notice is on the Failures page, in words. */
export function explainFailure(row: {
  kind: 'failed' | 'retrying' | 'deferred' | 'window_missed';
  attempts: number;
  lastErrorClass: string | null;
  lastAttempt: { outcome: string; detail: string | null } | null;
}): string {
  const cause = row.lastErrorClass ? explainErrorClass(row.lastErrorClass) : null;
  if (row.kind === 'failed') return `Failed: ${cause ?? 'the provider refused it permanently'}`;
  if (row.kind === 'retrying')
    return `Retrying after ${row.attempts} temporary ${row.attempts === 1 ? 'failure' : 'failures'}: ${cause ?? 'a temporary failure'}; it is retried until its window closes`;
  if (row.kind === 'window_missed') {
    if (row.lastAttempt?.outcome === 'suppressed_policy' && row.lastAttempt.detail) return `Window missed: ${explainPolicyDetail(row.lastAttempt.detail)}`;
    return `Window missed: ${cause ? `its send window closed while it was being retried after ${cause}` : suppressionReasonText.window_missed}`;
  }
  if (row.lastAttempt?.outcome === 'deferred') return explainAttempt('deferred', row.lastAttempt.detail);
  return 'Deferred: held past its due time';
}

export function explainSuppression(reason: string | null): string | null {
  if (!reason) return null;
  return reason in suppressionReasonText ? suppressionReasonText[reason as SuppressionReason] : reason.replaceAll('_', ' ');
}

export function explainAttempt(outcome: string, detail: string | null): string {
  const base = outcome in attemptOutcomeText ? attemptOutcomeText[outcome as AttemptOutcome] : outcome;
  if (!detail) return base;
  if (outcome === 'deferred') return `Deferred because of ${deferralText[detail] ?? detail.replaceAll('_', ' ')}`;
  if (outcome === 'suppressed_policy') return `Suppressed because ${explainPolicyDetail(detail)}`;
  if (detail === 'email_fallback:sms_not_configured')
    return 'Not sent by text: Twilio is not configured on this deployment, so the notice goes by email, its type’s other channel';
  const fallback = /^email_fallback:(\d+)$/.exec(detail)?.[1];
  if (outcome === 'permanent_failure' && fallback)
    return `Text message refused for good (${smsRefusalText(fallback) ?? 'a refusal for this number'}; Twilio ${fallback}): this required notice goes by email instead, as the same notice with the same code`;
  if (outcome === 'permanent_failure' && detail === 'mailbox_unknown')
    return "The provider refused permanently: the recipient's mailbox does not exist (the address is now on the suppression list)";
  if (outcome === 'sent' && sentDetailText[detail]) return `${base}; ${sentDetailText[detail]}`;
  return `${base} (${detail.replaceAll('_', ' ')})`;
}

export const providerEventText: Record<string, string> = {
  accepted: 'Provider accepted the message',
  delivered: "Delivered to the recipient's mail server",
  deferred: 'Provider is retrying delivery',
  bounce: 'Bounced (permanent)',
  soft_bounce: 'Bounced (temporary)',
  complaint: 'Recipient marked it as spam',
  dropped: 'Provider dropped the message',
  unsubscribe: 'Recipient unsubscribed at the provider',
  resubscribe: 'Recipient subscribed again at the provider',
  other: 'Other provider event',
};

/** A Twilio status callback or incoming keyword, by its raw status, in words. */
export const twilioEventText: Record<string, string> = {
  accepted: 'Twilio accepted the text message',
  scheduled: 'Twilio scheduled the text message',
  queued: 'Twilio queued the text message',
  sending: 'Twilio is sending the text message',
  sent: 'Twilio handed the text message to the carrier',
  delivered: "Delivered to the recipient's phone (the carrier confirmed it)",
  read: 'The recipient read the message',
  undelivered: 'The carrier could not deliver the text message',
  failed: 'Twilio could not send the text message (it never left Twilio)',
  canceled: 'The text message was canceled before it was sent',
  inbound_stop: 'The recipient replied STOP: no more courtesy text messages to this number',
  inbound_start: 'The recipient replied START: text messages to this number resumed',
  inbound: 'The recipient replied with a message (not kept)',
};

export const recipientSuppressionText: Record<string, string> = {
  hard_bounce: 'an earlier email to this address hard-bounced',
  complaint: 'the recipient complained about an earlier email',
  unsubscribed: 'the recipient unsubscribed',
  manual: 'someone added the address to the suppression list by hand',
};

const byWhom: Record<string, string> = {
  one_click: 'in one click from an email (List-Unsubscribe)',
  recipient_page: 'on the recipient page of an email',
  provider_event: 'at the mail provider',
  sms_keyword: 'by an SMS keyword',
  producer_api: 'as the producing service reported',
  support: 'by support',
};

/** A preference change as support reads it to the customer: "Opted out of courtesy reminders in one click from an email". */
export function preferenceChangeText({ to, source, category }: { to: string; source: string; category: string }): string {
  const what =
    to === 'opted_out' ? `Opted out of ${category} reminders` : to === 'opted_in' ? `Opted back in to ${category} reminders` : `Set ${category} to ${to}`;
  return `${what} ${byWhom[source] ?? `(${source.replaceAll('_', ' ')})`}`;
}

export const preferenceStateText: Record<string, string> = {
  opted_in: 'receives courtesy reminders',
  opted_out: 'opted out: courtesy reminders are not sent',
  required: 'always sent: required by law, cannot be opted out of (a hard bounce, a complaint or a manual suppression still stops it)',
};

/** What the console's banner says about a transport last seen down (transport_status, lib/transport/breaker.ts). */
export type TransportDown = {
  transport: 'smtp' | 'twilio' | 'postmark' | 'ses' | 'sendgrid';
  reason: 'nothing_left' | 'config_broken' | null;
  errorClass: string | null;
  code: number | null;
};

/** The HTTP email providers (lib/channels/<name>/): their name and the settings a refusal of our account points at. */
const httpProviders: Record<'postmark' | 'ses' | 'sendgrid', { name: string; settings: string }> = {
  postmark: { name: 'Postmark', settings: 'POSTMARK_SERVER_TOKEN and MAIL_FROM (a confirmed sender signature)' },
  ses: { name: 'Amazon SES', settings: 'SES_ACCESS_KEY_ID, SES_SECRET_ACCESS_KEY, SES_REGION and MAIL_FROM (a verified identity)' },
  sendgrid: { name: 'SendGrid', settings: 'SENDGRID_API_KEY and MAIL_FROM (a verified sender)' },
};

export function transportDownText(row: TransportDown): {
  headline: string;
  action: string;
} {
  const http = row.transport === 'smtp' || row.transport === 'twilio' ? null : httpProviders[row.transport];
  const name = http?.name ?? (row.transport === 'smtp' ? 'SMTP' : 'Twilio');
  if (row.reason === 'config_broken' && http) {
    return { headline: `${http.name} refused our account (${row.errorClass ?? row.code ?? 'refused'})`, action: `check ${http.settings}` };
  }
  if (row.reason === 'config_broken') {
    if (row.transport === 'smtp' && (row.code === 535 || row.code === 534 || row.code === 538)) {
      return { headline: `SMTP login refused (${row.code})`, action: 'check SMTP_URL credentials' };
    }
    if (row.transport === 'smtp' && row.code === 530) return { headline: 'SMTP relay requires a login (530)', action: 'add credentials to SMTP_URL' };
    if (row.transport === 'smtp')
      return {
        headline: `SMTP relay refuses our sender (${row.code ?? row.errorClass ?? 'refused'})`,
        action: "check MAIL_FROM and the relay's sender policy",
      };
    return {
      headline: `Twilio refused our account (${row.errorClass?.replace(/^twilio_/, '') ?? 'refused'})`,
      action: 'check TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM',
    };
  }
  const cause = row.errorClass ? ` (${row.errorClass.replace(/_/g, ' ')})` : '';
  return { headline: `${name} unreachable${cause}`, action: 'sending is paused and resumes by itself when a probe gets through' };
}
