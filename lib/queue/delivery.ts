import { z } from 'zod';
import { text } from '@/lib/api/fields';
import type { Logger } from '@/lib/log';
import { recordError, SpanKind, withSpan, type Span } from '@/lib/telemetry/tracing';
import type { Delivery, HandlerResult, Wakeup, WakeupHandler } from './types';

/**
 * One delivery's life, the same on every queue: parse the payload, hand it to the handler with
 * a signal that aborts at the visibility deadline or on stop, and settle it only after the
 * handler returned — for the send path that is after its result commit (ARCHITECTURE.md, "The
 * life of a notice", steps 4–8), so a crash anywhere before leaves the wake-up to be delivered
 * again. The adapters only move messages (`DeliveryTransport`).
 */

export const wakeupSchema = z.object({
  jobId: z.uuid(),
  // NUL could never be written to an attempt row: refuse it here, as a permanent failure.
  batchId: text().min(1).max(200).optional(),
});

/** What an adapter does with one broker message; `M` is its own handle on it. */
export type DeliveryTransport<M> = {
  /** Settles the delivery for good. `expired` turns true if the deadline passes while the ack waits (pg-boss batches them). */
  ack(message: M, lease: { expired: () => boolean }): Promise<void>;
  /** Settles a payload no handler can ever read. */
  discard(message: M): Promise<void>;
  /** Hands the delivery back for another worker (this one is stopping). */
  requeue(message: M): Promise<void>;
  /**
   * The visibility deadline passed with the handler still running. pg-boss does nothing: its
   * maintenance moves the wake-up back itself. RabbitMQ requeues it.
   */
  releaseExpired(message: M): Promise<void>;
  /** Publishes the wake-up the handler asked for (`wakeAt`). */
  publish(wakeup: Wakeup, at: Date): Promise<string | null>;
};

export type IncomingDelivery<M> = {
  message: M;
  /** The decoded body (null when it was not JSON); parsed here. */
  payload: unknown;
  messageId: string;
  deliveryCount?: number;
  visibilityMs: number;
};

/** Starts a timer and returns its cancel; injected so the deadline is tested without waiting. */
export type StartTimer = (ms: number, fire: () => void) => () => void;

const startRealTimer: StartTimer = (ms, fire) => {
  const timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
};

export type Settlement = 'ack' | 'requeue' | 'none';

/**
 * How a delivery ends, decided from how its handler ended.
 *
 * - Past the deadline: nothing. The wake-up was already released and may be another worker's
 *   by now; settling it could cut that delivery short, and a handler that gave up on the abort
 *   has not done the work. At worst one more, harmless, delivery.
 * - Aborted because this worker is stopping and the handler gave up: requeue, so another
 *   worker takes it now rather than after a deadline.
 * - The handler threw for any other reason: **ack**, and leave the job to the sweeper. The job
 *   row is the durable obligation, not the message: the row is still `pending` and due, and
 *   `lib/jobs/sweeper.ts` re-publishes it once its last wake-up is older than twice the
 *   visibility window. A retry after 5 s (pg-boss's, before this module) buys a faster second
 *   try for a one-off error, but a handler throws when its statements fail — the database is
 *   down or struggling — and then every worker retrying every in-flight wake-up every 5 s is
 *   load on that database, twenty times per message before pg-boss gives up and the sweeper
 *   starts over anyway. RabbitMQ cannot delay a requeue at all (an immediate loop). The sweep
 *   is bounded (one batch per pass, `skip locked`), the same on both queues, and a wake-up
 *   that always throws costs one attempt per grace window, not a loop; minutes of delay
 *   against send windows of hours.
 * - Returned: ack.
 */
export function decideSettlement({ threw, expired, stopping }: { threw: boolean; expired: boolean; stopping: boolean }): Settlement {
  if (expired) return 'none';
  if (threw && stopping) return 'requeue';
  return 'ack';
}

