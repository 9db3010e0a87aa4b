import type twilio from 'twilio';
import type { TwilioSettings } from '@/lib/config';
import { correlationOf } from '@/lib/ledger/notice-key';
import type { SendOutcome } from '@/lib/mail/transport';
import { classifyTwilioPhase, type Phase } from '@/lib/transport/phases';

type Twilio = typeof twilio;
type RequestOptions<TData> = Parameters<typeof twilio.RequestClient.prototype.request<TData>>[0];

/**
 * The hand-over to Twilio Programmable Messaging through Twilio's official Node library, and the
 * classification of its answer by phase (`lib/transport/phases.ts`, the table SMTP uses too):
 *  - 201 Created: *accepted*, the Message SID is the provider message id;
 *  - no connection (DNS, connect, TLS): *nothing left*, retried;
 *  - an answer that says the message was not created: a documented refusal of this recipient
 *    (21211 invalid To, 21610 the recipient replied STOP, 21614 not a mobile number, …) is
 *    permanent; our credentials or sender refused (401, 403, 20003, 21212, 21606) is *config
 *    broken*: never failed, the transport pauses; 429 / 20429 and 5xx are retried;
 *  - no answer after the request left (timeout, connection reset): *unknown*. The message may
 *    exist; the claim stays and the status callback or a person decides.
 * The client never retries by itself (autoRetry off): a retried POST could create a second message.
 */

export type SmsOutcome =
  | Exclude<SendOutcome, { kind: 'rejected' }>
  /** `optOut`: Twilio refused because the recipient replied STOP (21610); the send path records the SMS opt-out. */
  | (Extract<SendOutcome, { kind: 'rejected' }> & { optOut?: boolean; detail?: string });

export type OutgoingSms = { noticeKey: string; to: string; body: string };

export type SmsTransport = {
  send: (sms: OutgoingSms) => Promise<SmsOutcome>;
  /** Reads the account resource (no message): accepted when Twilio answers our credentials. */
  probe: () => Promise<SmsOutcome>;
};

type HttpError = Error & { code?: string; status?: number; syscall?: string; moreInfo?: string };

/** Where a request without an answer stopped: no connection at all, or after the request may have left. */
function unansweredPhase(err: HttpError): Phase {
  const code = err.code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || err.syscall === 'getaddrinfo') return 'dns';
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || err.syscall === 'connect') return 'connect';
  if (/^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_)/.test(code) || code === 'EPROTO') return 'tls';
  return 'response';
}

const unansweredClass: Partial<Record<Phase, string>> = { dns: 'dns_failed', connect: 'connect_failed', tls: 'tls_failed' };

/** Pure: what Twilio's answer (or its absence) says about whether the message exists (`library`: Twilio's, for its RestException). */
export function classifyTwilioError(library: Twilio, error: unknown): Exclude<SmsOutcome, { kind: 'accepted' }> {
  const err: HttpError = error instanceof Error ? error : new Error(String(error));
  if (error instanceof library.RestException) {
    const code = typeof error.code === 'number' ? error.code : null;
    const status = error.status;
    const verdict = classifyTwilioPhase('response', status, code);
    if (verdict === 'outcome_unknown') return { kind: 'unknown', errorClass: `twilio_${status}`, phase: 'response' };
    const errorClass =
      status === 429 || code === 20429 ? 'twilio_429' : status >= 500 ? `twilio_${status}` : code !== null ? `twilio_${code}` : `twilio_${status}`;
    return {
      kind: 'rejected',
      permanent: verdict === 'recipient_refused',
      code: status,
      errorClass,
      failure: verdict,
      phase: 'response',
      ...(code === 21610 ? { optOut: true } : {}),
    };
  }
  const phase = unansweredPhase(err);
  const verdict = classifyTwilioPhase(phase, null, null);
  const code = err.code ?? '';
  if (verdict !== 'outcome_unknown') {
    return { kind: 'rejected', permanent: false, code: null, errorClass: unansweredClass[phase] ?? 'connect_failed', failure: verdict, phase };
  }
  if (code === 'ECONNABORTED' || code === 'ETIMEDOUT' || /timeout/i.test(err.message)) return { kind: 'unknown', errorClass: 'timeout', phase };
  if (code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up/i.test(err.message)) return { kind: 'unknown', errorClass: 'connection_lost', phase };
  return {
    kind: 'unknown',
    errorClass: (code || 'error')
      .toLowerCase()
      .replace(/[^a-z0-9_]/g, '_')
      .slice(0, 40),
    phase,
  };
}

