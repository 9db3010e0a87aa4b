import { CORRELATION_TAG } from '@/lib/events/types';
import type { AcceptedLookup, LookupAnswer, LookupQuery } from '@/lib/channels/types';

/** `messageStream`: the stream the transport sends on (POSTMARK_MESSAGE_STREAM); the search names it, whatever Postmark's default is. */
export type PostmarkLookupSettings = { serverToken: string; apiBaseUrl: string; messageStream: string; timeoutMs: number };

const eastern = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/New_York',
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/**
 * Pure: an instant as the Messages API's `fromdate`/`todate` want it, US Eastern wall-clock time
 * without an offset (`2026-01-15T12:00:00`), whole seconds. Postmark reads these in Eastern time
 * whatever the server's zone, so a UTC string would shift the window by 4–5 hours.
 */
export function easternWallClock(instant: Date): string {
  const parts = Object.fromEntries(eastern.formatToParts(instant).map((part) => [part.type, part.value]));
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
}

type OutboundMessage = { MessageID: string; Recipients?: string[]; ReceivedAt: string; Metadata?: Record<string, string> | null; Status?: string };

/**
 * Postmark's Outbound Messages search (`GET /messages/outbound`) with the official client's
 * `getOutboundMessages`: by recipient, our correlation as `metadata_notice_correlation` (one
 * metadata filter per search, as documented) and the window in Eastern time. Postmark lists only
 * messages it accepted (queued, sent or processed), so any listed message with our correlation
 * for this recipient is the hand-over; the earliest wins (its MessageID and ReceivedAt).
 */
export function createPostmarkLookup(settings: PostmarkLookupSettings): AcceptedLookup {
  const base = new URL(settings.apiBaseUrl);
  let loading: Promise<typeof import('postmark')> | null = null;
  const library = () => (loading ??= import('postmark'));
  return {
    provider: 'postmark',
    find: async ({ recipient, correlation, since, until }: LookupQuery): Promise<LookupAnswer> => {
      const postmark = await library();
      const client = new postmark.ServerClient(settings.serverToken, {
        useHttps: base.protocol === 'https:',
        requestHost: base.host + base.pathname.replace(/\/$/, ''),
        timeout: settings.timeoutMs / 1000,
      });
      let found;
      try {
        found = await client.getOutboundMessages({
          count: 50,
          offset: 0,
          recipient,
          messageStream: settings.messageStream,
          // Whole seconds: widen by one each side so the instants themselves are inside.
          fromDate: easternWallClock(new Date(since.getTime() - 1_000)),
          toDate: easternWallClock(new Date(until.getTime() + 1_000)),
          [`metadata_${CORRELATION_TAG}`]: correlation,
        });
      } catch (error) {
        const status = error instanceof postmark.Errors.PostmarkError ? error.statusCode : 0;
        return { kind: 'failed', errorClass: status > 0 ? `postmark_lookup_${status}` : 'postmark_lookup_unanswered' };
      }
      const address = recipient.toLowerCase();
      const ours = (found.Messages as unknown as OutboundMessage[])
        .filter((message) => message.Metadata?.[CORRELATION_TAG] === correlation)
        .filter((message) => (message.Recipients ?? []).some((to) => to.toLowerCase() === address))
        .map((message) => ({ id: message.MessageID, at: new Date(message.ReceivedAt) }))
        .filter((message) => message.id && !Number.isNaN(message.at.getTime()))
        .sort((a, b) => a.at.getTime() - b.at.getTime());
      const first = ours[0];
      if (!first) return { kind: 'not_found' };
      return { kind: 'found', providerMessageId: first.id, acceptedAt: first.at, source: 'postmark_messages_api' };
    },
  };
}
