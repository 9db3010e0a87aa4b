import { timingSafeEqual, createHash } from 'node:crypto';
import type { DbOrTx } from '@/db/client';
import { recordCancellationRequest } from '@/db/queries/cancellation-requests';
import type { RecipientNotice } from '@/db/queries/recipient-notice';
import type { Channel } from '@/db/schema/states';
import { ok, refuse, type Result } from '@/lib/http/refusal';
import { correlationOf } from '@/lib/ledger/notice-key';
import { cancelRedirectFields } from '@/lib/windows/config-schema';
import type { NoticeType } from '@/lib/windows/load-config';
import { phoneOf } from './notice-view';
import type { RecipientThrottle } from './throttle';
import { recordJobEvent, setPreferenceReported } from '@/lib/webhooks/outbox';

/**
 * What the customer can do from the notice's page. Each action changes one thing or nothing:
 * a refusal (wrong code, nothing to cancel, no phone number) writes no product row.
 */

/** Typed codes are forgiving: case, spaces and dashes do not matter. */
function normaliseCode(code: string): string {
  return code.replace(/[\s-]+/g, '').toUpperCase();
}

/** Constant time in the code's content: both sides are hashed to 32 bytes first, so lengths never differ. */
export function codesMatch(given: string, stored: string): boolean {
  const digest = (text: string) => createHash('sha256').update(normaliseCode(text), 'utf8').digest();
  return timingSafeEqual(digest(given), digest(stored));
}

/** The merchant's cancel page for this notice: the configured template with the identity's values, percent-encoded. */
export function cancelRedirectUrl(template: string, notice: RecipientNotice): string {
  let url = template;
  for (const field of cancelRedirectFields(template)) {
    const value = field === 'customer_id' ? (notice.job.customerId ?? '') : (notice.job.identity[field] ?? '');
    url = url.replace(`{${field}}`, encodeURIComponent(value));
  }
  return new URL(url).toString();
}

export type CancelOutcome = { status: 'requested' | 'already_requested'; requestedAt: Date } | { status: 'redirect'; location: string };

export async function requestCancellation({
  db,
  notice,
  type,
  code,
  throttle,
}: {
  db: DbOrTx;
  notice: RecipientNotice;
  type: NoticeType | null;
  code: string | undefined;
  throttle: RecipientThrottle;
}): Promise<Result<CancelOutcome>> {
  const cancel = type?.cancel;
  if (!cancel) return refuse('unprocessable', 'This notice is not about something that can be cancelled here.', { code: 'nothing_to_cancel' });
  let codeVerified = false;
  if (cancel.requiresCode) {
    const key = notice.job.noticeKey;
    const locked = await throttle.codeRefusal(key);
    if (locked)
      return refuse('rate_limited', 'Too many wrong codes for this notice; wait and try again.', {
        headers: { 'retry-after': String(Math.ceil(locked.retryInMs / 1000)) },
      });
    if (code === undefined || code.trim() === '') return refuse('invalid_input', 'Type the confirmation code from the email.', { code: 'code_required' });
    if (!notice.oneTimeCode)
      return refuse('unprocessable', 'This notice carries no confirmation code; contact the company to cancel.', { code: 'no_code_on_file' });
    if (!codesMatch(code, notice.oneTimeCode)) {
      await throttle.countCodeFailure(key);
      return refuse('forbidden', 'That confirmation code does not match this notice.', { code: 'code_wrong' });
    }
    codeVerified = true;
  }
  if (cancel.redirect) return ok({ status: 'redirect', location: cancelRedirectUrl(cancel.redirect, notice) });
  const { job } = notice;
  // The request and its cancellation.requested event commit together; a repeat writes neither.
  const { created, row } = await db.transaction(async (tx) => {
    const recorded = await recordCancellationRequest(tx, {
      noticeKey: job.noticeKey,
      jobId: job.id,
      noticeType: job.noticeType,
      identity: job.identity,
      subjectId: job.subjectId,
      customerId: job.customerId,
      source: 'recipient_page',
      codeVerified,
    });
    if (recorded.created)
      await recordJobEvent(tx, {
        type: 'cancellation.requested',
        jobId: job.id,
        extra: { source: 'recipient_page', codeVerified, requestedAt: recorded.row.requestedAt.toISOString() },
      });
    return recorded;
  });
  return ok({ status: created ? 'requested' : 'already_requested', requestedAt: row.requestedAt });
}

export function preferenceAddress(notice: RecipientNotice, channel: Channel): string | null {
  return channel === 'email' ? notice.job.recipientEmail : phoneOf(notice);
}

/** A courtesy preference, written as the recipient page (source `recipient_page`, actor: the notice's correlation). */
export async function changeCourtesyPreference({
  db,
  notice,
  channel,
  state,
}: {
  db: DbOrTx;
  notice: RecipientNotice;
  channel: Channel;
  state: 'opted_in' | 'opted_out';
}): Promise<Result<{ channel: Channel; state: 'opted_in' | 'opted_out'; changed: boolean }>> {
  const recipient = preferenceAddress(notice, channel);
  if (!recipient) return refuse('invalid_input', 'This notice has no phone number, so there are no text messages to change.', { code: 'no_address' });
  const written = await db.transaction((tx) =>
    setPreferenceReported(tx, { recipient, category: 'courtesy', channel, state, source: 'recipient_page', actor: correlationOf(notice.job.noticeKey) }),
  );
  return ok({ channel, state, changed: written.changed });
}
