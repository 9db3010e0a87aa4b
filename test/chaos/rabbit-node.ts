import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort } from '@/db/embedded';

/**
 * A RabbitMQ node of its own for the broker-restart chaos run (Debian's `rabbitmq-server`),
 * so the run may crash and restart a broker without touching the machine's shared one: its own
 * node name, AMQP and distribution ports, data and log directories, and Erlang cookie (HOME).
 * Its data directory outlives a restart, so the quorum queue comes back with what it held.
 */

export type RabbitNode = {
  /** amqp://guest:guest@127.0.0.1:<port> (guest may connect from loopback). */
  url: string;
  /** SIGKILL (a crash: no goodbye to clients) or SIGTERM (a clean stop, as `systemctl restart` does), then wait for the exit. */
  stop: (how: 'kill' | 'term') => Promise<void>;
  /** Start again on the same data directory, waiting until it accepts AMQP connections. */
  start: () => Promise<void>;
  /** Stop for good and remove its directory. */
  destroy: () => Promise<void>;
};

export const rabbitmqServer = process.env.RABBITMQ_SERVER_BIN ?? '/usr/lib/rabbitmq/bin/rabbitmq-server';

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startRabbitNode({ log }: { log: (line: string) => void }): Promise<RabbitNode> {
  if (!existsSync(rabbitmqServer)) throw new Error(`${rabbitmqServer} is missing: install Debian's rabbitmq-server (or set RABBITMQ_SERVER_BIN)`);
  const base = await mkdtemp(path.join(os.tmpdir(), 'notice-ledger-rabbit-'));
  await chmod(base, 0o755);
  await mkdir(path.join(base, 'log'));
  await writeFile(path.join(base, 'enabled_plugins'), '[].\n');
  await writeFile(path.join(base, 'rabbitmq-env.conf'), '');
  const [amqpPort, distPort] = [await freePort(), await freePort()];
  const name = `notice-ledger-chaos-${String(amqpPort)}@localhost`;
  const env: NodeJS.ProcessEnv = {
    NODE_ENV: process.env.NODE_ENV,
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: base,
    RABBITMQ_NODENAME: name,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(amqpPort),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: path.join(base, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(base, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(base, 'enabled_plugins'),
    RABBITMQ_CONF_ENV_FILE: path.join(base, 'rabbitmq-env.conf'),
    RABBITMQ_CONFIG_FILE: path.join(base, 'rabbitmq'),
    RABBITMQ_ADVANCED_CONFIG_FILE: path.join(base, 'advanced.config'),
    RABBITMQ_PID_FILE: path.join(base, 'rabbitmq.pid'),
  };
  let child: ChildProcess | null = null;
  let output = '';

  const start = async () => {
    const started = Date.now();
    // Its own process group: a kill reaches the Erlang VM and its port programs, not this process.
    const spawned = spawn(rabbitmqServer, [], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child = spawned;
    spawned.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-8_000)));
    spawned.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-8_000)));
    while (!(await accepts(amqpPort))) {
      if (spawned.exitCode !== null || spawned.signalCode !== null) throw new Error(`RabbitMQ node ${name} exited before it accepted connections:\n${output}`);
      if (Date.now() - started > 60_000) throw new Error(`RabbitMQ node ${name} did not accept connections in 60 s:\n${output}`);
      await delay(100);
    }
    log(`RabbitMQ node ${name} accepts connections on ${String(amqpPort)} (${String(Date.now() - started)} ms)`);
  };

  const stop = async (how: 'kill' | 'term') => {
    const running = child;
    if (!running?.pid || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    process.kill(-running.pid, how === 'kill' ? 'SIGKILL' : 'SIGTERM');
    await exited;
    // The VM may outlive the script's shell for a moment: wait until the port is free.
    while (await accepts(amqpPort)) await delay(50);
    child = null;
  };

  await start();
  return {
    url: `amqp://guest:guest@127.0.0.1:${String(amqpPort)}`,
    stop,
    start,
    destroy: async () => {
      await stop('kill').catch(() => undefined);
      await rm(base, { recursive: true, force: true });
    },
  };
}
