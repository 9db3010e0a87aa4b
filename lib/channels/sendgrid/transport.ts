import { randomBytes } from 'node:crypto';
import { lazySendgridClient } from './client';
import addressparser from 'nodemailer/lib/addressparser';
import { CORRELATION_HEADER, CORRELATION_TAG } from '@/lib/events/types';
import { correlationOf } from '@/lib/ledger/notice-key';
import { listUnsubscribeHeaders, type EmailTransport, type OutgoingNotice } from '@/lib/mail/transport';
import type { ChannelOutcome } from '@/lib/channels/types';
import { httpAnswers, outcomeOfRow, probeOutcome, retryAfterMsOf, unansweredOutcome } from '@/lib/channels/http-phase';
import { sendgridRows } from './phases';

/** SendGrid's cap on personalizations (and recipients) in one Mail Send (its errors page). */
export const SENDGRID_BATCH_LIMIT = 1000;
/** "Substitutions are limited to 50,000 bytes per personalization block" (SendGrid, Substitution Tags). */
export const SENDGRID_SUBSTITUTION_LIMIT = 50_000;

export type SendgridSettings = {
  apiKey: string;
  /** SENDGRID_API_BASE_URL: https://api.sendgrid.com, or a local peer (testing/sendgrid-peer.ts). */
  apiBaseUrl: string;
  from: string;
  timeoutMs: number;
};

/**
 * One notice through SendGrid's v3 Mail Send with the official `@sendgrid/client`. The 202 has no
 * body and one `X-Message-Id`, the provider message id stored on the ledger row (its events carry
 * it as the prefix of `sg_message_id`). The correlation rides in `custom_args` — the correlation
 * only, never personal data: SendGrid keeps custom_args in its logs and echoes them in every
 * event — and in our header. The client never retries; it is loaded on the first send or probe.
 */
export function createSendgridTransport(
  settings: SendgridSettings,
): EmailTransport & { sendBatch: NonNullable<EmailTransport['sendBatch']>; batchLimit: number } {
  const connect = lazySendgridClient(settings);
  const from = senderOf(settings.from);

  const transport: EmailTransport & { sendBatch: NonNullable<EmailTransport['sendBatch']>; batchLimit: number } = {
    name: 'sendgrid',
    send: async (mail, options = {}) => {
      if (options.signal?.aborted)
        return { kind: 'rejected', permanent: false, code: null, errorClass: 'send_aborted', failure: 'nothing_left', phase: 'connect' };
      const client = await connect();
      try {
        const [response] = await client.request({ url: '/v3/mail/send', method: 'POST', body: sendgridMailSend(mail, from) });
        return accepted(response.headers['x-message-id']);
      } catch (error) {
        return classifySendgridError(error);
      }
    },
    /**
     * Many notices in one Mail Send: one personalization each (its recipient, subject, headers and
     * custom_args), the content two substitution tags each personalization fills with its own
     * rendered text and HTML (SendGrid's documented "multiple emails with personalizations and
     * substitutions"). The tags are random per call, so no rendered text can contain one.
     *
     * SendGrid answers for the request, never per message: a 202 with one X-Message-Id accepts
     * every item (provisionally, as a single send: its events settle each, linked by the
     * correlation in that personalization's custom_args), and any 400 refuses the whole request
     * with nothing sent — then each item is sent alone, so one bad address is refused alone and
     * the others go. A recipient may appear only once in one request (a 400 otherwise): the
     * worker never gathers one address twice (lib/jobs/handle-batch.ts). An item whose rendered
     * bodies exceed the substitution limit goes alone too. Unanswered after the request left
     * (timeout, reset, 5xx): every item unknown. Refused before (connect, 401, 429): every item so.
     */
    batchLimit: SENDGRID_BATCH_LIMIT,
    sendBatch: async (mails, options = {}) => {
      if (mails.length === 0) return [];
      if (options.signal?.aborted)
        return mails.map(() => ({ kind: 'rejected', permanent: false, code: null, errorClass: 'send_aborted', failure: 'nothing_left', phase: 'connect' }));
      if (mails.length > SENDGRID_BATCH_LIMIT)
        throw new RangeError(`a SendGrid Mail Send takes at most ${SENDGRID_BATCH_LIMIT} personalizations, not ${mails.length}`);
      const single = (mail: OutgoingNotice) => transport.send(mail, options);
      const tags = substitutionTags();
      const fits = mails.map((mail) => substitutionBytes(mail, tags) <= SENDGRID_SUBSTITUTION_LIMIT);
      const together = mails.filter((_, index) => fits[index]);
      const alone = new Map(mails.flatMap((mail, index) => (fits[index] ? [] : [[index, single(mail)] as const])));
      const client = await connect();
      let batched: ChannelOutcome[];
      if (together.length <= 1) batched = await Promise.all(together.map(single));
      else {
        try {
          const [response] = await client.request({ url: '/v3/mail/send', method: 'POST', body: sendgridBatchMailSend(together, from, tags) });
          const outcome = accepted(response.headers['x-message-id']);
          batched = together.map(() => outcome);
        } catch (error) {
          const outcome = classifySendgridError(error);
          // A 400 refused the request whole and sent nothing: each alone finds the item it was about.
          batched = statusOf(error) === 400 ? await Promise.all(together.map(single)) : together.map(() => outcome);
        }
      }
      let next = 0;
      return Promise.all(
        mails.map((_, index) => {
          const own = alone.get(index);
          if (own) return own;
          const outcome = batched[next] as ChannelOutcome;
          next += 1;
          return outcome;
        }),
      );
    },
    // GET /v3/scopes: the key's permissions, sends nothing.
    probe: async () => {
      const client = await connect();
      try {
        await client.request({ url: '/v3/scopes', method: 'GET' });
        return { kind: 'accepted', providerMessageId: null };
      } catch (error) {
        return probeOutcome(classifySendgridError(error));
      }
    },
    cancelAll: () => undefined,
    close: () => undefined,
  };
  return transport;
}

