import type { DbOrTx } from '../../db/client';

/**
 * The queue only wakes work up; `reminder_jobs` is the truth. Every adapter delivers
 * at-least-once: a handler may see the same wake-up twice, early, or after another worker
 * already finished it, and must be correct anyway (the send path is).
 */

export type Wakeup = {
  jobId: string;
  /** Set for replay traffic; never part of the notice key. */
  batchId?: string;
};

export type Delivery = {
  wakeup: Wakeup;
  /** The broker's id for this delivery (pg-boss job id, AMQP delivery tag/message id). */
  messageId: string;
  /** How many times the broker has handed this message out (1 on first delivery), if it knows. */
  deliveryCount?: number;
  /** Aborted when the broker considers the delivery expired or the worker is stopping. */
  signal: AbortSignal;
};

/** What the handler decided; the adapter acts on it only after the handler's commit. */
export type HandlerResult =
  | { ack: true }
  /** Wake the job up again at `at` (early wake-up, quiet hours, retry with backoff). */
  | { ack: true; wakeAt: Date };

export type WakeupHandler = (delivery: Delivery) => Promise<HandlerResult>;

export type ConsumeOptions = {
  concurrency: number;
};

export type QueueAdapter = {
  readonly name: 'pgboss' | 'rabbitmq';
  start(): Promise<void>;
  /** Publishes a wake-up due at `at` (now when omitted). Safe to call twice for one job. */
  publish(wakeup: Wakeup, at?: Date): Promise<string | null>;
  consume(handler: WakeupHandler, options: ConsumeOptions): Promise<void>;
  /** Stops taking new deliveries, waits for in-flight handlers, closes connections. */
  stop(): Promise<void>;
  /**
   * Present when the queue lives in the database (pg-boss): publishes inside the caller's
   * transaction, so a job row and its wake-up commit or roll back together.
   */
  publishInTransaction?(tx: DbOrTx, wakeup: Wakeup, at?: Date): Promise<string | null>;
  /** Present when the adapter can see its own backlog: the jobs among these that still have a live wake-up. */
  liveWakeupJobIds?(jobIds: readonly string[]): Promise<Set<string>>;
  /**
   * False when `publish(…, future)` records nothing (RabbitMQ): the job row's next_attempt_at
   * holds the delay and a dispatcher publishes the wake-up once it is due.
   */
  readonly durableDelays: boolean;
};