export type DeliveryLifecycle<M> = {
  deliver(incoming: IncomingDelivery<M>): Promise<void>;
  /** Deliveries whose handler or settlement is still running. */
  readonly inFlight: number;
  /** Resolves when any in-flight delivery finishes (at once when none is in flight). */
  nextSettled(): Promise<void>;
  /** Aborts every in-flight handler (and any that starts later) and waits for all to settle. */
  stop(): Promise<void>;
};

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function createDeliveryLifecycle<M>(params: {
  transport: DeliveryTransport<M>;
  handler: WakeupHandler;
  queueName: string;
  logger: Logger;
  startTimer?: StartTimer;
}): DeliveryLifecycle<M> {
  const { transport, handler, queueName, logger: log } = params;
  const startTimer = params.startTimer ?? startRealTimer;
  const running = new Map<Promise<void>, AbortController>();
  let stopping = false;

  const settle = async (incoming: IncomingDelivery<M>, wakeup: Wakeup, controller: AbortController, span: Span): Promise<void> => {
    let expired = false;
    const cancelExpiry = startTimer(incoming.visibilityMs, () => {
      expired = true;
      span.addEvent('queue.visibility_expired');
      controller.abort(new Error('visibility timeout expired'));
      transport
        .releaseExpired(incoming.message)
        .catch((error: unknown) => log.warn({ queueMessageId: incoming.messageId, err: errorMessage(error) }, 'could not release an expired delivery'));
    });
    try {
      const delivery: Delivery = { wakeup, messageId: incoming.messageId, deliveryCount: incoming.deliveryCount, signal: controller.signal };
      let threw = false;
      try {
        const result: HandlerResult = await handler(delivery);
        if ('wakeAt' in result) await transport.publish(wakeup, result.wakeAt);
      } catch (error) {
        threw = true;
        recordError(span, error);
        log.warn({ queueMessageId: incoming.messageId, jobId: wakeup.jobId, err: errorMessage(error) }, 'wake-up handler failed');
      }
      const settlement = decideSettlement({ threw, expired, stopping });
      span.setAttribute('notice.settlement', settlement);
      if (settlement === 'ack')
        await withSpan('queue.settle', { 'notice.settlement': 'ack' }, () => transport.ack(incoming.message, { expired: () => expired }));
      else if (settlement === 'requeue') await withSpan('queue.settle', { 'notice.settlement': 'requeue' }, () => transport.requeue(incoming.message));
    } finally {
      // Only now: a batched ack still waiting must hear that its deadline passed.
      cancelExpiry();
    }
  };

  const deliver = async (incoming: IncomingDelivery<M>): Promise<void> => {
    const parsed = wakeupSchema.safeParse(incoming.payload);
    if (!parsed.success) {
      // A payload we cannot read never becomes readable: a permanent failure, not a retry.
      log.error({ queueMessageId: incoming.messageId, queue: queueName }, 'wake-up payload invalid; discarded');
      await transport.discard(incoming.message);
      return;
    }
    const controller = new AbortController();
    if (stopping) controller.abort(new Error('worker stopping'));
    // One span per delivery, its own trace, ending at the settlement; the handler links it to the
    // span that scheduled the job (lib/jobs/notice-spans.ts traceWakeup).
    const attributes = { 'notice.job_id': parsed.data.jobId, 'messaging.destination.name': queueName, 'messaging.message.id': incoming.messageId };
    const traced = withSpan('notice.wakeup', attributes, (span) => settle(incoming, parsed.data, controller, span), { kind: SpanKind.CONSUMER, root: true });
    const done = traced.catch((error: unknown) => {
      log.error({ queueMessageId: incoming.messageId, err: errorMessage(error) }, 'wake-up completion failed');
    });
    running.set(done, controller);
    try {
      await done;
    } finally {
      running.delete(done);
    }
  };

  return {
    deliver,
    get inFlight() {
      return running.size;
    },
    async nextSettled() {
      if (running.size === 0) return;
      await Promise.race(running.keys());
    },
    async stop() {
      stopping = true;
      for (const controller of running.values()) controller.abort(new Error('worker stopping'));
      await Promise.allSettled([...running.keys()]);
    },
  };
}
