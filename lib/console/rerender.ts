import 'server-only';
import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { findSentNoticeForRerender, findTemplateVersion } from '@/db/queries/template-versions';
import type { ReceivedMessage } from '@/lib/api/console/received';
import { refuse, type Result } from '@/lib/http/refusal';
import { recipientLinkUrl } from '@/lib/recipient/link';
import { RECIPIENT_PAGE_PATH } from '@/lib/recipient/page-link';
import { UNSUBSCRIBE_PATH } from '@/lib/api/one-click';
import { renderEmail, RenderError, renderSms, type RenderRequest } from '@/lib/templates/render';
import { shortVersionId, templateSetOfVersion, templateVersionContentSchema } from '@/lib/templates/versions';
import type { NoticeConfig } from '@/lib/windows/load-config';

/**
 * "What the customer received" (issue 30 item 5): a sent notice rendered again from its job's
 * stored payload with the template version its send recorded, not with the files deployed now.
 * The one-time code (never shown, DESIGN.md) and the signed links are replaced by placeholders,
 * so support sees the message as sent apart from those; the evidence pack holds the exact bytes.
 * A notice whose send recorded no version says so and renders nothing.
 */

export const MASKED_CODE = '••••••';
const NOT_SHOWN = 'signed-link-not-shown';

export async function rerenderSentNotice(
  db: DbOrTx,
  { id, actor, baseUrl, noticeConfig }: { id: string; actor: string; baseUrl: string; noticeConfig: NoticeConfig },
): Promise<Result<ReceivedMessage>> {
  const notice = await findSentNoticeForRerender(db, { id });
  if (!notice) return refuse('not_found', 'No notice with that key or job id has a ledger row: nothing was sent.');
  if (notice.ledgerState !== 'sent') return refuse('conflict', `The notice is ${notice.ledgerState}, not sent: the customer has received nothing to show.`);
  const base = { noticeKey: notice.noticeKey, version: null, email: null, sms: null };
  const stored = notice.templateVersionId ? await findTemplateVersion(db, { id: notice.templateVersionId }) : null;
  const content = stored ? templateVersionContentSchema.safeParse(stored.content) : null;
  if (!stored || !content?.success || !notice.job) {
    await audit(db, { actor, noticeKey: notice.noticeKey, status: 'unknown_version', version: null });
    return {
      ok: true,
      data: {
        ...base,
        status: 'unknown_version',
        message: notice.job
          ? 'The template version this notice was sent with is unknown (it was sent before versions were recorded, or backfilled): nothing is re-rendered, because the templates deployed now may differ. The evidence pack, where its type keeps one, holds what was sent.'
          : 'The job that sent this notice is gone (retention), so its payload cannot be re-rendered.',
      },
    };
  }
  const version = {
    id: stored.id,
    shortId: shortVersionId(stored.id),
    templateId: stored.templateId,
    channel: stored.channel,
    locale: stored.locale,
    firstSeenAt: stored.firstSeenAt.toISOString(),
  };
  const { job } = notice;
  const type = Object.hasOwn(noticeConfig.noticeTypes, job.noticeType) ? noticeConfig.noticeTypes[job.noticeType] : undefined;
  const request: RenderRequest = {
    template: content.data.template,
    noticeType: job.noticeType,
    category: job.category,
    locale: job.recipientLocale,
    timeZone: job.recipientTimeZone,
    payload: job.payload,
    anchorAt: job.anchorAt,
    windowClosesAt: job.deadlineAt,
    code: MASKED_CODE,
    links: {
      manage: recipientLinkUrl(baseUrl, RECIPIENT_PAGE_PATH, NOT_SHOWN),
      unsubscribe: job.category === 'courtesy' ? recipientLinkUrl(baseUrl, UNSUBSCRIBE_PATH, NOT_SHOWN) : null,
    },
    cancellable: type ? type.cancel !== undefined : false,
  };
  const said = `Re-render from the stored payload and template version ${version.shortId}; the evidence pack holds the exact bytes. The one-time code and the signed links are not shown.`;
  try {
    const set = templateSetOfVersion(content.data);
    const data: ReceivedMessage =
      content.data.channel === 'email'
        ? { ...base, status: 'rendered', message: said, version, email: await renderEmail(set, request) }
        : { ...base, status: 'rendered', message: said, version, sms: smsOf(renderSms(set, request)) };
    await audit(db, { actor, noticeKey: notice.noticeKey, status: 'rendered', version: version.id });
    return { ok: true, data };
  } catch (error) {
    const reason = error instanceof RenderError ? error.reason : 'the stored version does not parse';
    await audit(db, { actor, noticeKey: notice.noticeKey, status: 'render_failed', version: version.id });
    return {
      ok: true,
      data: { ...base, version, status: 'render_failed', message: `Template version ${version.shortId} did not render this payload: ${reason}` },
    };
  }
}

const smsOf = ({ text, locale }: { text: string; locale: string }) => ({ body: text, locale });

/** Who looked at a customer's message, like the evidence export: the message shows the payload's personal data. */
async function audit(db: DbOrTx, { actor, noticeKey, status, version }: { actor: string; noticeKey: string; status: string; version: string | null }) {
  await insertAuditEntries(db, {
    entries: [
      {
        actor,
        action: 'notice.rerender',
        targetType: 'notice',
        targetId: noticeKey,
        reason: 'what the customer received, re-rendered in the lookup',
        after: { status, templateVersion: version },
      },
    ],
  });
}
