import { recipientLinkUrl, signCompactToken } from './link';
import type { LinkKeyRing } from './link-keys';

/** The recipient page's route: `<PUBLIC_BASE_URL>/r/<token>` (app/r/[token]/page.tsx). */
export const RECIPIENT_PAGE_PATH = '/r';

/**
 * When a notice's page link stops working: at the notice's anchor (the charge — cancelling this
 * renewal after it is moot), or at the notice's deadline when that is later or there is no
 * anchor. A reminder scheduled directly by POST /api/v1/reminders has no stored anchor, so its
 * deadline (the last moment the notice itself may go out) is the best bound we hold; a payment
 * recovery's anchor (the reconciliation) lies before its window, so its deadline governs too.
 */
export function recipientPageExpiry({ anchorAt, deadlineAt }: { anchorAt: Date | null; deadlineAt: Date }): Date {
  return anchorAt && anchorAt.getTime() > deadlineAt.getTime() ? anchorAt : deadlineAt;
}

/**
 * The signed link a notice carries to its recipient page (purpose `page`). It depends on the
 * notice key and the signing key alone, so a resend carries the same link; its expiry
 * (recipientPageExpiry) is read from the notice when the link is followed.
 */
export function recipientPageUrl({ keys, baseUrl, noticeKey }: { keys: LinkKeyRing; baseUrl: string; noticeKey: string }): string {
  return recipientLinkUrl(baseUrl, RECIPIENT_PAGE_PATH, signCompactToken({ keys, noticeKey, purpose: 'page' }));
}
