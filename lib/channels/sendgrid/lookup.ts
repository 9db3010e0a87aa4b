import { lazySendgridClient } from './client';
import { CORRELATION_TAG } from '@/lib/events/types';
import type { AcceptedLookup, LookupAnswer, LookupQuery } from '@/lib/channels/types';

export type SendgridLookupSettings = { apiKey: string; apiBaseUrl: string; timeoutMs: number };

type LogMessage = { sg_message_id?: string; to_email?: string; sg_message_id_created_at?: string };
type LogDetail = { custom_args?: Record<string, string> | null };

/** Pure: a value as the Email Logs query language quotes it (double quotes; one inside would end it, so it is refused). */
function quoted(value: string): string {
  if (/["\\]/.test(value)) throw new RangeError('an Email Logs value cannot hold a double quote or a backslash');
  return `"${value}"`;
}

/** Pure: the Email Logs query for one recipient in a window. */
export function emailLogsQuery({ recipient, since, until }: Pick<LookupQuery, 'recipient' | 'since' | 'until'>): string {
  return [
    `to_email = ${quoted(recipient.toLowerCase())}`,
    `sg_message_id_created_at >= TIMESTAMP ${quoted(since.toISOString())}`,
    `sg_message_id_created_at <= TIMESTAMP ${quoted(until.toISOString())}`,
  ].join(' AND ');
}

function statusOf(error: unknown): number {
  const code: unknown = typeof error === 'object' && error !== null && 'response' in error ? Reflect.get(error, 'code') : null;
  return typeof code === 'number' ? code : 0;
}

/**
 * SendGrid's Email Logs API with the official `@sendgrid/client` (`client.request`): the older
 * Email Activity API (`GET /v3/messages?query=`) could filter on `unique_args`, but it is a paid
 * add-on limited to 6 requests a minute; Email Logs cannot filter on custom args, so the search
 * is `POST /v3/logs` by `to_email` and `sg_message_id_created_at` in the window, then
 * `GET /v3/logs/{sg_message_id}` for each candidate's `custom_args`, matched on our correlation.
 * The earliest match is the hand-over; its provider id is the X-Message-Id (the sg_message_id
 * before its `.filter…`/`.recvd…` part), as the send stored and the events carry.
 */
export function createSendgridLookup(settings: SendgridLookupSettings): AcceptedLookup {
  const connect = lazySendgridClient(settings);
  return {
    provider: 'sendgrid',
    find: async (query: LookupQuery): Promise<LookupAnswer> => {
      const client = await connect();
      try {
        const [, body] = await client.request({ url: '/v3/logs', method: 'POST', body: { query: emailLogsQuery(query), limit: 50 } });
        const messages = ((body as { messages?: LogMessage[] } | null)?.messages ?? [])
          .filter((message): message is Required<LogMessage> => typeof message.sg_message_id === 'string' && message.sg_message_id !== '')
          .sort((a, b) => Date.parse(a.sg_message_id_created_at) - Date.parse(b.sg_message_id_created_at));
        for (const message of messages) {
          const [, detail] = await client.request({ url: `/v3/logs/${encodeURIComponent(message.sg_message_id)}`, method: 'GET' });
          if ((detail as LogDetail | null)?.custom_args?.[CORRELATION_TAG] !== query.correlation) continue;
          const acceptedAt = new Date(message.sg_message_id_created_at);
          return {
            kind: 'found',
            providerMessageId: message.sg_message_id.replace(/\.(filter|recvd)[\s\S]*$/, ''),
            acceptedAt: Number.isNaN(acceptedAt.getTime()) ? new Date() : acceptedAt,
            source: 'sendgrid_email_logs',
          };
        }
        return { kind: 'not_found' };
      } catch (error) {
        const status = statusOf(error);
        return { kind: 'failed', errorClass: status > 0 ? `sendgrid_lookup_${status}` : 'sendgrid_lookup_unanswered' };
      }
    },
  };
}
