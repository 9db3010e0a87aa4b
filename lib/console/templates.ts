import 'server-only';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import type { SendTestOutcome } from '@/lib/api/console/templates';
import { refuse, type Result } from '@/lib/http/refusal';
import type { MailTransport } from '@/lib/mail/transport';
import { prepareTemplates, type TemplateSet } from '@/lib/templates/load';
import { renderEmail, renderSms, RenderError, type RenderRequest } from '@/lib/templates/render';
import type { TestSendThrottle } from './test-send-throttle';
import type { VariableType } from '@/lib/templates/schema';
import type { NoticeConfig } from '@/lib/windows/load-config';

/**
 * The Templates page's view model: every template the notice types use, each channel × locale
 * rendered with the template's declared sample payload, and "send a test" of one of them to an
 * address through the real mail transport (audited with the address's domain, never the body).
 */

export type TemplateRendering =
  | { channel: 'email'; locale: string; subject: string; html: string; text: string; files: string[] }
  | { channel: 'sms'; locale: string; text: string; files: string[] }
  | { channel: 'email' | 'sms'; locale: string; error: string; files: string[] };

export type TemplateView = {
  id: string;
  noticeTypes: { name: string; label: string; category: 'required' | 'courtesy'; channel: string }[];
  category: 'required' | 'courtesy';
  variables: { name: string; type: VariableType; sample: string }[];
  meets: string[];
  renderings: TemplateRendering[];
};

export type TemplatesView = { directory: string; fallbackLocale: string; sampleAnchor: string; sampleTimeZone: string; templates: TemplateView[] };

/** The sample notice: its charge a week from the start of today (UTC), rendered in UTC. */
function sampleAnchor(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 7, 9, 0, 0));
}

export function sampleRequest(config: NoticeConfig, set: TemplateSet, templateId: string, locale: string, now: Date): RenderRequest {
  const types = Object.values(config.noticeTypes).filter((type) => type.template === templateId);
  const category = types.some((type) => type.category === 'required') ? 'required' : 'courtesy';
  const anchorAt = sampleAnchor(now);
  return {
    template: templateId,
    noticeType: types[0]?.name ?? templateId,
    category,
    locale,
    timeZone: 'UTC',
    payload: { ...set.entries.get(templateId)?.definition.sample },
    anchorAt,
    windowClosesAt: new Date(anchorAt.getTime() - 24 * 3_600_000),
    code: 'SAMPLE2345',
    cancellable: types.some((type) => type.cancel !== undefined),
    links: { manage: 'https://notices.example/r/sample-link', unsubscribe: category === 'courtesy' ? 'https://notices.example/u/sample-link' : null },
  };
}

export async function loadTemplatesView(config: NoticeConfig, now = new Date()): Promise<TemplatesView> {
  const set = await prepareTemplates(config);
  const templates: TemplateView[] = [];
  for (const entry of set.entries.values()) {
    const types = Object.values(config.noticeTypes).filter((type) => type.template === entry.id);
    const renderings: TemplateRendering[] = [];
    for (const [locale, template] of entry.email) {
      try {
        const mail = await renderEmail(set, sampleRequest(config, set, entry.id, locale, now));
        renderings.push({ channel: 'email', locale, subject: mail.subject, html: mail.html, text: mail.text, files: template.files });
      } catch (error) {
        renderings.push({ channel: 'email', locale, error: error instanceof RenderError ? error.reason : 'does not render', files: template.files });
      }
    }
    for (const [locale, template] of entry.sms) {
      try {
        renderings.push({ channel: 'sms', locale, text: renderSms(set, sampleRequest(config, set, entry.id, locale, now)).text, files: template.files });
      } catch (error) {
        renderings.push({ channel: 'sms', locale, error: error instanceof RenderError ? error.reason : 'does not render', files: template.files });
      }
    }
    templates.push({
      id: entry.id,
      noticeTypes: types.map((type) => ({ name: type.name, label: type.label, category: type.category, channel: type.channel })),
      category: types.some((type) => type.category === 'required') ? 'required' : 'courtesy',
      variables: Object.entries(entry.definition.variables).map(([name, type]) => ({ name, type, sample: String(entry.definition.sample[name] ?? '') })),
      meets: entry.definition.meets,
      renderings,
    });
  }
  return { directory: set.directory, fallbackLocale: set.fallbackLocale, sampleAnchor: sampleAnchor(now).toISOString(), sampleTimeZone: 'UTC', templates };
}

const address = z.email().max(254);

/**
 * Renders the template's sample in that locale and hands it to the mail relay. Refused (422) for
 * something that is not an address, 404 for a template or locale that does not exist, 503 when
 * the relay does not take it, 429 past TEMPLATE_TEST_LIMIT per user and window; audited only once
 * it was accepted, with the domain, not the body.
 */
export async function sendTestNotice(
  db: DbOrTx,
  {
    config,
    mail,
    template,
    locale,
    to,
    actor,
    throttle,
    now = new Date(),
  }: {
    config: NoticeConfig;
    mail: () => MailTransport;
    template: string;
    locale: string;
    to: string;
    actor: string;
    throttle: TestSendThrottle;
    now?: Date;
  },
): Promise<Result<SendTestOutcome>> {
  const parsed = address.safeParse(to.trim());
  if (!parsed.success)
    return refuse('unprocessable', 'That is not an email address: a test goes to one address, such as you@example.com.', { code: 'invalid_address' });
  const recipient = parsed.data.toLowerCase();
  const set = await prepareTemplates(config);
  const entry = set.entries.get(template);
  if (!entry) return refuse('not_found', `No template ${template.slice(0, 100)}.`);
  if (!entry.email.has(locale)) return refuse('not_found', `Template ${template} has no email in ${locale.slice(0, 35)}.`);
  // Counted once the request names a real template, before anything is rendered or sent.
  const admitted = await throttle.admit(actor);
  if (!admitted.ok) {
    const minutes = Math.ceil(admitted.retryInMs / 60_000);
    return refuse('rate_limited', `You have sent as many tests as the limit allows for now; try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, {
      code: 'test_send_limit',
      headers: { 'retry-after': String(Math.ceil(admitted.retryInMs / 1000)) },
    });
  }
  let rendered;
  try {
    rendered = await renderEmail(set, sampleRequest(config, set, template, locale, now));
  } catch (error) {
    return refuse('unprocessable', `The sample does not render: ${error instanceof RenderError ? error.reason : 'unknown error'}`, { code: 'render_failed' });
  }
  const transport = mail();
  let outcome;
  try {
    outcome = await transport.send({
      noticeKey: randomBytes(32).toString('hex'),
      to: recipient,
      subject: `[Test] ${rendered.subject}`,
      text: rendered.text,
      html: rendered.html,
    });
  } finally {
    transport.close();
  }
  if (outcome.kind !== 'accepted')
    return refuse('unavailable', `The mail relay did not take the test (${outcome.errorClass}). Nothing was recorded.`, { code: 'relay_refused' });
  const domain = recipient.slice(recipient.lastIndexOf('@') + 1);
  await insertAuditEntries(db, {
    entries: [
      {
        actor,
        action: 'template.test_send',
        targetType: 'template',
        targetId: `${template}/email.${locale}`,
        reason: `test to an address at ${domain}`,
        after: { template, locale, domain },
      },
    ],
  });
  return { ok: true, data: { template, locale, domain, subject: rendered.subject } };
}
