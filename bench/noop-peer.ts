import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';

/**
 * The "no-op local peer": smtp-server that reads each message, keeps only its
 * correlation (to count duplicates) and answers 250. Unlike testing/smtp-sink.ts it does not keep
 * or parse whole messages, so the peer is not what the benchmark measures.
 */
export type NoopPeer = { url: string; received: () => number; duplicates: () => number; stop: () => Promise<void> };

const CORRELATION = /^x-notice-correlation:\s*([0-9a-f]{32})/im;

export async function startNoopPeer(): Promise<NoopPeer> {
  const seen = new Map<string, number>();
  let received = 0;
  let queued = 0;
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    hideSTARTTLS: true,
    closeTimeout: 1_000,
    onData(stream: SMTPServerDataStream, _session, callback) {
      let head = '';
      stream.on('data', (chunk: Buffer) => {
        // Headers come first; 4 KB is more than ours take.
        if (head.length < 4_096) head += chunk.toString('latin1');
      });
      stream.on('end', () => {
        received += 1;
        const correlation = CORRELATION.exec(head)?.[1] ?? `missing-${String(received)}`;
        seen.set(correlation, (seen.get(correlation) ?? 0) + 1);
        queued += 1;
        callback(null, `Ok: queued as N${queued.toString(16).toUpperCase()}`);
      });
    },
  });
  server.on('error', () => undefined);
  // smtp-server writes a reply in pieces; with Nagle the rest waits for the client's delayed
  // ACK (≈40 ms on Linux) on every message. A real relay is not the thing measured here.
  server.server.on('connection', (socket: Socket) => socket.setNoDelay(true));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `smtp://127.0.0.1:${String(port)}`,
    received: () => received,
    duplicates: () => [...seen.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
