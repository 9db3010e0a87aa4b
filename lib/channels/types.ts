import type { JobRow } from '@/db/schema';
import type { DomainRateLimiter } from '@/lib/jobs/rate-limit';
import type { SendOptions } from '@/lib/mail/transport';
import type { SmsOutcome } from '@/lib/sms/transport';
import type { LinkKeyRing } from '@/lib/recipient/link-keys';
import type { TransportName } from '@/lib/transport/phases';
import type { RenderTrace } from '@/lib/templates/compiled';
import type { TemplateVersion } from '@/lib/templates/versions';
import type { NoticeConfig } from '@/lib/windows/load-config';

/**
 * One channel interface for every transport (ARCHITECTURE.md "Channels and transports"): what the
 * send path asks of SMTP, Twilio and each HTTP email provider alike. The send path
 * (lib/jobs/handle-wakeup.ts) keeps the order and the ledger; a channel does the rest:
 *
 * - `route`: the token bucket a send draws from and the ledger's `recipient_domain`;
 * - `compose`: the notice rendered into what the transport sends, or a refusal of our own
 *   (a template that does not render, a text over its segments) — nothing left the process;
 * - `send`: the hand-over, its answer classified by the phase table (lib/transport/phases.ts,
 *   and each HTTP provider's rows in lib/channels/<name>/phases.ts): accepted with the provider's
 *   message id (stored on the ledger row), nothing left, refused for this recipient, our
 *   configuration, or outcome unknown;
 * - `probe`: a request that sends nothing, for the transport's breaker;
 * - the correlation every send carries (lib/events/types.ts CORRELATION_TAG) is set by `send`,
 *   in the form the provider echoes in its webhooks (lib/events/providers/<name>.ts).
 *
 * Total on purpose: a transport with nothing to do for a step does nothing (Twilio's cancelAll).
 */
export type ChannelOutcome = SmsOutcome;

export type ComposeInput = {
  job: JobRow;
  oneTimeCode: string;
  /** The job keeps an evidence record: an email's render also gives its HTML's trace (Shown's htmlTrace). */
  traceHtml?: boolean;
};

/**
 * What the customer is shown, as the evidence record keeps it (lib/evidence/send-evidence.ts): the
 * rendered message and its recipient page; and the template version it was rendered from, which
 * the result commit records on the ledger row (the lookup's re-render, lib/console/rerender.ts).
 */
export type Shown = {
  manageUrl: string;
  templateVersion: TemplateVersion | null;
  /** An email's `htmlTrace` (lib/templates/compiled.ts) where the compiled renderer made one: the record's form of its HTML. */
  rendered: { channel: 'email'; subject: string; html: string; text: string; htmlTrace: RenderTrace | null } | { channel: 'sms'; body: string };
};

export type Composed<Message> = { ok: true; message: Message; shown: Shown } | { ok: false; outcome: Extract<ChannelOutcome, { kind: 'rejected' }> };

/** A composed notice as the send path keeps it from its compose to its send: what it was shown went to the evidence capture, if anywhere. */
export type Ready<Message> = { ok: true; message: Message } | { ok: false; outcome: Extract<ChannelOutcome, { kind: 'rejected' }> };

export type ChannelRoute = {
  /** The ledger's recipient_domain for the claim: the email's domain, `sms:<country>` for a text. */
  recipientDomain: string;
  /** The bucket the send takes a token from; null when nothing will be sent (no token taken). */
  bucket: { limiter: DomainRateLimiter; key: string } | null;
};

export type Channel<Message> = {
  /** The transport: the breaker's key and the phase table's transport column. */
  name: TransportName;
  /** A promise only where the channel first loads what it needs (the SMS channel's first text): the email path stays synchronous. */
  route: (job: JobRow) => ChannelRoute | Promise<ChannelRoute>;
  compose: (input: ComposeInput) => Promise<Composed<Message>>;
  send: (message: Message, options?: SendOptions) => Promise<ChannelOutcome>;
  /**
   * Declared only by a transport with a batch API (Postmark's `POST /email/batch`): many messages
   * in one call, one outcome per message in order, each classified by the same phase rows. The
   * worker batches only where this exists (lib/jobs/handle-batch.ts); SMTP and Twilio have none.
   */
  sendBatch?: (messages: Message[], options?: SendOptions) => Promise<ChannelOutcome[]>;
  /** The most messages one `sendBatch` takes (the provider's cap). */
  batchLimit?: number;
  probe: () => Promise<ChannelOutcome>;
  /** Cuts every send in flight: the worker's stop grace ran out. */
  cancelAll: () => void;
  close: () => void;
};

/** What composing needs beyond the job: the notice types, and where the recipient's links point. */
export type ComposeSettings = {
  noticeConfig: NoticeConfig;
  secret: string;
  linkKeys?: LinkKeyRing;
  cancelBaseUrl: string;
  unsubscribeMailbox?: string | null;
};

/**
 * Asking the provider what it accepted (issue 27 item 4): a claim whose send ended unknown is
 * looked up by its recipient, our correlation (the metadata every send carries) and a time window.
 * `found`: the provider accepted a message with this correlation for this recipient, with its own
 * message id and when; `not_found`: it has none in the window (absence, never proof that nothing
 * went out: its search may lag); `failed`: no usable answer (5xx, 429, timeout), asked again on the
 * next pass.
 */
export type LookupQuery = { recipient: string; correlation: string; since: Date; until: Date };

export type LookupAnswer =
  { kind: 'found'; providerMessageId: string; acceptedAt: Date; source: string } | { kind: 'not_found' } | { kind: 'failed'; errorClass: string };

export type AcceptedLookup = {
  provider: TransportName;
  find: (query: LookupQuery) => Promise<LookupAnswer>;
};
