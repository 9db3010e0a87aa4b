import type { DbOrTx } from '@/db/client';
import { findCancellationRequest } from '@/db/queries/cancellation-requests';
import { preferenceFor } from '@/db/queries/preferences';
import type { RecipientNotice } from '@/db/queries/recipient-notice';
import type { NoticeType } from '@/lib/windows/load-config';
import { buildRecipientPageView, phoneOf } from './notice-view';
import type { PageFlash } from '@/lib/api/recipient';
import { renderRecipientPage } from './render-page';

/** The recipient page for a verified link's notice: its request, the recipient's courtesy preferences, rendered. Reads only. */
export async function loadRecipientPage(
  db: DbOrTx,
  { notice, type, flash, pageUrl }: { notice: RecipientNotice; type: NoticeType | null; flash: PageFlash | null; pageUrl: string },
): Promise<string> {
  const phone = phoneOf(notice);
  const [request, email, sms] = await Promise.all([
    findCancellationRequest(db, { noticeKey: notice.job.noticeKey }),
    notice.job.recipientEmail ? preferenceFor(db, { recipient: notice.job.recipientEmail, category: 'courtesy', channel: 'email' }) : Promise.resolve(null),
    phone ? preferenceFor(db, { recipient: phone, category: 'courtesy', channel: 'sms' }) : Promise.resolve(null),
  ]);
  const courtesy = (state: string | null) => (state === 'opted_out' ? ('opted_out' as const) : ('opted_in' as const));
  const view = buildRecipientPageView({ notice, type, request, preferences: { email: courtesy(email), ...(phone ? { sms: courtesy(sms) } : {}) } });
  return renderRecipientPage({ view, flash, actions: { cancel: `${pageUrl}/cancel`, preferences: `${pageUrl}/preferences` } });
}
