import type { Models } from 'postmark';
import { CORRELATION_HEADER, CORRELATION_TAG } from '@/lib/events/types';
import { correlationOf } from '@/lib/ledger/notice-key';
import { listUnsubscribeHeaders, type EmailTransport, type OutgoingNotice } from '@/lib/mail/transport';
import type { ChannelOutcome } from '@/lib/channels/types';
import { httpAnswers, outcomeOfRow, probeOutcome, retryAfterMsOf, unansweredOutcome } from '@/lib/channels/http-phase';
import { postmarkRows } from './phases';

type Postmark = typeof import('postmark');

export type PostmarkSettings = {
  serverToken: string;
  /** POSTMARK_API_BASE_URL: https://api.postmarkapp.com, or a local peer (testing/postmark-peer.ts). */
  apiBaseUrl: string;
  messageStream: string;
  from: string;
  timeoutMs: number;
};

/** Postmark's cap on `POST /email/batch` (developer docs, "Send batch emails"). */
export const POSTMARK_BATCH_LIMIT = 500;

/**
 * The email transport plus Postmark's batch call, the groundwork of batched sends (issue 27
 * item 3): one outcome per message, in request order.
 */
export type PostmarkTransport = EmailTransport & { sendBatch: NonNullable<EmailTransport['sendBatch']>; batchLimit: number };

/** What one request got: its HTTP status, or the error of a request that got no answer. */
type Exchange = { status: number | null; error: unknown; retryAfter?: string | null };

/**
 * The request as UTF-8 bytes rather than the string the SDK gives `fetch`: for a string body undici
 * scans the whole text for lone surrogates and copies it (`toUSVString`) before it encodes it, 5 %
 * of the batched worker's busy time on a batch of ~50 notices (~1 MB of JSON, a CPU profile,
 * issue 27). The bytes are the same: JSON.stringify escapes every lone surrogate.
 * Encoded by TextEncoder, not Buffer.from: one `€` or `–` in a batch makes V8 keep the whole JSON
 * as a two-byte string, which Buffer.from encoded at about a third of TextEncoder's speed (1.31 vs
 * 0.57 ms for 760 KB; 8 % of the batched worker's busy time in a profile at 1 × 256).
 */
const encoder = new TextEncoder();
function utf8Body(init: RequestInit | undefined): RequestInit | undefined {
  return typeof init?.body === 'string' ? { ...init, body: encoder.encode(init.body) } : init;
}

/**
 * One notice through Postmark's Email API (`POST /email`) with the official `postmark` client.
 * The correlation rides in `Metadata` (echoed by every webhook and by the Messages API) and in
 * our own header; the returned MessageID is the provider message id stored on the ledger row.
 *
 * The client is made per send around a `fetch` that keeps what the SDK's errors drop: whether
 * any HTTP answer came (its status) and, if not, the system error (refused connect = nothing
 * left; a reset or timeout after the request left = unknown). The SDK never retries.
 * The library is loaded on the first send or probe (issue 27: a worker loads only what it uses).
 */
