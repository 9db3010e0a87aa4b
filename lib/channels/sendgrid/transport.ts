import { lazySendgridClient } from './client';
import addressparser from 'nodemailer/lib/addressparser';
import { CORRELATION_HEADER, CORRELATION_TAG } from '@/lib/events/types';
import { correlationOf } from '@/lib/ledger/notice-key';
import { listUnsubscribeHeaders, type EmailTransport, type OutgoingNotice } from '@/lib/mail/transport';
import type { ChannelOutcome } from '@/lib/channels/types';
import { httpAnswers, outcomeOfRow, probeOutcome, unansweredOutcome } from '@/lib/channels/http-phase';
import { sendgridRows } from './phases';

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
export function createSendgridTransport(settings: SendgridSettings): EmailTransport {
  const connect = lazySendgridClient(settings);
  const from = senderOf(settings.from);

  return {
    name: 'sendgrid',
    send: async (mail, options = {}) => {
      if (options.signal?.aborted)
        return { kind: 'rejected', permanent: false, code: null, errorClass: 'send_aborted', failure: 'nothing_left', phase: 'connect' };
      const client = await connect();
      try {
        const [response] = await client.request({ url: '/v3/mail/send', method: 'POST', body: sendgridMailSend(mail, from) });
        const id = response.headers['x-message-id'];
        return { kind: 'accepted', providerMessageId: typeof id === 'string' && id ? id : null };
      } catch (error) {
        return classifySendgridError(error);
      }
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
}

/** Pure: the client's ResponseError (its `code` is the HTTP status) by the status, anything else by where it stopped. */
export function classifySendgridError(error: unknown): Exclude<ChannelOutcome, { kind: 'accepted' }> {
  const code: unknown = typeof error === 'object' && error !== null && 'response' in error ? Reflect.get(error, 'code') : null;
  const answered = typeof code === 'number' ? code : null;
  if (answered === null) return unansweredOutcome(sendgridRows, 'sendgrid', error);
  return outcomeOfRow({
    rows: sendgridRows,
    transport: 'sendgrid',
    phase: 'response',
    answers: httpAnswers(answered, null),
    status: answered,
    errorClass: `sendgrid_${answered}`,
  });
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
