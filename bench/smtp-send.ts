import path from 'node:path';
import { createMailTransport as currentTransport } from '@/lib/mail/transport';
import { startSmtpSink } from '@/testing/smtp-sink';
import { startNoopPeer } from './noop-peer';
import { percentile, printTable } from './support';

/**
 * The SMTP leg alone, no database: OUR transport (lib/mail/transport.ts) sending rendered-size
 * notices at BENCH_CONCURRENCY in flight to a local peer, one connection per message vs a pool
 * of `concurrency` connections, to the no-op peer and to testing/smtp-sink.ts. Interleaved rounds.
 * BENCH_BASE_TREE=<dir> adds the pooled transport of another source tree (before/after).
 */
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const html = `<p>${'Your Coffee Box renews soon. '.repeat(20)}</p>`;
const text = 'Your Coffee Box renews soon. '.repeat(20);

type CreateTransport = typeof currentTransport;
const baseTree = process.env.BENCH_BASE_TREE;
const baseTransport: CreateTransport | null = baseTree
  ? ((await import(path.resolve(baseTree, 'lib/mail/transport.ts'))) as { createMailTransport: CreateTransport }).createMailTransport
  : null;

async function run(
  peerKind: 'noop' | 'sink',
  maxConnections: number,
  createMailTransport: CreateTransport = currentTransport,
): Promise<{ perSecond: number; p50: number; p99: number }> {
  const noop = peerKind === 'noop' ? await startNoopPeer() : null;
  const sink = peerKind === 'sink' ? await startSmtpSink() : null;
  const url = noop?.url ?? sink?.url ?? '';
  const transport = createMailTransport({ smtpUrl: url, timeoutMs: 10_000, from: 'bench@example.org', messageIdDomain: 'example.org', maxConnections });
  const latencies: number[] = [];
  let n = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < deadline) {
          n += 1;
          const key = n.toString(16).padStart(8, '0').repeat(8);
          const t0 = performance.now();
          const outcome = await transport.send({ noticeKey: key, to: `r${String(n)}@d${String(n % 200)}.example`, subject: 'Your renewal', text, html });
          if (outcome.kind !== 'accepted') throw new Error(`send failed: ${JSON.stringify(outcome)}`);
          latencies.push(performance.now() - t0);
        }
      }),
    );
  } finally {
    transport.close();
    await noop?.stop();
    await sink?.stop();
  }
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / ((performance.now() - started) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

const variants: Array<{ label: string; peer: 'noop' | 'sink'; pool: number; create?: CreateTransport }> = [
  ...(baseTransport
    ? [{ label: `${String(baseTree)}: pool of ${String(concurrency)} → no-op peer`, peer: 'noop' as const, pool: concurrency, create: baseTransport }]
    : []),
  { label: 'per-message connection → no-op peer', peer: 'noop' as const, pool: 0 },
  { label: `pool of ${String(concurrency)} → no-op peer`, peer: 'noop' as const, pool: concurrency },
  { label: 'per-message connection → sink', peer: 'sink' as const, pool: 0 },
  { label: `pool of ${String(concurrency)} → sink`, peer: 'sink' as const, pool: concurrency },
];
const results = new Map<string, Array<{ perSecond: number; p50: number; p99: number }>>(variants.map((v) => [v.label, []]));
for (let round = 0; round < rounds; round += 1) for (const v of variants) results.get(v.label)?.push(await run(v.peer, v.pool, v.create));
printTable(
  `SMTP leg alone: ${String(concurrency)} in flight, ${String(seconds)} s × ${String(rounds)} rounds (best round)`,
  variants.map((v) => {
    const best = (results.get(v.label) ?? []).reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
    return { variant: v.label, 'sends/s': Math.round(best.perSecond), 'p50 ms': best.p50.toFixed(1), 'p99 ms': best.p99.toFixed(1) };
  }),
);