export function createPostmarkTransport(settings: PostmarkSettings): PostmarkTransport {
  const base = new URL(settings.apiBaseUrl);
  let loading: Promise<Postmark> | null = null;
  const library = () => (loading ??= import('postmark'));

  const clientFor = (postmark: Postmark, exchange: Exchange) =>
    new postmark.ServerClient(settings.serverToken, {
      useHttps: base.protocol === 'https:',
      requestHost: base.host + base.pathname.replace(/\/$/, ''),
      timeout: settings.timeoutMs / 1000,
      fetch: async (input, init) => {
        try {
          const response = await fetch(input, utf8Body(init));
          exchange.status = response.status;
          exchange.retryAfter = response.headers.get('retry-after');
          return response;
        } catch (error) {
          exchange.error = error;
          throw error;
        }
      },
    });

  const classify = (postmark: Postmark, exchange: Exchange, error: unknown): Exclude<ChannelOutcome, { kind: 'accepted' }> => {
    if (exchange.status === null || !(error instanceof postmark.Errors.HttpError)) return unansweredOutcome(postmarkRows, 'postmark', exchange.error ?? error);
    const status = exchange.status;
    const code = error.code || null;
    const outcome = outcomeOfRow({
      rows: postmarkRows,
      transport: 'postmark',
      phase: 'response',
      answers: httpAnswers(status, code),
      status,
      errorClass: code !== null ? `postmark_${code}` : `postmark_${status}`,
    });
    const retryAfterMs = status === 429 ? retryAfterMsOf(exchange.retryAfter ?? null) : null;
    return outcome.kind === 'rejected' && retryAfterMs !== null ? { ...outcome, retryAfterMs } : outcome;
  };

  return {
    name: 'postmark',
    send: async (mail, options = {}) => {
      if (options.signal?.aborted)
        return { kind: 'rejected', permanent: false, code: null, errorClass: 'send_aborted', failure: 'nothing_left', phase: 'connect' };
      const postmark = await library();
      const exchange: Exchange = { status: null, error: null };
      try {
        const sent = await clientFor(postmark, exchange).sendEmail(postmarkMessage(mail, settings));
        return { kind: 'accepted', providerMessageId: sent.MessageID };
      } catch (error) {
        return classify(postmark, exchange, error);
      }
    },
    /**
     * `POST /email/batch`: HTTP 200 with one `{ErrorCode, MessageID, To}` per message even when
     * some fail, so each item is classified by its own ErrorCode (406: that recipient refused;
     * the others accepted). A request refused whole (401, 429, 422 before anything was taken),
     * or with no answer after it left (a 5xx, a reset, a timeout), gives every item that one
     * outcome: all nothing left, all our configuration, or all unknown.
     */
    batchLimit: POSTMARK_BATCH_LIMIT,
    sendBatch: async (mails, options = {}) => {
      if (mails.length === 0) return [];
      // The worker stopping before the call: nothing left, every item released.
      if (options.signal?.aborted)
        return mails.map(() => ({ kind: 'rejected', permanent: false, code: null, errorClass: 'send_aborted', failure: 'nothing_left', phase: 'connect' }));
      if (mails.length > POSTMARK_BATCH_LIMIT) throw new RangeError(`a Postmark batch takes at most ${POSTMARK_BATCH_LIMIT} messages, not ${mails.length}`);
      const postmark = await library();
      const exchange: Exchange = { status: null, error: null };
      let results;
      try {
        results = await clientFor(postmark, exchange).sendEmailBatch(mails.map((mail) => postmarkMessage(mail, settings)));
      } catch (error) {
        const outcome = classify(postmark, exchange, error);
        return mails.map(() => outcome);
      }
      return mails.map((_, index): ChannelOutcome => {
        const result = results[index];
        // A batch answer without this item's result says nothing about it: it may be out.
        if (!result) return { kind: 'unknown', errorClass: 'postmark_no_item_result', phase: 'response' };
        if (result.ErrorCode === 0 && result.MessageID) return { kind: 'accepted', providerMessageId: result.MessageID };
        return outcomeOfRow({
          rows: postmarkRows,
          transport: 'postmark',
          phase: 'response',
          answers: httpAnswers(422, result.ErrorCode),
          status: 422,
          errorClass: `postmark_${result.ErrorCode}`,
        });
      });
    },
    // GET /server: reads our server with the token, sends nothing.
    probe: async () => {
      const postmark = await library();
      const exchange: Exchange = { status: null, error: null };
      try {
        await clientFor(postmark, exchange).getServer();
        return { kind: 'accepted', providerMessageId: null };
      } catch (error) {
        return probeOutcome(classify(postmark, exchange, error));
      }
    },
    cancelAll: () => undefined,
    close: () => undefined,
  };
}

/** The notice as Postmark's Message: the correlation in Metadata and our header, nothing personal beyond the mail itself. */
export function postmarkMessage(mail: OutgoingNotice, { from, messageStream }: Pick<PostmarkSettings, 'from' | 'messageStream'>): Models.Message {
  const correlation = correlationOf(mail.noticeKey);
  const headers = { [CORRELATION_HEADER]: correlation, ...listUnsubscribeHeaders(mail.listUnsubscribe) };
  return {
    From: from,
    To: mail.to,
    Subject: mail.subject,
    TextBody: mail.text,
    HtmlBody: mail.html,
    MessageStream: messageStream,
    Metadata: { [CORRELATION_TAG]: correlation },
    Headers: Object.entries(headers).map(([Name, Value]) => ({ Name, Value })),
  };
}
