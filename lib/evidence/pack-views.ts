import type { PackEntry } from '@/lib/api/evidence';
import { joinTrace } from '@/lib/templates/trace';

/**
 * The readable parts of a pack, derived from its entries only — the export writes them, and
 * verify derives them again from the verified entries, so what a reviewer reads is what was signed.
 */

type Body = Record<string, unknown>;

const obj = (value: unknown): Body => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Body) : {});
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function bodiesOf(entries: readonly PackEntry[]): { kind: string; recordedAt: string; body: Body }[] {
  return entries.map((entry) => {
    let body: Body = {};
    try {
      body = obj(JSON.parse(entry.body));
    } catch {
      body = {};
    }
    return { kind: entry.kind, recordedAt: entry.recordedAt, body };
  });
}

export function recordView(entries: readonly PackEntry[]): Body {
  const bodies = bodiesOf(entries);
  const sent = bodies.find((entry) => entry.kind === 'notice.sent') ?? bodies.find((entry) => entry.kind === 'notice.outcome');
  const replays = bodies.filter((entry) => entry.kind === 'replay.approved').map((entry) => entry.body);
  return {
    fact: sent ? (sent.body.fact ?? null) : null,
    window: sent ? (sent.body.window ?? null) : null,
    shown: sent ? (obj(sent.body.message).shown ?? null) : null,
    sending: bodies.filter((entry) => entry.kind === 'notice.sent' || entry.kind === 'notice.outcome').map((entry) => entry.body.sending ?? null),
    delivery: bodies.filter((entry) => entry.kind === 'provider.event').map((entry) => entry.body),
    customer: bodies.filter((entry) => entry.kind.startsWith('recipient.')).map((entry) => ({ kind: entry.kind, ...entry.body })),
    ledger: bodies.filter((entry) => entry.kind === 'ledger.resolved').map((entry) => entry.body),
    // Only when there is one: a pack exported before replays were recorded still derives to what it says.
    ...(replays.length > 0 ? { replays } : {}),
  };
}

/** The template pieces each notice.sent entry's HTML trace names (lib/templates/trace.ts): what a pack must carry beside it. */
export function messageTraceDigests(entries: readonly PackEntry[]): string[] {
  const found = new Set<string>();
  for (const entry of bodiesOf(entries)) {
    if (entry.kind !== 'notice.sent') continue;
    const trace = obj(entry.body.message).htmlTrace;
    if (trace === undefined) continue;
    const walk = (node: unknown, depth: number) => {
      const { pieces, parts } = obj(node);
      if (typeof pieces === 'string') found.add(pieces);
      if (Array.isArray(parts) && depth < 8) for (const part of parts) if (typeof part === 'object') walk(part, depth + 1);
    };
    walk(trace, 0);
  }
  return [...found];
}

/** Why the sent entry's HTML cannot be joined from its trace and these pieces; null when it can (or it holds the HTML itself). */
export function messageProblem(entries: readonly PackEntry[], pieces: Readonly<Record<string, readonly string[]>>): string | null {
  const sent = bodiesOf(entries).find((entry) => entry.kind === 'notice.sent');
  const trace = sent ? obj(sent.body.message).htmlTrace : undefined;
  if (trace === undefined) return null;
  const joined = joinTrace(trace, pieces);
  return joined.ok ? null : joined.problem;
}

/**
 * The message as the customer received it: the sent entry's rendered subject, HTML and text (or
 * SMS body). An entry that holds its HTML as a trace gets it joined from the template pieces the
 * pack carries (`html` null when they do not join: messageProblem says why).
 */
export function messageView(entries: readonly PackEntry[], pieces: Readonly<Record<string, readonly string[]>> = {}): Body | null {
  const bodies = bodiesOf(entries);
  const sent = bodies.find((entry) => entry.kind === 'notice.sent');
  if (!sent) return null;
  const message = obj(sent.body.message);
  const { shown: _shown, htmlTrace, ...rest } = message;
  if (htmlTrace === undefined) return rest;
  const joined = joinTrace(htmlTrace, pieces);
  return { ...rest, html: joined.ok ? joined.text : null };
}

/** Texts for Stripe's dispute evidence fields, from the record. */
export function stripeTexts(
  entries: readonly PackEntry[],
  { noticeKey }: { noticeKey: string },
): {
  cancellation_policy_disclosure: string;
  cancellation_rebuttal: string;
  customer_communication: string;
} {
  const record = recordView(entries);
  const fact = obj(record.fact);
  const shown = obj(record.shown);
  const window = obj(record.window);
  const sending = (record.sending as unknown[]).map(obj).find((entry) => str(entry.outcome) === 'accepted');
  const rules = (Array.isArray(window.rules) ? window.rules : []).map(obj);
  const delivered = (record.delivery as unknown[]).map(obj).filter((event) => event.type === 'delivered');
  const customer = (record.customer as unknown[]).map(obj);
  const cancels = customer.filter((action) => action.kind === 'recipient.cancel_request');
  const views = customer.filter((action) => action.kind === 'recipient.page_view');
  const amount = [str(shown.amount), str(shown.currency)].filter(Boolean).join(' ');
  const disclosure = [
    sending
      ? `On ${str(sending.sendFinishedAt) ?? 'an unrecorded date'} we sent the customer a ${str(fact.noticeType) ?? 'notice'} by ${str(sending.channel) ?? 'email'} to ${str(sending.recipient) ?? 'their address'}${str(sending.messageId) ? ` (Message-ID ${String(sending.messageId)})` : ''}.`
      : 'No send of this notice was recorded.',
    `It stated the charge${str(shown.date) ? ` on ${String(shown.date)}` : ''}${amount ? ` of ${amount}` : ''}${str(shown.frequency) ? `, billed ${String(shown.frequency)}` : ''}, and linked to an online page where the customer could cancel: ${str(shown.cancelLink) ?? 'not recorded'}.`,
    delivered.length > 0 ? `The provider reported it delivered at ${delivered.map((event) => str(event.occurredAt) ?? '?').join(', ')}.` : '',
    rules.length > 0
      ? `The notice was sent within the window required by ${rules.map((rule) => `${str(rule.title) ?? str(rule.id) ?? 'a rule'}${str(rule.sourceUrl) ? ` (${String(rule.sourceUrl)})` : ''}`).join('; ')}: between ${str(window.earliest) ?? 'its opening'} and ${str(window.latest) ?? 'its deadline'}.`
      : '',
  ]
    .filter(Boolean)
    .join(' ');
  const rebuttal =
    cancels.length > 0
      ? `The customer asked to cancel through the notice's page on ${cancels.map((cancel) => str(cancel.at) ?? '?').join(', ')}${str(cancels[0]?.clientAddress) ? ` from ${String(cancels[0]?.clientAddress)}` : ''}${str(cancels[0]?.userAgent) ? ` (${String(cancels[0]?.userAgent)})` : ''}.`
      : `No cancellation request reached us through the notice's cancellation page${views.length > 0 ? `, although the customer opened that page ${String(views.length)} time(s), first at ${str(views[0]?.at) ?? '?'}` : ''}.`;
  return {
    cancellation_policy_disclosure: disclosure,
    cancellation_rebuttal: rebuttal,
    customer_communication: `evidence-${noticeKey.slice(0, 32)}.html: the notice exactly as rendered and sent, with its delivery events and the customer's actions (from the signed evidence pack evidence-${noticeKey.slice(0, 32)}.json).`,
  };
}
