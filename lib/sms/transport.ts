import twilio from 'twilio';
import type { TwilioSettings } from '@/lib/config';
import { correlationOf } from '@/lib/ledger/notice-key';
import type { SendOutcome } from '@/lib/mail/transport';

type RequestOptions<TData> = Parameters<typeof twilio.RequestClient.prototype.request<TData>>[0];

/**
 * The hand-over to Twilio Programmable Messaging through Twilio's official Node library, and the
 * classification of its answer — the same three outcomes as the SMTP transport:
 *  - 201 Created: *accepted*, the Message SID is the provider message id;
 *  - an answer that says the message was not created: *rejected* — a documented refusal
 *    (21211 invalid To, 21610 the recipient replied STOP, 21614 not a mobile number, …) is
 *    permanent; 429 / 20429 (too many requests) and 5xx are temporary, retried with backoff;
 *    a refused connect never sent a byte, also temporary;
 *  - no answer after the request left (timeout, connection reset): *unknown*. The message may
 *    exist; the claim stays and the status callback or a person decides.
 * The client never retries by itself (autoRetry off): a retried POST could create a second message.
 */

export type SmsOutcome =
  | Exclude<SendOutcome, { kind: 'rejected' }>
  /** `optOut`: Twilio refused because the recipient replied STOP (21610); the send path records the SMS opt-out. */
  | (Extract<SendOutcome, { kind: 'rejected' }> & { optOut?: boolean; detail?: string });

export type OutgoingSms = { noticeKey: string; to: string; body: string };

export type SmsTransport = { send: (sms: OutgoingSms) => Promise<SmsOutcome> };

/** Refusals Twilio documents as about this message or recipient: sending again cannot help. */
const permanentCodes = new Set([
  21211, // invalid 'To' phone number
  21408, // permission to send to this region is not enabled
  21610, // the recipient replied STOP
  21612, // the 'To' number cannot be reached by this sender
  21614, // 'To' is not a mobile number
  21617, // the body exceeds 1600 characters
  21635, // 'To' cannot be a landline
  30004, // message blocked
  30006, // landline or unreachable carrier
]);

type HttpError = Error & { code?: string; status?: number; syscall?: string; moreInfo?: string };

/** Pure: what Twilio's answer (or its absence) says about whether the message exists. */
export function classifyTwilioError(error: unknown): Exclude<SmsOutcome, { kind: 'accepted' }> {
  const err: HttpError = error instanceof Error ? error : new Error(String(error));
  if (error instanceof twilio.RestException) {
    const code = typeof error.code === 'number' ? error.code : null;
    const status = error.status;
    if (status === 429 || code === 20429) return { kind: 'rejected', permanent: false, code: status, errorClass: 'twilio_429' };
    if (status >= 500) return { kind: 'rejected', permanent: false, code: status, errorClass: `twilio_${status}` };
    if (code === 21610) return { kind: 'rejected', permanent: true, code: status, errorClass: 'twilio_21610', optOut: true };
    if (code !== null && permanentCodes.has(code)) return { kind: 'rejected', permanent: true, code: status, errorClass: `twilio_${code}` };
    // Authentication, a missing sender, an account limit: ours to fix, and the message was not created.
    return { kind: 'rejected', permanent: false, code: status, errorClass: code !== null ? `twilio_${code}` : `twilio_${status}` };
  }
  const code = err.code ?? '';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || err.syscall === 'connect' || err.syscall === 'getaddrinfo') {
    return { kind: 'rejected', permanent: false, code: null, errorClass: 'connect_failed' };
  }
  if (code === 'ECONNABORTED' || code === 'ETIMEDOUT' || /timeout/i.test(err.message)) return { kind: 'unknown', errorClass: 'timeout' };
  if (code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up/i.test(err.message)) return { kind: 'unknown', errorClass: 'connection_lost' };
  return {
    kind: 'unknown',
    errorClass: (code || 'error')
      .toLowerCase()
      .replace(/[^a-z0-9_]/g, '_')
      .slice(0, 40),
  };
}

/**
 * Twilio's own HTTP client (RequestClient: auth header, form encoding, its errors), sending to
 * TWILIO_API_BASE_URL instead of https://api.twilio.com: the path, the query and everything else
 * the official library built stay as they are. The library documents a custom `httpClient` for
 * exactly this (proxies, test doubles).
 */
class BaseUrlRequestClient extends twilio.RequestClient {
  constructor(
    private readonly base: URL,
    options: ConstructorParameters<typeof twilio.RequestClient>[0],
  ) {
    super(options);
  }

  override request<TData>(options: RequestOptions<TData>) {
    const target = new URL(options.uri);
    const rebased = new URL(target.pathname + target.search, this.base);
    return super.request<TData>({ ...options, uri: rebased.href });
  }
}

export type SmsTransportParams = {
  twilio: TwilioSettings;
  /** The StatusCallback URL of a notice: PUBLIC_BASE_URL + /api/webhooks/twilio?c=<correlation>. */
  statusCallbackFor: (correlation: string) => string;
};

export function statusCallbackUrl(publicBase: string, correlation: string): string {
  const url = new URL('/api/webhooks/twilio', publicBase);
  url.searchParams.set('c', correlation);
  return url.href;
}

export function createSmsTransport({ twilio: settings, statusCallbackFor }: SmsTransportParams): SmsTransport {
  const base = new URL(settings.apiBaseUrl);
  const httpClient = new BaseUrlRequestClient(base, { timeout: settings.timeoutMs, keepAlive: true, autoRetry: false });
  const client = twilio(settings.accountSid, settings.authToken, { httpClient, autoRetry: false, timeout: settings.timeoutMs });
  return {
    send: async ({ noticeKey, to, body }) => {
      try {
        const message = await client.messages.create({
          to,
          body,
          ...('from' in settings.sender ? { from: settings.sender.from } : { messagingServiceSid: settings.sender.messagingServiceSid }),
          statusCallback: statusCallbackFor(correlationOf(noticeKey)),
        });
        return { kind: 'accepted', providerMessageId: message.sid };
      } catch (error) {
        return classifyTwilioError(error);
      }
    },
  };
}
