import amqp from 'amqplib';

/** Tests and the chaos harness give each run a queue of its own; this removes it afterwards. */
export async function deleteRabbitQueue(url: string, queueName: string): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    await channel.deleteQueue(queueName);
  } finally {
    await connection.close();
  }
}
