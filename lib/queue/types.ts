import type { DbOrTx } from '@/db/client';

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

/** Whether the transport can carry wake-ups now; a reason for a person when it cannot. */
export type QueueHealth = { ok: true } | { ok: false; reason: string };

export type ConsumeOptions = {
  concurrency: number;
};

export const DEFAULT_QUEUE_NAME = 'notice-wakeup';

/**
 * A queue's transport. Every method exists on every adapter; where a transport cannot do
 * something it does the honest equivalent, so callers never ask which queue they have. The
 * delivery lifecycle (parse, deadline, abort, settle after the handler) is `./delivery.ts`.
 */
export type QueueAdapter = {
  readonly name: 'pgboss' | 'rabbitmq';
  /**
   * The hot-queue horizon (./horizon.ts): a wake-up due later than this from now is not given to
   * the transport; the job row holds it and the dispatcher publishes it once it comes within.
   * pg-boss: QUEUE_HORIZON. RabbitMQ: 0, it holds no delays at all.
   */
  readonly horizonMs: number;
  start(): Promise<void>;
  /**
   * Publishes a wake-up due at `at` (now when omitted). Safe to call twice for one job.
   * Null when nothing was recorded: RabbitMQ keeps no delays, so for a future `at` the job
   * row's next_attempt_at holds it and the dispatcher publishes the wake-up once due.
   */
  publish(wakeup: Wakeup, at?: Date): Promise<string | null>;
  /**
   * Publishes inside the caller's transaction, so a job row and its wake-up commit or roll
   * back together (pg-boss: the queue is in the database). Null when the transport cannot
   * (RabbitMQ): nothing was published, and the caller either leaves the row to the
   * dispatcher or publishes with `publishDueWakeup`.
   */
  publishInTransaction(tx: DbOrTx, wakeup: Wakeup, at?: Date): Promise<string | null>;
  /**
   * The jobs among these that still have a wake-up in the queue; the sweeper skips them.
   * Empty where the queue cannot be searched by job (RabbitMQ): the sweeper's grace window is
   * then the only guard, and a duplicate wake-up is harmless.
   */
  liveWakeupJobIds(jobIds: readonly string[]): Promise<Set<string>>;
  consume(handler: WakeupHandler, options: ConsumeOptions): Promise<void>;
  /** Stops taking new deliveries, waits for in-flight handlers, closes connections. */
  stop(): Promise<void>;
  /**
   * The connection's state, for a readiness check: pg-boss asks its own pool for a round trip,
   * RabbitMQ reports whether its connection is up (a publisher that connects on demand is ready
   * before its first connection).
   */
  health(): Promise<QueueHealth>;
  /**
   * Wake-ups the transport gave up on: RabbitMQ's dead-letter queue (past the delivery limit),
   * pg-boss's failed wake-ups (past their retries). Their jobs stay pending; the sweeper wakes
   * them again. Shown as a gauge and on the console's overview.
   */
  deadLetteredCount(): Promise<number>;
};
