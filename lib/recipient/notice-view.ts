import type { RecipientNotice } from '@/db/queries/recipient-notice';
import type { CancellationRequestRow } from '@/db/schema/recipients';
import type { Channel, PreferenceState } from '@/db/schema/states';
import type { NoticeType } from '@/lib/windows/load-config';
import type { Obligation } from '@/lib/windows/rules';

/**
 * What the recipient page shows about one notice, from the rows alone: no one-time code, no
 * notice key, nothing the customer did not already receive in the mail. Pure, so it is tested
 * without a database; dates are the recipient's wall clock (the job's time zone).
 */

export type CancelOffer =
  { kind: 'none' } | { kind: 'request'; requiresCode: boolean; requestedAt: string | null } | { kind: 'redirect'; requiresCode: boolean; host: string };

export type PreferenceRow = { channel: Channel; address: string; state: Exclude<PreferenceState, 'required'> };

export type RecipientPageView = {
  title: string;
  typeLabel: string;
  plan: string | null;
  amount: string | null;
  /** The anchor (the charge) in the recipient's zone, when the notice has one after its window. */
  chargeAt: string | null;
  /** When the notice was due to go out: its allowed window in the recipient's zone. */
  window: string;
  timeZone: string;
  category: 'courtesy' | 'required';
  /** Why a required notice cannot be unsubscribed, in words. */
  requiredReason: string | null;
  cancel: CancelOffer;
  /** Courtesy reminders per channel the notice knows an address for. */
  preferences: PreferenceRow[];
};

const obligationReason: Record<Obligation, string> = {
  auto_renewal_notice: 'Automatic-renewal laws require us to tell you before your subscription renews.',
  trial_conversion_notice: 'Consumer law and card-network rules require us to tell you before a trial or promotional price ends.',
  price_change_notice: 'Consumer law and card-network rules require us to tell you before the price changes.',
  pre_debit_notice: 'Payment rules for recurring card mandates require a notice before each debit.',
  billing_reminder: 'Your card network’s rules require us to remind you before we bill your card.',
};

function text(payload: Record<string, unknown>, ...names: string[]): string | null {
  for (const name of names) {
    const value = payload[name];
    if (typeof value === 'string' && value.trim() !== '') return value.trim().slice(0, 120);
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  }
  return null;
}

/** `49.00` + `EUR` → "€49.00"; anything that is not a decimal and an ISO 4217 code is shown as given. */
export function formatAmount(payload: Record<string, unknown>): string | null {
  const amount = text(payload, 'amount', 'amount_due');
  if (amount === null) return null;
  const currency = text(payload, 'currency');
  if (currency && /^[A-Z]{3}$/.test(currency) && /^-?\d+(\.\d+)?$/.test(amount)) {
    try {
      return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(Number(amount));
    } catch {
      return `${amount} ${currency}`;
    }
  }
  return currency ? `${amount} ${currency}` : amount;
}

/** "Dec 4, 2026, 10:14 AM GMT+1" in `timeZone`; an unknown zone falls back to UTC, named. */
export function formatForRecipient(date: Date, timeZone: string): string {
  const options: Intl.DateTimeFormatOptions = { dateStyle: 'medium', timeStyle: 'short' };
  try {
    return new Intl.DateTimeFormat('en-US', { ...options, timeZone }).format(date);
  } catch {
    return `${new Intl.DateTimeFormat('en-US', { ...options, timeZone: 'UTC' }).format(date)} UTC`;
  }
}

/** "Dec 1, 2026, 5:51 – 11:52 PM": a range in `timeZone`, the shared parts said once. */
export function formatRangeForRecipient(start: Date, end: Date, timeZone: string): string {
  const options: Intl.DateTimeFormatOptions = { dateStyle: 'medium', timeStyle: 'short' };
  try {
    // ICU puts thin and narrow no-break spaces around the dash; plain spaces read the same and match everywhere.
    return new Intl.DateTimeFormat('en-US', { ...options, timeZone }).formatRange(start, end).replace(/[\u2009\u202f]/g, ' ');
  } catch {
    return `${new Intl.DateTimeFormat('en-US', { ...options, timeZone: 'UTC' }).formatRange(start, end).replace(/[\u2009\u202f]/g, ' ')} UTC`;
  }
}

