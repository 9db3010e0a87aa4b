import type { AttemptOutcome, SuppressionReason } from '@/db/schema/states';

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

export function explainSuppression(reason: string | null): string | null {
  if (!reason) return null;
  return reason in suppressionReasonText ? suppressionReasonText[reason as SuppressionReason] : reason.replaceAll('_', ' ');
}

export function explainAttempt(outcome: string, detail: string | null): string {
  const base = outcome in attemptOutcomeText ? attemptOutcomeText[outcome as AttemptOutcome] : outcome;
  if (!detail) return base;
  if (outcome === 'deferred') return `Deferred because of ${deferralText[detail] ?? detail.replaceAll('_', ' ')}`;
  if (outcome === 'suppressed_policy') return `Suppressed because ${suppressionDetailText[detail] ?? explainSuppression(detail) ?? detail}`;
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
export function transportDownText(row: {
  transport: 'smtp' | 'twilio';
  reason: 'nothing_left' | 'config_broken' | null;
  errorClass: string | null;
  code: number | null;
}): {
  headline: string;
  action: string;
} {
  const name = row.transport === 'smtp' ? 'SMTP' : 'Twilio';
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
