import type { DomainRateLimiter } from '@/lib/jobs/rate-limit';
import { smsThrottleKey } from '@/lib/jobs/rate-limit';
import { defaultLinkKeyRing } from '@/lib/recipient/link-keys';
import { recipientPageUrl } from '@/lib/recipient/page-link';
import { countryOf } from '@/lib/sms/phone';
import { templateVersionOfJob } from '@/lib/mail/render';
import { renderSmsBody, segmentsOf } from '@/lib/sms/render';
import type { OutgoingSms, SmsTransport } from '@/lib/sms/transport';
import { RenderError } from '@/lib/templates/render';
import type { Channel, ComposeSettings } from './types';

/** The SMS side of the send path: Twilio, the sender the throttle is keyed by, its bucket (lib/jobs/rate-limit.ts smsThrottleKey). */
export type SmsSendPath = { transport: SmsTransport; sender: string; rateLimiter: DomainRateLimiter };

const smsRoute = (phone: string | null) => `sms:${countryOf(phone ?? '')}`;

/**
 * The SMS channel: the type's `sms` template, its segments against the type's cap, then Twilio.
 * Without Twilio (`sms` absent) every text is refused as `sms_not_configured` before anything is
 * claimed for a token (lib/jobs/sms-fallback.ts sends it by email where its type allows).
 */
export function createSmsChannel({ sms, settings }: { sms: SmsSendPath | undefined; settings: ComposeSettings }): Channel<OutgoingSms> {
  return {
    name: 'twilio',
    route: (job) => ({
      recipientDomain: smsRoute(job.recipientPhone),
      bucket: sms ? { limiter: sms.rateLimiter, key: smsThrottleKey(sms.sender, countryOf(job.recipientPhone ?? '')) } : null,
    }),
    compose: async ({ job, oneTimeCode }) => {
      if (!sms || !job.recipientPhone) return { ok: false, outcome: { kind: 'rejected', permanent: false, code: null, errorClass: 'sms_not_configured' } };
      const linkKeys = settings.linkKeys ?? defaultLinkKeyRing(settings.secret);
      const manage = recipientPageUrl({ keys: linkKeys, baseUrl: settings.cancelBaseUrl, noticeKey: job.noticeKey });
      let body: string;
      try {
        // No unsubscribe link in a text: a courtesy template says "Reply STOP"; Twilio reports the keyword (21610, the inbound route).
        body = renderSmsBody({ config: settings.noticeConfig, job, oneTimeCode, links: { manage, unsubscribe: null } });
      } catch (error) {
        const detail = error instanceof RenderError ? error.reason : 'render_failed';
        return { ok: false, outcome: { kind: 'rejected', permanent: true, code: null, errorClass: 'render_failed', detail } };
      }
      const type = Object.hasOwn(settings.noticeConfig.noticeTypes, job.noticeType) ? settings.noticeConfig.noticeTypes[job.noticeType] : undefined;
      const maxSegments = type?.maxSegments ?? 3;
      const { segments, encoding } = segmentsOf(body);
      if (segments > maxSegments) {
        // Nothing left the process: a definite, permanent refusal of our own.
        return {
          ok: false,
          outcome: {
            kind: 'rejected',
            permanent: true,
            code: null,
            errorClass: 'too_many_segments',
            detail: `the text takes ${segments} ${encoding} segments; ${job.noticeType} allows ${maxSegments} (maxSegments)`,
          },
        };
      }
      return {
        ok: true,
        message: { noticeKey: job.noticeKey, to: job.recipientPhone, body },
        shown: { manageUrl: manage, rendered: { channel: 'sms', body }, templateVersion: templateVersionOfJob(settings.noticeConfig, job, 'sms') },
      };
    },
    send: async (message) => {
      if (!sms) return { kind: 'rejected', permanent: false, code: null, errorClass: 'sms_not_configured' };
      return sms.transport.send(message);
    },
    probe: async () => (sms ? sms.transport.probe() : { kind: 'accepted', providerMessageId: null }),
    cancelAll: () => undefined,
    close: () => undefined,
  };
}