function zoneName(date: Date, timeZone: string): string {
  try {
    const part = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'long' }).formatToParts(date).find((p) => p.type === 'timeZoneName');
    return part ? `${part.value} (${timeZone})` : timeZone;
  } catch {
    return 'UTC';
  }
}

/** An address as far as the customer needs to recognise it: `j•••@example.com`, `+49 ••• 42`. */
export function maskAddress(channel: Channel, address: string): string {
  if (channel === 'email') {
    const at = address.lastIndexOf('@');
    if (at <= 0) return '•••';
    return `${address.slice(0, 1)}•••${address.slice(at)}`;
  }
  return address.length <= 4 ? '•••' : `${address.slice(0, 3)} ••• ${address.slice(-2)}`;
}

export function cancelOfferOf(type: NoticeType | null, request: CancellationRequestRow | null, timeZone: string): CancelOffer {
  const cancel = type?.cancel;
  if (!cancel) return { kind: 'none' };
  if (cancel.redirect) return { kind: 'redirect', requiresCode: cancel.requiresCode, host: new URL(cancel.redirect.replace(/\{[a-z0-9_]+\}/g, 'x')).host };
  return { kind: 'request', requiresCode: cancel.requiresCode, requestedAt: request ? formatForRecipient(request.requestedAt, timeZone) : null };
}

/** The notice's phone number (E.164, normalised at scheduling), else the one its event gave: the SMS row of the preferences. */
export function phoneOf(notice: RecipientNotice): string | null {
  const phone = notice.job.recipientPhone ?? notice.eventRecipient?.phone;
  return typeof phone === 'string' && /^\+[1-9]\d{6,14}$/.test(phone) ? phone : null;
}

export function buildRecipientPageView({
  notice,
  type,
  request,
  preferences,
}: {
  notice: RecipientNotice;
  type: NoticeType | null;
  request: CancellationRequestRow | null;
  preferences: Partial<Record<Channel, Exclude<PreferenceState, 'required'>>>;
}): RecipientPageView {
  const { job } = notice;
  const zone = job.recipientTimeZone;
  const typeLabel = type?.label ?? job.noticeType.replace(/_/g, ' ');
  const plan = text(job.payload, 'plan_name', 'plan');
  const anchor = notice.anchorAt && notice.anchorAt.getTime() > job.deadlineAt.getTime() ? notice.anchorAt : null;
  const earliest = job.windowEarliest ?? job.dueAt;
  const phone = phoneOf(notice);
  const rows: PreferenceRow[] = job.recipientEmail
    ? [{ channel: 'email', address: maskAddress('email', job.recipientEmail), state: preferences.email ?? 'opted_in' }]
    : [];
  if (phone) rows.push({ channel: 'sms', address: maskAddress('sms', phone), state: preferences.sms ?? 'opted_in' });
  const obligation = type?.obligation ?? null;
  return {
    title: plan ? `Your ${plan} subscription` : typeLabel,
    typeLabel,
    plan,
    amount: formatAmount(job.payload),
    chargeAt: anchor ? formatForRecipient(anchor, zone) : null,
    window: formatRangeForRecipient(earliest, job.deadlineAt, zone),
    timeZone: zoneName(anchor ?? job.deadlineAt, zone),
    category: job.category,
    requiredReason:
      job.category === 'required'
        ? obligation
          ? obligationReason[obligation]
          : 'This notice is required by law, so it is sent whatever your preferences.'
        : null,
    cancel: cancelOfferOf(type, request, zone),
    preferences: rows,
  };
}
