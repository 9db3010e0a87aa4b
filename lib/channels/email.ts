import { renderNotice, templateVersionOfJob } from '@/lib/mail/render';
import type { EmailTransport, OutgoingNotice } from '@/lib/mail/transport';
import { recipientDomain, type DomainRateLimiter } from '@/lib/jobs/rate-limit';
import { defaultLinkKeyRing } from '@/lib/recipient/link-keys';
import { recipientPageUrl } from '@/lib/recipient/page-link';
import { unsubscribeLinks } from '@/lib/recipient/unsubscribe';
import { RenderError } from '@/lib/templates/render';
import type { Channel, ComposeSettings } from './types';

/**
 * The email channel: one composer (the operator's templates, the recipient's links, RFC 8058
 * unsubscribe for a courtesy notice) in front of whichever email transport the registry chose
 * (EMAIL_PROVIDER: SMTP, Postmark, SES or SendGrid). The transport sends and classifies; the
 * message is the same for all of them.
 */
export function createEmailChannel({
  transport,
  rateLimiter,
  settings,
}: {
  transport: EmailTransport;
  rateLimiter: DomainRateLimiter;
  settings: ComposeSettings;
}): Channel<OutgoingNotice> {
  return {
    name: transport.name,
    route: (job) => {
      const domain = recipientDomain(job.recipientEmail ?? '');
      return { recipientDomain: domain, bucket: { limiter: rateLimiter, key: domain } };
    },
    compose: async ({ job, oneTimeCode, traceHtml }) => {
      // The recipient page (cancel, preferences); the one-time code stays in the mail, and the page asks for it where the type says so.
      // Its expiry (the anchor, else the deadline) is read from the job when the link is followed (lib/recipient/link-notice.ts).
      const linkKeys = settings.linkKeys ?? defaultLinkKeyRing(settings.secret);
      const manage = recipientPageUrl({ keys: linkKeys, baseUrl: settings.cancelBaseUrl, noticeKey: job.noticeKey });
      // A courtesy notice can be unsubscribed from in one click (RFC 8058) and by its link; a required one cannot, carries no header and says why.
      const listUnsubscribe =
        job.category === 'courtesy'
          ? unsubscribeLinks({ keys: linkKeys, baseUrl: settings.cancelBaseUrl, noticeKey: job.noticeKey, mailbox: settings.unsubscribeMailbox ?? null })
          : null;
      try {
        const rendered = await renderNotice({
          config: settings.noticeConfig,
          job,
          oneTimeCode,
          links: { manage, unsubscribe: listUnsubscribe?.https ?? null },
          traceHtml,
        });
        // An email job always has the address (check reminder_jobs_email_has_address).
        const { htmlTrace, ...mail } = rendered;
        const message: OutgoingNotice = { noticeKey: job.noticeKey, to: job.recipientEmail ?? '', ...mail, listUnsubscribe };
        return {
          ok: true,
          message: transport.prepare ? await transport.prepare(message) : message,
          shown: {
            manageUrl: manage,
            rendered: { channel: 'email', subject: rendered.subject, html: rendered.html, text: rendered.text, htmlTrace },
            templateVersion: templateVersionOfJob(settings.noticeConfig, job, 'email'),
          },
        };
      } catch (error) {
        // Nothing left the process: as definite as a 5xx, and retrying cannot help. The reason names
        // the template and variable (RenderError), never a value; it is the attempt's detail.
        const detail = error instanceof RenderError ? error.reason : 'render_failed';
        return { ok: false, outcome: { kind: 'rejected', permanent: true, code: null, errorClass: 'render_failed', detail } };
      }
    },
    send: (message, options) => transport.send(message, options),
    ...(transport.sendBatch ? { sendBatch: transport.sendBatch, batchLimit: transport.batchLimit ?? 1 } : {}),
    probe: () => transport.probe(),
    cancelAll: () => transport.cancelAll(),
    close: () => transport.close(),
  };
}
