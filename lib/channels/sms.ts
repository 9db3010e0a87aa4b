import type { DomainRateLimiter } from '@/lib/jobs/rate-limit';
import { smsThrottleKey } from '@/lib/jobs/rate-limit';
import { defaultLinkKeyRing } from '@/lib/recipient/link-keys';
import { recipientPageUrl } from '@/lib/recipient/page-link';
import { templateVersionOfJob } from '@/lib/mail/render';
import type { OutgoingSms, SmsTransport } from '@/lib/sms/transport';
import { RenderError } from '@/lib/templates/render';
import type { Channel, ComposeSettings } from './types';

/** The SMS side of the send path: Twilio, the sender the throttle is keyed by, its bucket (lib/jobs/rate-limit.ts smsThrottleKey). */
export type SmsSendPath = { transport: SmsTransport; sender: string; rateLimiter: DomainRateLimiter };

type SmsParts = typeof import('./sms-parts');

// libphonenumber's metadata and the segment counter (3.3 MB of live heap) load with the first text:
// a worker that sends only email never holds them (issue 27, the worker's memory).
let parts: SmsParts | undefined;
let loading: Promise<SmsParts> | undefined;
const smsParts = (): Promise<SmsParts> =>
  (loading ??= import('./sms-parts').then((loaded) => {
    parts = loaded;
    return loaded;
  }));

/**
 * The SMS channel: the type's `sms` template, its segments against the type's cap, then Twilio.
 * Without Twilio (`sms` absent) every text is refused as `sms_not_configured` before anything is
 * claimed for a token (lib/jobs/sms-fallback.ts sends it by email where its type allows).
 */
export function createSmsChannel({ sms, settings }: { sms: SmsSendPath | undefined; settings: ComposeSettings }): Channel<OutgoingSms> {
  return {
    name: 'twilio',
    route: (job) => {
      const routeWith = ({ countryOf }: SmsParts) => {
        const country = countryOf(job.recipientPhone ?? '');
        return { recipientDomain: `sms:${country}`, bucket: sms ? { limiter: sms.rateLimiter, key: smsThrottleKey(sms.sender, country) } : null };
      };
      return parts ? routeWith(parts) : smsParts().then(routeWith);
    },
    compose: async ({ job, oneTimeCode }) => {
      if (!sms || !job.recipientPhone) return { ok: false, outcome: { kind: 'rejected', permanent: false, code: null, errorClass: 'sms_not_configured' } };
      const { renderSmsBody, segmentsOf } = parts ?? (await smsParts());
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
