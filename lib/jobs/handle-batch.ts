import type { OutgoingNotice } from '@/lib/mail/transport';
import type { ChannelOutcome, Ready } from '@/lib/channels/types';
import type { SendCapture } from '@/lib/evidence/send-evidence';
import { mintOneTimeCode } from '@/lib/ledger/one-time-code';
import { emailBatchSize } from '@/lib/metrics/registry';
import type { HandlerResult, WakeupHandler } from '@/lib/queue/types';
import {
  claimWakeup,
  composeCaptured,
  DeliveryAbortedError,
  createSendPath,
  finishWakeup,
  prepareWakeup,
  sendOne,
  type Claimed,
  type ReadyToClaim,
  type SendPath,
  type SendPathDeps,
} from './handle-wakeup';

/**
 * Batched sends (issue 27 item 3): the same send path as ./handle-wakeup.ts, its steps shared,
 * with the hand-over of many notices in one provider call. Only where the email channel
 * declares `sendBatch` (Postmark's `POST /email/batch`, SES v2 `SendBulkEmail`, SendGrid's Mail Send
 * with a personalization per notice); SMTP and Twilio keep the single path
 * untouched, and so does every SMS job here.
 *
 * Order, for a batch:
 *   each wake-up: load → policy → pause → breaker → token → window (prepareWakeup, as ever);
 *   gathered: up to `size` wake-ups ready for their claim, or whatever came within `gatherMs`;
 *   compose each (with the one-time code its claim will record);
 *   CLAIM all in one statement, committed before the call (the coalesced claim carries
 *     claims started in one tick together; distinct keys, see below);
 *   ONE batch call → COMMIT the accepted results in one statement (the coalesced commit,
 *     likewise) → evidence → ack each.
 *
 * At most once per recipient inside a batch: two wake-ups of one notice key, or two notices to one
 * address, never share a batch (the gatherer holds the second for the next one); for one key the
 * claim would let only one through anyway (the other is `suppressed_duplicate`). One key and one
 * address are never in one call twice (SendGrid refuses a whole request that names an address twice).
 *
 * A call that failed whole gives every item the same class (the transport says so):
 * - refused before it left (connect refused, 401, 429 with Retry-After): every claim released,
 *   nothing quarantined, as the single path does for each (nothing left / our configuration);
 * - no answer after the request left (timeout, reset, 5xx): every item `outcome unknown`, its
 *   claim kept (quarantine); provider evidence or a person resolves it.
 * Items answered one by one (Postmark: HTTP 200 with an ErrorCode per item) are classified by
 * the same phase rows as a single send; SendGrid answers the request only (a 202 accepts every
 * item provisionally; a 400 refuses the whole request, and its transport then sends each alone).
 */

export type BatchSettings = {
  /** EMAIL_BATCH_SIZE: the most notices in one call (at most the provider's cap); 1 turns batching off. */
  size: number;
  /** EMAIL_BATCH_GATHER: how long the first ready notice waits for others before the call goes anyway. */
  gatherMs: number;
};

export function createBatchingWakeupHandler(deps: SendPathDeps, batch: BatchSettings & { concurrency: number }): WakeupHandler {
  // Every claim and commit of a batch must fit one statement, beside whatever else is in flight.
  const path = createSendPath(deps, { maxStatementBatch: Math.max(64, batch.concurrency) });
  const single = async (ready: ReadyToClaim) => sendOne(path, ready);
  // Never more than the provider takes, nor than the handlers in flight (each waits in the batch).
  const size = Math.min(batch.size, path.email.batchLimit ?? 1, batch.concurrency);
  const gather =
    path.email.sendBatch && size > 1
      ? createGatherer<ReadyToClaim, HandlerResult | DeliveryAbortedError>({
          size,
          waitMs: batch.gatherMs,
          // One notice key, and one recipient address, at most once per call (SendGrid refuses a request naming an address twice).
          keysOf: (ready) => [ready.job.noticeKey, `to:${(ready.job.recipientEmail ?? '').trim().toLowerCase()}`],
          run: (items) => sendBatch(path, items),
        })
      : null;
  return async (delivery) => {
    const prepared = await prepareWakeup(path, delivery);
    if ('done' in prepared) return prepared.done;
    const ready = prepared.next;
    if (!gather || ready.channel !== path.email) return single(ready);
    const result = await gather(ready);
    if (result instanceof DeliveryAbortedError) throw result;
    return result;
  };
}

/** A notice composed for its claim: the code the claim records for a new row, and what was composed with it. */
type Draft = { code: string; capture: SendCapture; keep: boolean; composed: Ready<OutgoingNotice> };
type InFlight = { index: number; ready: ReadyToClaim; claimed: Claimed; draft: Draft };