/**
 * Twilio's own HTTP client (RequestClient: auth header, form encoding, its errors), sending to
 * TWILIO_API_BASE_URL instead of https://api.twilio.com: the path, the query and everything else
 * the official library built stay as they are. The library documents a custom `httpClient` for
 * exactly this (proxies, test doubles).
 */
function createBaseUrlRequestClient(library: Twilio, base: URL, options: ConstructorParameters<Twilio['RequestClient']>[0]) {
  class BaseUrlRequestClient extends library.RequestClient {
    override request<TData>(request: RequestOptions<TData>) {
      const target = new URL(request.uri);
      const rebased = new URL(target.pathname + target.search, base);
      return super.request<TData>({ ...request, uri: rebased.href });
    }
  }
  return new BaseUrlRequestClient(options);
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

/**
 * The transport loads Twilio's library on its first send or probe, not when it is made: with its
 * HTTP stack it is ~22 MB of a worker's memory (issue 27), and a worker whose notices all go by
 * email (or whose SMS never comes due) never needs it. The first text waits for the load once;
 * a library that cannot load is our configuration, before anything left (the transport pauses).
 */
export function createSmsTransport({ twilio: settings, statusCallbackFor }: SmsTransportParams): SmsTransport {
  const base = new URL(settings.apiBaseUrl);
  let loading: Promise<{ library: Twilio; client: ReturnType<Twilio> }> | null = null;
  const connect = () =>
    (loading ??= import('twilio').then(({ default: library }) => {
      const httpClient = createBaseUrlRequestClient(library, base, { timeout: settings.timeoutMs, keepAlive: true, autoRetry: false });
      return { library, client: library(settings.accountSid, settings.authToken, { httpClient, autoRetry: false, timeout: settings.timeoutMs }) };
    })).catch(() => null);
  const unavailable: SmsOutcome = {
    kind: 'rejected',
    permanent: false,
    code: null,
    errorClass: 'twilio_unavailable',
    failure: 'config_broken',
    phase: 'connect',
  };
  return {
    send: async ({ noticeKey, to, body }) => {
      const connected = await connect();
      if (!connected) return unavailable;
      const { library, client } = connected;
      try {
        const message = await client.messages.create({
          to,
          body,
          ...('from' in settings.sender ? { from: settings.sender.from } : { messagingServiceSid: settings.sender.messagingServiceSid }),
          statusCallback: statusCallbackFor(correlationOf(noticeKey)),
        });
        return { kind: 'accepted', providerMessageId: message.sid };
      } catch (error) {
        return classifyTwilioError(library, error);
      }
    },
    probe: async () => {
      const connected = await connect();
      if (!connected) return unavailable;
      const { library, client } = connected;
      try {
        await client.api.v2010.accounts(settings.accountSid).fetch();
        return { kind: 'accepted', providerMessageId: null };
      } catch (error) {
        const outcome = classifyTwilioError(library, error);
        // A GET creates nothing: no answer to it is nothing left, not an unknown message.
        return outcome.kind === 'unknown'
          ? { kind: 'rejected', permanent: false, code: null, errorClass: outcome.errorClass, failure: 'nothing_left', phase: 'response' }
          : outcome;
      }
    },
  };
}
