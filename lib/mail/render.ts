import type { JobRow } from '@/db/schema/jobs';
import { templatesOf } from '@/lib/templates/load';
import { renderEmail, RenderError, type NoticeLinks, type RenderedEmail, type RenderRequest } from '@/lib/templates/render';
import { templateVersionOf, type TemplateVersion } from '@/lib/templates/versions';
import type { NoticeConfig } from '@/lib/windows/load-config';

/**
 * A notice's email from the operator's templates (lib/templates): the job's own facts — type,
 * category, anchor (the charge date), window, recipient locale and time zone, declared payload
 * values — the one-time code, and the links it must show. Only declared payload variables reach
 * the template; every value is escaped in the HTML part. Throws RenderError with a reason that
 * names the template and the variable, never a value (the send path records it as the permanent
 * failure `render_failed`).
 */
export type RenderInput = {
  config: NoticeConfig;
  job: Pick<JobRow, 'noticeType' | 'category' | 'payload' | 'recipientLocale' | 'recipientTimeZone' | 'anchorAt' | 'deadlineAt'>;
  oneTimeCode: string;
  links: NoticeLinks;
  /** Also give the HTML's render trace (RenderRequest.traceHtml): for a notice that keeps an evidence record. */
  traceHtml?: boolean;
};

export type RenderedMail = RenderedEmail;

/** What the renderer needs of a job, for a job row or a console preview alike. */
export function renderRequestOf(config: NoticeConfig, { job, oneTimeCode, links, traceHtml }: Omit<RenderInput, 'config'>): RenderRequest {
  const type = Object.hasOwn(config.noticeTypes, job.noticeType) ? config.noticeTypes[job.noticeType] : undefined;
  if (!type) throw new RenderError(`notice type ${job.noticeType.slice(0, 64)} is not configured, so it has no template`);
  return {
    template: type.template,
    noticeType: job.noticeType,
    category: job.category,
    locale: job.recipientLocale,
    timeZone: job.recipientTimeZone,
    payload: job.payload,
    anchorAt: job.anchorAt,
    windowClosesAt: job.deadlineAt,
    code: oneTimeCode,
    links,
    cancellable: type.cancel !== undefined,
    ...(traceHtml ? { traceHtml } : {}),
  };
}

export async function renderNotice({ config, ...input }: RenderInput): Promise<RenderedMail> {
  let set;
  try {
    set = templatesOf(config);
  } catch (error) {
    throw new RenderError(`templates do not load: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 160)}`);
  }
  return renderEmail(set, renderRequestOf(config, input));
}

/**
 * The template version a job's render on `channel` read (lib/templates/versions.ts): cached per
 * loaded set, so after a version's first notice this is two map lookups. Null when the job's
 * type or templates are not there (the render itself failed then).
 */
export function templateVersionOfJob(
  config: NoticeConfig,
  job: Pick<JobRow, 'noticeType' | 'recipientLocale'>,
  channel: 'email' | 'sms',
): TemplateVersion | null {
  const type = Object.hasOwn(config.noticeTypes, job.noticeType) ? config.noticeTypes[job.noticeType] : undefined;
  if (!type) return null;
  try {
    return templateVersionOf(templatesOf(config), { template: type.template, channel, recipientLocale: job.recipientLocale });
  } catch {
    return null;
  }
}
