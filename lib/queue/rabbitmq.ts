import { randomUUID } from 'node:crypto';
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, RecoveringChannelModel, Replies, RecoveryOptions } from 'amqplib';
import type { Db } from '@/db/client';
import { createLogger, type Logger } from '@/lib/log';
import { startDispatcher, type DispatcherHandle } from './dispatcher';
import { createDeliveryLifecycle, wakeupSchema, type DeliveryLifecycle, type DeliveryTransport } from './delivery';
import { DEFAULT_QUEUE_NAME, type ConsumeOptions, type QueueAdapter, type Wakeup, type WakeupHandler } from './types';

export type RabbitQueueOptions = {
  url: string;
  /** A delivery held longer than this is aborted and requeued for another worker. */
  visibilityTimeoutMs: number;
  queueName?: string;
  /** With a database the adapter runs the dispatcher that publishes wake-ups once jobs are due. */
  db?: Db;
  dispatchEveryMs?: number;
  /** How long publish waits for a lost connection to come back before failing. */
  publishWaitMs?: number;
  /**
   * Connect on the first publish that reaches the broker rather than at start: a publish-only
   * process (the console) needs no broker to schedule, since publishInTransaction never
   * publishes and the workers' dispatcher does once the job is due.
   */
  connectOnDemand?: boolean;
  /** Deliveries of one wake-up before the queue dead-letters it (QUEUE_DELIVERY_LIMIT). */
  deliveryLimit?: number;
  /**
   * How long start() keeps trying a broker that refuses or drops the connection (QUEUE_CONNECT_WAIT):
   * a worker started while the broker restarts waits for it rather than exiting. A refused login
   * (403 ACCESS_REFUSED) is no restart and fails at once. Default 0: one try.
   */
  connectWaitMs?: number;
  /** How to open the recovering connection; amqplib's connect unless a test wraps it (testing/queue/rabbitmq.ts). */
  connect?: RabbitConnect;
  logger?: Logger;
};

export type RabbitConnect = (url: string, socketOptions: { recovery: RecoveryOptions }) => Promise<RecoveringChannelModel>;

export type RabbitQueue = QueueAdapter & {
  readonly name: 'rabbitmq';
  readonly queueName: string;
  /** Where wake-ups past the delivery limit go: an exchange and a queue of this name. */
  readonly deadLetterName: string;
};

export const DEFAULT_DELIVERY_LIMIT = 20;

/** Dead-lettered wake-ups are evidence only (the job row stays pending and is swept): kept a week. */
const DEAD_LETTER_TTL_MS = 7 * 86_400_000;

/**
 * The wake-up queue's arguments when this adapter creates it. A quorum queue (replicated; RabbitMQ
 * 4 removed classic mirroring) that dead-letters a wake-up returned `deliveryLimit` times: a
 * delivery that kills its worker or outlives the visibility window every time stops looping and
 * lands where it can be counted. RabbitMQ 4 would otherwise drop it at its default limit of 20,
 * and 3.x would loop on it forever. RabbitMQ refuses to redeclare a queue with other arguments
 * (PRECONDITION_FAILED), so an existing queue is used as it is: README, "Queues: the horizon and
 * dead letters", gives the policy that upgrades one declared by an earlier version.
 */
export function wakeupQueueArguments({ deadLetterName, deliveryLimit }: { deadLetterName: string; deliveryLimit: number }): Record<string, unknown> {
  return { 'x-queue-type': 'quorum', 'x-delivery-limit': deliveryLimit, 'x-dead-letter-exchange': deadLetterName };
}

/** A delivery as the transport holds it: the channel (and its generation) it must be settled on. */
type Received = { channel: Channel; gen: number; message: ConsumeMessage };

