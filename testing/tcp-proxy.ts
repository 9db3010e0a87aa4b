import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL, as a Kubernetes Service or HAProxy stands in front of the
 * current primary (node-postgres takes no multi-host connection string). The failover drill
 * repoints it at the promoted standby (`retarget`); the lost-commit-answer tests make it cut one
 * connection at the worst moment (`cutNext`): when the client sends a chunk that matches,
 * either before forwarding it (the statement never ran) or after forwarding it and receiving the
 * server's answer, which the client then never gets (the statement committed, the client cannot
 * know).
 */

export type CutMode = 'before-forward' | 'after-answer';

export type TcpProxy = {
  port: number;
  url: (databaseUrl: string) => string;
  /** New connections go to this port from now on; open ones are left to die with their server. */
  retarget: (port: number) => void;
  /** The next client chunk that contains `needle` cuts its connection, as `mode` says. Resolves when it was cut. */
  cutNext: (needle: string, mode: CutMode) => Promise<void>;
  /** Closes every open connection (both sides), as a dead primary's would be. */
  dropAll: () => void;
  connections: () => number;
  stop: () => Promise<void>;
};

export async function startTcpProxy({ targetPort, host = '127.0.0.1' }: { targetPort: number; host?: string }): Promise<TcpProxy> {
  let target = targetPort;
  const open = new Set<{ client: net.Socket; server: net.Socket }>();
  let cut: { needle: Buffer; mode: CutMode; done: () => void } | null = null;

  const server = net.createServer((client) => {
    const upstream = net.connect({ host, port: target });
    const pair = { client, server: upstream };
    open.add(pair);
    let swallowNextAnswer: (() => void) | null = null;
    const close = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
    client.on('data', (chunk: Buffer) => {
      const pending = cut;
      if (pending && chunk.includes(pending.needle)) {
        cut = null;
        if (pending.mode === 'before-forward') {
          close();
          pending.done();
          return;
        }
        swallowNextAnswer = () => {
          close();
          pending.done();
        };
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (swallowNextAnswer) {
        // The server answered (ReadyForQuery comes in the same flush as the result): it is done; the client never hears it.
        const finish = swallowNextAnswer;
        swallowNextAnswer = null;
        finish();
        return;
      }
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    url: (databaseUrl) => {
      const parsed = new URL(databaseUrl);
      parsed.hostname = host;
      parsed.port = String(port);
      return parsed.toString();
    },
    retarget: (next) => {
      target = next;
    },
    cutNext: (needle, mode) =>
      new Promise<void>((resolve) => {
        cut = { needle: Buffer.from(needle), mode, done: resolve };
      }),
    dropAll: () => {
      for (const pair of [...open]) {
        pair.client.destroy();
        pair.server.destroy();
        open.delete(pair);
      }
    },
    connections: () => open.size,
    stop: async () => {
      for (const pair of [...open]) {
        pair.client.destroy();
        pair.server.destroy();
      }
      open.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