/** One batch: compose each, claims in one statement, one call, results committed together, then each item's answer. */
export async function sendBatch(path: SendPath, items: readonly ReadyToClaim[]): Promise<(HandlerResult | DeliveryAbortedError)[]> {
  const { email } = path;
  if (!email.sendBatch) throw new Error(`the ${email.name} channel has no batch send`);
  // A delivery aborted while it waited for the batch (the worker stopping, its visibility deadline)
  // stops here, before its claim, as the single path stops before its own. The others are composed
  // before the claims, as on the single path (sendOne): the claim-to-commit interval holds the call
  // and the commit, not the rendering of the whole batch.
  const drafts = await Promise.all(
    items.map(async (ready): Promise<Draft | null> => {
      if (ready.delivery.signal.aborted) return null;
      const code = mintOneTimeCode();
      const capture: SendCapture = { rendered: null, manageUrl: null, sendStartedAt: path.now() };
      const keep = path.deps.evidence?.wants(ready.job) ?? false;
      return { code, capture, keep, composed: await composeCaptured(email, { job: ready.job, oneTimeCode: code }, capture, { keep }) };
    }),
  );
  // Every claim started in this tick: one coalesced statement, committed before anything is sent.
  const claims = await Promise.all(
    items.map((ready, index) => {
      const draft = drafts[index];
      return draft ? claimWakeup(path, ready, draft.code) : null;
    }),
  );
  const results: (HandlerResult | DeliveryAbortedError | null)[] = claims.map((claim) =>
    claim === null ? new DeliveryAbortedError() : 'done' in claim ? claim.done : null,
  );
  const inFlight = items.flatMap((ready, index): InFlight[] => {
    const claim = claims[index];
    const draft = drafts[index];
    return claim && draft && 'next' in claim ? [{ index, ready, claimed: claim.next, draft }] : [];
  });
  if (inFlight.length === 0) return results.map((result) => result ?? { ack: true });

  // A re-claimed row keeps the code of its first claim: its message is composed again with it.
  const composed: Ready<OutgoingNotice>[] = await Promise.all(
    inFlight.map((entry) =>
      entry.claimed.oneTimeCode === entry.draft.code
        ? entry.draft.composed
        : composeCaptured(email, { job: entry.ready.job, oneTimeCode: entry.claimed.oneTimeCode }, entry.draft.capture, { keep: entry.draft.keep }),
    ),
  );
  const sendStartedAt = path.now();
  for (const entry of inFlight) entry.draft.capture.sendStartedAt = sendStartedAt;
  const messages = composed.flatMap((one) => (one.ok ? [one.message] : []));
  if (messages.length > 0) emailBatchSize.observe({ transport: email.name }, messages.length);
  const answered = messages.length > 0 ? await email.sendBatch(messages, { signal: path.deps.stopping }) : [];
  const sendFinishedAt = path.now();
  path.checkpoint('after_send');
  // A notice that did not compose is its own refusal; the others take their answers in order.
  let next = 0;
  const outcomes = composed.map((one): ChannelOutcome => {
    if (!one.ok) return one.outcome;
    const outcome = answered[next];
    next += 1;
    // An answer short of this item says nothing about it: it may be out.
    return outcome ?? { kind: 'unknown', errorClass: 'batch_no_item_result', phase: 'response' };
  });
  // One call, one word for the breaker: it worked if any item was taken, else the call's first answer.
  if (!path.deps.stopping?.aborted && answered.length > 0)
    path.deps.breakers?.record(email.name, answered.find((outcome) => outcome.kind === 'accepted') ?? (answered[0] as ChannelOutcome));

  // Every commit started in this tick: the accepted ones share one statement (the coalesced commit).
  const finished = await Promise.all(
    inFlight.map((entry, position) =>
      finishWakeup(path, entry.ready, entry.claimed, { outcome: outcomes[position] as ChannelOutcome, capture: entry.draft.capture, sendFinishedAt }),
    ),
  );
  inFlight.forEach((entry, position) => {
    results[entry.index] = finished[position] ?? { ack: true };
  });
  return results.map((result) => result ?? { ack: true });
}

export type GathererOptions<I, O> = {
  /** The most items in one run. */
  size: number;
  /** How long the first item of a batch waits for more before the batch runs anyway. */
  waitMs: number;
  /** Items sharing any key never share a batch: the later one goes in the next. */
  keysOf: (item: I) => readonly string[];
  /** One batch; an answer per item, in order. A throw reaches every item's caller. */
  run: (items: readonly I[]) => Promise<readonly O[]>;
};

/**
 * Collects items into batches of at most `size` distinct keys: a batch runs when full, or
 * `waitMs` after its first item came. Batches run concurrently; each caller is answered from
 * its own batch only once that batch finished.
 */
export function createGatherer<I, O>({ size, waitMs, keysOf, run }: GathererOptions<I, O>): (item: I) => Promise<O> {
  type Waiting = { item: I; resolve: (value: O) => void; reject: (error: unknown) => void };
  let open: Waiting[] = [];
  let keys = new Set<string>();
  // Items whose key was already in the open batch: they start the next one.
  let held: Waiting[] = [];
  let timer: NodeJS.Timeout | null = null;

  const launch = (batch: Waiting[]) => {
    run(batch.map((waiting) => waiting.item)).then(
      (answers) => {
        batch.forEach((waiting, index) => {
          if (index < answers.length) waiting.resolve(answers[index] as O);
          else waiting.reject(new Error(`batch answered ${String(answers.length)} of ${String(batch.length)} items`));
        });
      },
      (error: unknown) => {
        for (const waiting of batch) waiting.reject(error);
      },
    );
  };

  const add = (waiting: Waiting) => {
    const own = keysOf(waiting.item);
    if (own.some((key) => keys.has(key))) {
      held.push(waiting);
      return;
    }
    for (const key of own) keys.add(key);
    open.push(waiting);
    if (open.length >= size) flush();
    else timer ??= setTimeout(flush, waitMs);
  };

  function flush() {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = open;
    open = [];
    keys = new Set();
    if (batch.length > 0) launch(batch);
    const again = held;
    held = [];
    for (const waiting of again) add(waiting);
  }

  return (item) => new Promise<O>((resolve, reject) => add({ item, resolve, reject }));
}