/** SendGrid's 202: queued for processing, one id for the request; provisional until the message's own events. */
function accepted(id: unknown): ChannelOutcome {
  return { kind: 'accepted', providerMessageId: typeof id === 'string' && id ? id : null, provisional: true };
}

function statusOf(error: unknown): number | null {
  const code: unknown = typeof error === 'object' && error !== null && 'response' in error ? Reflect.get(error, 'code') : null;
  return typeof code === 'number' ? code : null;
}

export type SubstitutionTags = { html: string; text: string };

/** Two tags no rendered message can contain: random per call. */
export function substitutionTags(): SubstitutionTags {
  const nonce = randomBytes(9).toString('hex');
  return { html: `-nl-html-${nonce}-`, text: `-nl-text-${nonce}-` };
}

/** What one personalization's substitutions weigh, as SendGrid counts its limit: keys and values, in bytes. */
export function substitutionBytes(mail: OutgoingNotice, tags: SubstitutionTags): number {
  return Buffer.byteLength(tags.html) + Buffer.byteLength(mail.html) + Buffer.byteLength(tags.text) + Buffer.byteLength(mail.text);
}

/** Many notices as one Mail Send body: a personalization each, the content its substitutions fill. */
export function sendgridBatchMailSend(mails: readonly OutgoingNotice[], from: { email: string; name?: string }, tags: SubstitutionTags) {
  return {
    from,
    personalizations: mails.map((mail) => {
      const correlation = correlationOf(mail.noticeKey);
      return {
        to: [{ email: mail.to }],
        subject: mail.subject,
        substitutions: { [tags.text]: mail.text, [tags.html]: mail.html },
        custom_args: { [CORRELATION_TAG]: correlation },
        headers: { [CORRELATION_HEADER]: correlation, ...listUnsubscribeHeaders(mail.listUnsubscribe) },
      };
    }),
    content: [
      { type: 'text/plain', value: tags.text },
      { type: 'text/html', value: tags.html },
    ],
  };
}

/** Pure: the client's ResponseError (its `code` is the HTTP status) by the status, anything else by where it stopped. */
export function classifySendgridError(error: unknown): Exclude<ChannelOutcome, { kind: 'accepted' }> {
  const answered = statusOf(error);
  if (answered === null) return unansweredOutcome(sendgridRows, 'sendgrid', error);
  const outcome = outcomeOfRow({
    rows: sendgridRows,
    transport: 'sendgrid',
    phase: 'response',
    answers: httpAnswers(answered, null),
    status: answered,
    errorClass: `sendgrid_${answered}`,
  });
  const retryAfterMs = answered === 429 ? retryAfterOfResponse(error) : null;
  return outcome.kind === 'rejected' && retryAfterMs !== null ? { ...outcome, retryAfterMs } : outcome;
}

/** A 429's wait: `Retry-After`, else `X-RateLimit-Reset` (epoch seconds, SendGrid "Rate limits"); null when neither reads. */
function retryAfterOfResponse(error: unknown): number | null {
  const response: unknown = typeof error === 'object' && error !== null ? Reflect.get(error, 'response') : null;
  const headers: unknown = typeof response === 'object' && response !== null ? Reflect.get(response, 'headers') : null;
  if (typeof headers !== 'object' || headers === null) return null;
  const header = (name: string) => {
    const value: unknown = Reflect.get(headers, name);
    return typeof value === 'string' ? value : null;
  };
  const retryAfter = retryAfterMsOf(header('retry-after'));
  if (retryAfter !== null) return retryAfter;
  const reset = Number(header('x-ratelimit-reset'));
  return Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - Date.now()) : null;
}

/** MAIL_FROM as SendGrid's `{email, name}`. */
export function senderOf(mailFrom: string): { email: string; name?: string } {
  const [first] = addressparser(mailFrom, { flatten: true });
  if (!first?.address) return { email: mailFrom.trim() };
  return first.name ? { email: first.address, name: first.name } : { email: first.address };
}

/** The notice as a Mail Send body: one personalization whose custom_args hold the correlation alone. */
export function sendgridMailSend(mail: OutgoingNotice, from: { email: string; name?: string }) {
  const correlation = correlationOf(mail.noticeKey);
  return {
    from,
    subject: mail.subject,
    personalizations: [{ to: [{ email: mail.to }], custom_args: { [CORRELATION_TAG]: correlation } }],
    content: [
      { type: 'text/plain', value: mail.text },
      { type: 'text/html', value: mail.html },
    ],
    headers: { [CORRELATION_HEADER]: correlation, ...listUnsubscribeHeaders(mail.listUnsubscribe) },
  };
}
