import type { DbOrTx } from '@/db/client';
import { preferenceFor } from '@/db/queries/preferences';
import { setPreferenceReported } from '@/lib/webhooks/outbox';
import { findJobByNoticeKey } from '@/db/queries/scheduling';
import type { NoticeCategory } from '@/db/schema/states';
import { correlationOf } from '@/lib/ledger/notice-key';
import { verifyRecipientToken } from './link';
import type { LinkKeyRing } from './link-keys';
import { findLinkedNoticeKey, hasLinkExpired } from './link-notice';

/**
 * What a one-click unsubscribe link does (RFC 8058). The token names a notice; the notice's
 * recipient is opted out of courtesy notices by email (source `one_click`, actor the notice's
 * correlation). Unsubscribing twice changes nothing the second time.
 *
 * A link of a required notice (none is minted: a required notice carries no List-Unsubscribe,
 * but its type may have changed category since) also records the courtesy opt-out: the
 * recipient asked for less mail, and that is the part of it we can honour; the page says the
 * required notices still come.
 */

export type LinkRefusal = 'malformed' | 'tampered' | 'expired' | 'wrong_purpose' | 'unknown_notice';

export type UnsubscribeLink =
  { ok: true; noticeKey: string; recipient: string; category: NoticeCategory; optedOut: boolean } | { ok: false; reason: LinkRefusal };

/** Verifies the token, then finds its notice; nothing is written. */
export async function readUnsubscribeLink(db: DbOrTx, { token, keys, now }: { token: string; keys: LinkKeyRing; now: Date }): Promise<UnsubscribeLink> {
  const verdict = verifyRecipientToken({ keys, token, now });
  if (!verdict.ok) return { ok: false, reason: verdict.reason };
  if (verdict.purpose !== 'unsubscribe') return { ok: false, reason: 'wrong_purpose' };
  const noticeKey = await findLinkedNoticeKey(db, verdict);
  const job = noticeKey ? await findJobByNoticeKey(db, { noticeKey }) : null;
  // Only an email carries the link, so a notice with no email address cannot be its notice.
  if (!job?.recipientEmail) return { ok: false, reason: 'unknown_notice' };
  if (hasLinkExpired(verdict, job, now)) return { ok: false, reason: 'expired' };
  const state = await preferenceFor(db, { recipient: job.recipientEmail, category: 'courtesy', channel: 'email' });
  return { ok: true, noticeKey: job.noticeKey, recipient: job.recipientEmail, category: job.category, optedOut: state === 'opted_out' };
}

export type OneClickOutcome = { ok: true; changed: boolean; category: NoticeCategory; recipient: string } | { ok: false; reason: LinkRefusal };

export async function unsubscribeByLink(db: DbOrTx, { token, keys, now }: { token: string; keys: LinkKeyRing; now: Date }): Promise<OneClickOutcome> {
  const link = await readUnsubscribeLink(db, { token, keys, now });
  if (!link.ok) return link;
  const written = await db.transaction((tx) =>
    setPreferenceReported(tx, {
      recipient: link.recipient,
      category: 'courtesy',
      channel: 'email',
      state: 'opted_out',
      source: 'one_click',
      actor: correlationOf(link.noticeKey),
      reason: 'one-click unsubscribe (RFC 8058)',
    }),
  );
  return { ok: true, changed: written.changed, category: link.category, recipient: link.recipient };
}

/** `j•••@example.com`: the page confirms which address without showing it whole to whoever holds a forwarded mail. */
export function maskAddress(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '•••';
  return `${email.slice(0, 1)}•••${email.slice(at)}`;
}
