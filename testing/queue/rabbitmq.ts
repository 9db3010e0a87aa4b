import amqp, { type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import type { RabbitConnect } from '@/lib/queue/rabbitmq';

/** Tests and the chaos harness give each run a queue of its own; this removes it (and its dead-letter pair) afterwards. */
export async function deleteRabbitQueue(url: string, queueName: string): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    await channel.deleteQueue(queueName);
    await channel.deleteQueue(`${queueName}.dead-letter`);
    await channel.deleteExchange(`${queueName}.dead-letter`);
  } finally {
    await connection.close();
  }
}

/**
 * A connection factory for `createRabbitQueue({ connect })` that lets a test break what the
 * adapter holds, the way the network or the broker would: the adapter itself has no test hooks.
 * It wraps amqplib's recovering connect and keeps each connection recovery hands to the adapter.
 */
export function breakableRabbitConnect(): {
  connect: RabbitConnect;
  /** Destroys the live connection's socket, as a network failure does; recovery reconnects. */
  dropConnection: () => void;
  /** A broker-side channel error on the consume channel only; the connection stays up. */
  breakConsumeChannel: () => void;
} {
  let current: ChannelModel | null = null;
  let consuming: Channel | null = null;
  const watch = (model: ChannelModel) => {
    current = model;
    const createChannel = model.createChannel.bind(model);
    model.createChannel = async (...args: Parameters<ChannelModel['createChannel']>) => {
      const channel = await createChannel(...args);
      const consume = channel.consume.bind(channel);
      channel.consume = (...consumeArgs: Parameters<Channel['consume']>) => {
        consuming = channel;
        return consume(...consumeArgs);
      };
      return channel;
    };
  };
  return {
    connect: (url, socketOptions) => {
      const setup = socketOptions.recovery.setup as ((model: ChannelModel) => Promise<void>) | undefined;
      return amqp.connect(url, {
        ...socketOptions,
        recovery: {
          ...socketOptions.recovery,
          setup: async (model: ChannelModel) => {
            watch(model);
            await setup?.(model);
          },
        },
      });
    },
    dropConnection: () => {
      const connection = (current as { connection?: unknown } | null)?.connection as { stream?: { destroy: (error?: Error) => void } } | undefined;
      connection?.stream?.destroy(new Error('simulated network failure'));
    },
    breakConsumeChannel: () => {
      // Acking a delivery tag the broker never gave out is a channel error (406): the broker
      // closes this channel and leaves the connection up.
      consuming?.ack({ fields: { deliveryTag: 999_999 } } as unknown as ConsumeMessage);
    },
  };
}
