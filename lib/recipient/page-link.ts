import { recipientLinkUrl, signRecipientToken } from './link';

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

/** The signed link a notice carries to its recipient page (purpose `page`). */
export function recipientPageUrl({
  secret,
  baseUrl,
  noticeKey,
  anchorAt,
  deadlineAt,
}: {
  secret: string;
  baseUrl: string;
  noticeKey: string;
  anchorAt: Date | null;
  deadlineAt: Date;
}): string {
  const token = signRecipientToken({ secret, noticeKey, purpose: 'page', expiresAt: recipientPageExpiry({ anchorAt, deadlineAt }) });
  return recipientLinkUrl(baseUrl, RECIPIENT_PAGE_PATH, token);
}