type Live = { model: ChannelModel; publish: ConfirmChannel; consume: Channel | null; consumerTag: string | null; generation: number };

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function createRabbitQueue(options: RabbitQueueOptions): RabbitQueue {
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
  const log = options.logger ?? createLogger('queue-rabbitmq');
  const publishWaitMs = options.publishWaitMs ?? 10_000;
  const deadLetterName = `${queueName}.dead-letter`;
  const deliveryLimit = options.deliveryLimit ?? DEFAULT_DELIVERY_LIMIT;
  // amqplib is loaded by the first connect: a worker on pg-boss never loads it (1.3 MB of its live heap, issue 27).
  const connectWith: RabbitConnect = options.connect ?? (async (url, socketOptions) => (await import('amqplib')).default.connect(url, socketOptions));
  let started = false;
  let connecting: Promise<RecoveringChannelModel> | null = null;
  let live: Live | null = null;
  let generation = 0;
  let lifecycle: DeliveryLifecycle<Received> | null = null;
  let concurrency = 1;
  let stopping = false;
  let dispatcher: DispatcherHandle | null = null;
  const waiters = new Set<() => void>();

  /** A channel for one passive check: the broker closes it when the queue is missing (404). */
  const probeQueue = async (model: ChannelModel, name: string): Promise<Replies.AssertQueue | null> => {
    const probe = await model.createChannel();
    probe.on('error', () => undefined);
    try {
      const info = await probe.checkQueue(name);
      await probe.close().catch(() => undefined);
      return info;
    } catch {
      return null;
    }
  };

  /**
   * The dead-letter exchange and queue (new objects: declared every time), then the wake-up queue
   * only when missing, with its limit and dead-letter exchange. Processes starting together may
   * both create it: the same arguments are no conflict.
   */
  const declareTopology = async (model: ChannelModel) => {
    const channel = await model.createChannel();
    channel.on('error', (error: Error) => log.warn({ err: error.message, queue: queueName }, 'could not declare the RabbitMQ queues'));
    try {
      await channel.assertExchange(deadLetterName, 'fanout', { durable: true });
      await channel.assertQueue(deadLetterName, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-message-ttl': DEAD_LETTER_TTL_MS } });
      await channel.bindQueue(deadLetterName, deadLetterName, '');
      if (!(await probeQueue(model, queueName))) {
        await channel.assertQueue(queueName, { durable: true, arguments: wakeupQueueArguments({ deadLetterName, deliveryLimit }) });
      }
    } finally {
      await channel.close().catch(() => undefined);
    }
  };

  const startConsuming = async (channel: Channel, gen: number): Promise<string | null> => {
    if (!lifecycle) return null;
    const current = lifecycle;
    await channel.prefetch(concurrency);
    const reply = await channel.consume(
      queueName,
      (message) => {
        if (message) void onMessage(channel, gen, message, current);
      },
      { noAck: false },
    );
    return reply.consumerTag;
  };

  /**
   * A channel can die while its connection lives (a broker-side channel error): rebuild it on
   * the same connection, or deliveries would silently stop. A dead connection is recovery's job.
   */
  const openPublishChannel = async (model: ChannelModel, gen: number): Promise<ConfirmChannel> => {
    const channel = await model.createConfirmChannel();
    channel.on('error', (error: Error) => log.warn({ err: error.message }, 'publish channel error'));
    channel.on('close', () => {
      const current = live;
      if (stopping || current?.generation !== gen || current.publish !== channel) return;
      void openPublishChannel(model, gen).then(
        (replacement) => {
          if (live?.generation === gen) live.publish = replacement;
        },
        (error: unknown) => log.warn({ err: errorMessage(error) }, 'could not reopen publish channel'),
      );
    });
    return channel;
  };

  const openConsumeChannel = async (model: ChannelModel, gen: number): Promise<{ channel: Channel; consumerTag: string | null }> => {
    const channel = await model.createChannel();
    channel.on('error', (error: Error) => log.warn({ err: error.message }, 'consume channel error'));
    channel.on('close', () => {
      const current = live;
      if (stopping || current?.generation !== gen || current.consume !== channel) return;
      log.warn({ queue: queueName }, 'consume channel closed; reopening');
      void openConsumeChannel(model, gen).then(
        (replacement) => {
          if (live?.generation !== gen) return;
          live.consume = replacement.channel;
          live.consumerTag = replacement.consumerTag;
        },
        (error: unknown) => log.warn({ err: errorMessage(error) }, 'could not reopen consume channel'),
      );
    });
    const consumerTag = await startConsuming(channel, gen);
    return { channel, consumerTag };
  };

  /** Runs on every (re)connection: channels die with their connection, so they are rebuilt here. */
  const setup = async (model: ChannelModel) => {
    generation += 1;
    const gen = generation;
    await declareTopology(model);
    const publish = await openPublishChannel(model, gen);
    const consumer = lifecycle ? await openConsumeChannel(model, gen) : null;
    live = { model, publish, consume: consumer?.channel ?? null, consumerTag: consumer?.consumerTag ?? null, generation: gen };
    model.on('close', () => {
      if (live?.generation === gen) live = null;
    });
    for (const wake of waiters) wake();
  };

  const connect = (): Promise<RecoveringChannelModel> => {
    connecting ??= connectWith(options.url, { recovery: { setup, initialDelay: 200, maxDelay: 10_000, initialMaxRetries: 3 } })
      .then((model) => {
        model.on('disconnect', (error: Error) => log.warn({ err: error.message }, 'RabbitMQ connection lost; reconnecting'));
        model.on('error', (error: Error) => log.warn({ err: error.message }, 'RabbitMQ error'));
        return model;
      })
      .catch((error: unknown) => {
        connecting = null;
        throw error;
      });
    return connecting;
  };

  /** connect(), again every second while the broker is unreachable, until connectWaitMs has passed. */
  const connectAtStart = async (): Promise<RecoveringChannelModel> => {
    const deadline = Date.now() + (options.connectWaitMs ?? 0);
    for (let tries = 1; ; tries += 1) {
      try {
        return await connect();
      } catch (error) {
        const refusedLogin = /ACCESS[-_]REFUSED|\b403\b/.test(errorMessage(error));
        if (refusedLogin || stopping || Date.now() >= deadline) throw error;
        log.warn({ err: errorMessage(error), tries, waitsUntil: new Date(deadline).toISOString() }, 'RabbitMQ not reachable at start; trying again');
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  };

  const waitForLive = async (): Promise<Live> => {
    if (!started) throw new Error('queue not started');
    await connect();
    const deadline = Date.now() + publishWaitMs;
    while (!live) {
      if (stopping) throw new Error('queue stopping');
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error('RabbitMQ connection not available');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(remaining, 250));
        waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      waiters.clear();
    }
    return live;
  };

  const publishNow = async (wakeup: Wakeup): Promise<string> => {
    const data = wakeupSchema.parse(wakeup);
    try {
      return await publishOnce(data);
    } catch (error) {
      // The connection died under this publish: one more try on the recovered one. If the
      // first did reach the broker, the second is a duplicate wake-up, which is harmless.
      log.warn({ jobId: data.jobId, err: errorMessage(error) }, 'publish failed; retrying once after reconnect');
      await new Promise((resolve) => setTimeout(resolve, 100));
      return publishOnce(data);
    }
  };

  const publishOnce = async (data: Wakeup): Promise<string> => {
    const current = await waitForLive();
    const messageId = randomUUID();
    await new Promise<void>((resolve, reject) => {
      // A channel that dies mid-publish may never confirm; the caller must hear about it.
      const timer = setTimeout(() => reject(new Error('publish not confirmed in time')), publishWaitMs);
      current.publish.sendToQueue(
        queueName,
        Buffer.from(JSON.stringify(data)),
        { persistent: true, messageId, contentType: 'application/json' },
        (error: unknown) => {
          clearTimeout(timer);
          if (error) reject(error instanceof Error ? error : new Error('publish not confirmed'));
          else resolve();
        },
      );
    });
    return messageId;
  };

  /**
   * `requeue` hands back a delivery this worker could not start (it is stopping): basic.nack,
   * which RabbitMQ 4.3+ does not count towards the delivery limit. `fail` returns one that
   * outlived its window: basic.reject, which every version counts (3.x and 4.0–4.2 count both).
   */
  const settle = ({ channel, gen, message }: Received, how: 'ack' | 'requeue' | 'fail') => {
    // A delivery from a dead channel was already requeued by the broker; acking it on a new
    // channel would name someone else's delivery tag.
    if (live?.generation !== gen) return;
    try {
      if (how === 'ack') channel.ack(message);
      else if (how === 'requeue') channel.nack(message, false, true);
      else channel.reject(message, true);
    } catch (error) {
      log.warn({ err: errorMessage(error) }, 'could not settle delivery');
    }
  };

  const transport: DeliveryTransport<Received> = {
    ack: async (received) => settle(received, 'ack'),
    discard: async (received) => settle(received, 'ack'),
    requeue: async (received) => settle(received, 'requeue'),
    // RabbitMQ 3.10 has no per-queue consumer timeout; we give the same guarantee pg-boss
    // does: past the visibility window the wake-up goes back for another worker.
    releaseExpired: async (received) => settle(received, 'fail'),
    // For a future time this records nothing: the handler has already moved the row's
    // next_attempt_at and the dispatcher wakes it then.
    publish: (wakeup, at) => publishOrDefer(wakeup, at),
  };

  const onMessage = (channel: Channel, gen: number, message: ConsumeMessage, current: DeliveryLifecycle<Received>) => {
    let payload: unknown = null;
    try {
      payload = JSON.parse(message.content.toString('utf8'));
    } catch {
      // Not JSON: the lifecycle refuses it like any other unreadable payload.
    }
    const messageId = typeof message.properties.messageId === 'string' ? message.properties.messageId : `${gen}:${message.fields.deliveryTag}`;
    const previous = Number(message.properties.headers?.['x-delivery-count'] ?? 0);
    return current.deliver({
      message: { channel, gen, message },
      payload,
      messageId,
      deliveryCount: (Number.isFinite(previous) ? previous : 0) + 1,
      visibilityMs: options.visibilityTimeoutMs,
    });
  };

  const publishOrDefer = async (wakeup: Wakeup, at?: Date): Promise<string | null> => {
    if (at && at.getTime() > Date.now()) return null;
    return publishNow(wakeup);
  };

  /** Ready messages in the dead-letter queue (nothing consumes it; they expire after a week). */
  const countDeadLettered = async (): Promise<number> => {
    const current = await waitForLive();
    const info = await probeQueue(current.model, deadLetterName);
    return info?.messageCount ?? 0;
  };

  const adapter: RabbitQueue = {
    name: 'rabbitmq',
    queueName,
    deadLetterName,
    // No durable delays: a wake-up enters the broker only once due.
    horizonMs: 0,
    async start() {
      if (started) return;
      started = true;
      stopping = false;
      try {
        if (!options.connectOnDemand) await connectAtStart();
      } catch (error) {
        started = false;
        throw error;
      }
      if (options.db) dispatcher = startDispatcher({ db: options.db, queue: adapter, every: options.dispatchEveryMs ?? 1_000, logger: log });
    },
    publish: publishOrDefer,
    // A broker publish cannot roll back with the transaction, and one sent before the commit
    // can reach a handler before the job row is visible. Nothing is published: the caller
    // leaves the row to the dispatcher or publishes after all (publishDueWakeup).
    publishInTransaction: async () => null,
    // A queue cannot be searched by job id; the sweeper's grace window is the guard.
    liveWakeupJobIds: async () => new Set(),
    deadLetteredCount: countDeadLettered,
    async health() {
      if (!started || stopping) return { ok: false, reason: stopping ? 'RabbitMQ queue is stopping' : 'RabbitMQ queue not started' };
      // A publisher connects on demand: no connection yet is its normal, ready state.
      if (live) return { ok: true };
      return options.connectOnDemand && !connecting ? { ok: true } : { ok: false, reason: 'RabbitMQ connection lost; reconnecting' };
    },
    async consume(next: WakeupHandler, consumeOptions: ConsumeOptions) {
      if (!started) throw new Error('queue not started');
      if (lifecycle) throw new Error('already consuming');
      lifecycle = createDeliveryLifecycle({ transport, handler: next, queueName, logger: log });
      concurrency = Math.max(1, consumeOptions.concurrency);
      const current = await waitForLive();
      const consumer = await openConsumeChannel(current.model, current.generation);
      current.consume = consumer.channel;
      current.consumerTag = consumer.consumerTag;
    },
    async stop() {
      if (!started) return;
      stopping = true;
      await dispatcher?.stop();
      dispatcher = null;
      const current = live;
      // Cancel first so no new deliveries arrive, but keep the channel open: in-flight
      // handlers still ack on it once their results are committed.
      if (current?.consume && current.consumerTag) await current.consume.cancel(current.consumerTag).catch(() => undefined);
      await lifecycle?.stop();
      const model = await connecting?.catch(() => null);
      await model?.close().catch(() => undefined);
      connecting = null;
      live = null;
      lifecycle = null;
      started = false;
    },
  };
  return adapter;
}
