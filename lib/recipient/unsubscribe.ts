import { UNSUBSCRIBE_PATH } from '@/lib/api/one-click';
import { recipientLinkUrl, signCompactToken } from './link';
import type { LinkKeyRing } from './link-keys';

/**
 * The one-click unsubscribe URIs a courtesy notice carries (RFC 8058, RFC 2369).
 *
 * The https URI is `PUBLIC_BASE_URL/api/recipient/unsubscribe/<token>`, a signed token of
 * purpose `unsubscribe` naming the notice (lib/recipient/link.ts); the route
 * (app/api/recipient/unsubscribe/[token]/route.ts) unsubscribes on a POST whose body is
 * `List-Unsubscribe=One-Click`, and shows a confirm button on a GET (link scanners follow GETs).
 *
 * It works until UNSUBSCRIBE_LINK_DAYS after the notice's window closes (unsubscribeExpiry),
 * read from the notice when the link is followed: the window's end is the latest the notice can
 * have been sent, so that is at least a year after the send. Mailbox providers keep offering
 * their "Unsubscribe" button on old mail, and people unsubscribe from mail they received months
 * ago, so the link must outlive the notice's window by far. It stays shorter than the default job
 * retention (RETENTION_LEDGER, 430 days after the job's last change), so an unexpired link still
 * finds the recipient it is for.
 *
 * The mailto URI is offered only when the operator names a mailbox (UNSUBSCRIBE_MAILBOX) that
 * their own mail server handles: notice-ledger receives no mail. Its subject carries the same
 * token; the operator's MTA (a filter or pipe) completes it by POSTing `List-Unsubscribe=One-Click`
 * to the https URI. Unset, no mailto is advertised: a mailto that nobody reads would lose the
 * recipient's request silently.
 */
export const UNSUBSCRIBE_LINK_DAYS = 365;

export type ListUnsubscribe = { https: string; mailto: string | null };

export function unsubscribeExpiry({ deadlineAt }: { deadlineAt: Date }): Date {
  return new Date(deadlineAt.getTime() + UNSUBSCRIBE_LINK_DAYS * 86_400_000);
}

export function unsubscribeLinks({
  keys,
  baseUrl,
  noticeKey,
  mailbox,
}: {
  keys: LinkKeyRing;
  baseUrl: string;
  noticeKey: string;
  mailbox: string | null;
}): ListUnsubscribe {
  const token = signCompactToken({ keys, noticeKey, purpose: 'unsubscribe' });
  const https = recipientLinkUrl(baseUrl, UNSUBSCRIBE_PATH, token);
  const mailto = mailbox ? `mailto:${mailbox}?subject=${encodeURIComponent(`unsubscribe ${token}`)}` : null;
  return { https, mailto };
}
