import { randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage, type RecoveringChannelModel } from 'amqplib';
import type { Db } from '../../db/client';
import { createLogger, type Logger } from '../log';
import { startDispatcher, type DispatcherHandle } from './dispatcher';
import { DEFAULT_QUEUE_NAME, wakeupSchema } from './pgboss';
import type { ConsumeOptions, Delivery, HandlerResult, QueueAdapter, Wakeup, WakeupHandler } from './types';

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
  logger?: Logger;
};

export type RabbitQueue = QueueAdapter & {
  readonly name: 'rabbitmq';
  readonly queueName: string;
  /** Test hook: closes the live connection as a network failure would; recovery reconnects. */
  dropConnectionForTests(): Promise<void>;
  /** Test hook: provokes a broker-side error that closes only the consume channel. */
  breakConsumeChannelForTests(): Promise<void>;
};

type Live = { model: ChannelModel; publish: ConfirmChannel; consume: Channel | null; consumerTag: string | null; generation: number };

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function createRabbitQueue(options: RabbitQueueOptions): RabbitQueue {
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
  const log = options.logger ?? createLogger('queue-rabbitmq');
  const publishWaitMs = options.publishWaitMs ?? 10_000;
  let recovering: RecoveringChannelModel | null = null;
  let live: Live | null = null;
  let generation = 0;
  let handler: WakeupHandler | null = null;
  let concurrency = 1;
  let stopping = false;
  let dispatcher: DispatcherHandle | null = null;
  const waiters = new Set<() => void>();
  const inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();

  const assertQueue = (channel: Channel) =>
    channel.assertQueue(queueName, { durable: true, arguments: { 'x-queue-type': 'quorum' } });

  const startConsuming = async (channel: Channel, gen: number): Promise<string | null> => {
    if (!handler) return null;
    const run = handler;
    await channel.prefetch(concurrency);
    const reply = await channel.consume(queueName, (message) => {
      if (message) void onMessage(channel, gen, message, run);
    }, { noAck: false });
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
    await assertQueue(channel);
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
    const publish = await openPublishChannel(model, gen);
    const consumer = handler ? await openConsumeChannel(model, gen) : null;
    live = { model, publish, consume: consumer?.channel ?? null, consumerTag: consumer?.consumerTag ?? null, generation: gen };
    model.on('close', () => {
      if (live?.generation === gen) live = null;
    });
    for (const wake of waiters) wake();
  };

  const waitForLive = async (): Promise<Live> => {
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
      current.publish.sendToQueue(queueName, Buffer.from(JSON.stringify(data)), { persistent: true, messageId, contentType: 'application/json' }, (error: unknown) => {
        clearTimeout(timer);
        if (error) reject(error instanceof Error ? error : new Error('publish not confirmed'));
        else resolve();
      });
    });
    return messageId;
  };

  const settle = (channel: Channel, gen: number, message: ConsumeMessage, how: 'ack' | 'requeue') => {
    // A delivery from a dead channel was already requeued by the broker; acking it on a new
    // channel would name someone else's delivery tag.
    if (live?.generation !== gen) return;
    try {
      if (how === 'ack') channel.ack(message);
      else channel.nack(message, false, true);
    } catch (error) {
      log.warn({ err: errorMessage(error) }, 'could not settle delivery');
    }
  };

  const onMessage = async (channel: Channel, gen: number, message: ConsumeMessage, run: WakeupHandler) => {
    let parsed: ReturnType<typeof wakeupSchema.safeParse>;
    try {
      parsed = wakeupSchema.safeParse(JSON.parse(message.content.toString('utf8')));
    } catch {
      parsed = wakeupSchema.safeParse(null);
    }
    const messageId = typeof message.properties.messageId === 'string' ? message.properties.messageId : `${gen}:${message.fields.deliveryTag}`;
    if (!parsed.success) {
      log.error({ queueMessageId: messageId, queue: queueName }, 'wake-up payload invalid; discarded');
      settle(channel, gen, message, 'ack');
      return;
    }
    const wakeup = parsed.data;
    const controller = new AbortController();
    let settled = false;
    // RabbitMQ 3.10 has no per-queue consumer timeout; we give the same guarantee pg-boss
    // does: past the visibility window the wake-up goes back for another worker.
    const expiry = setTimeout(() => {
      if (settled) return;
      settled = true;
      controller.abort(new Error('visibility timeout expired'));
      settle(channel, gen, message, 'requeue');
    }, options.visibilityTimeoutMs);
    const previous = Number(message.properties.headers?.['x-delivery-count'] ?? 0);
    const delivery: Delivery = {
      wakeup,
      messageId,
      deliveryCount: (Number.isFinite(previous) ? previous : 0) + 1,
      signal: controller.signal,
    };
    const key = `${gen}:${message.fields.deliveryTag}`;
    const done = (async () => {
      try {
        const result: HandlerResult = await run(delivery);
        // For a future time this records nothing: the handler has already moved the row's
        // next_attempt_at and the dispatcher wakes it then.
        if ('wakeAt' in result) await publishOrDefer(wakeup, result.wakeAt);
      } catch (error) {
        log.warn({ queueMessageId: messageId, jobId: wakeup.jobId, err: errorMessage(error) }, 'wake-up handler failed');
        // Given up because this worker is stopping: hand it to another worker now. Any other
        // failure is acked: the row stays pending and the sweeper re-wakes it after the grace
        // window, a gentler retry than an immediate requeue loop.
        if (controller.signal.aborted && !settled) {
          settled = true;
          settle(channel, gen, message, 'requeue');
        }
      } finally {
        clearTimeout(expiry);
        if (!settled) {
          settled = true;
          settle(channel, gen, message, 'ack');
        }
      }
    })();
    inFlight.set(key, { controller, done });
    await done;
    inFlight.delete(key);
  };

  const publishOrDefer = async (wakeup: Wakeup, at?: Date): Promise<string | null> => {
    if (at && at.getTime() > Date.now()) return null;
    return publishNow(wakeup);
  };

  const adapter: RabbitQueue = {
    name: 'rabbitmq',
    durableDelays: false,
    queueName,
    async start() {
      if (recovering) return;
      stopping = false;
      recovering = await amqp.connect(options.url, {
        recovery: { setup, initialDelay: 200, maxDelay: 10_000, initialMaxRetries: 3 },
      });
      recovering.on('disconnect', (error: Error) => log.warn({ err: error.message }, 'RabbitMQ connection lost; reconnecting'));
      recovering.on('error', (error: Error) => log.warn({ err: error.message }, 'RabbitMQ error'));
      if (options.db) dispatcher = startDispatcher({ db: options.db, queue: adapter, every: options.dispatchEveryMs ?? 1_000, logger: log });
    },
    publish: publishOrDefer,
    async consume(next: WakeupHandler, consumeOptions: ConsumeOptions) {
      if (!recovering) throw new Error('queue not started');
      if (handler) throw new Error('already consuming');
      handler = next;
      concurrency = Math.max(1, consumeOptions.concurrency);
      const current = await waitForLive();
      const consumer = await openConsumeChannel(current.model, current.generation);
      current.consume = consumer.channel;
      current.consumerTag = consumer.consumerTag;
    },
    async stop() {
      if (!recovering) return;
      stopping = true;
      await dispatcher?.stop();
      dispatcher = null;
      const current = live;
      // Cancel first so no new deliveries arrive, but keep the channel open: in-flight
      // handlers still ack on it once their results are committed.
      if (current?.consume && current.consumerTag) await current.consume.cancel(current.consumerTag).catch(() => undefined);
      for (const entry of inFlight.values()) entry.controller.abort(new Error('worker stopping'));
      await Promise.allSettled([...inFlight.values()].map((entry) => entry.done));
      await recovering.close().catch(() => undefined);
      recovering = null;
      live = null;
      handler = null;
    },
    async breakConsumeChannelForTests() {
      const current = live;
      if (!current?.consume) return;
      // Acking a delivery tag the broker never gave out is a channel error (406): the broker
      // closes this channel and leaves the connection up.
      current.consume.ack({ fields: { deliveryTag: 999_999 } } as unknown as ConsumeMessage);
    },
    async dropConnectionForTests() {
      const current = live;
      if (!current) return;
      // A socket error is what a network failure looks like to the client.
      const connection = current.model.connection as unknown as { stream?: { destroy: (error?: Error) => void } };
      connection.stream?.destroy(new Error('simulated network failure'));
    },
  };
  return adapter;
}
