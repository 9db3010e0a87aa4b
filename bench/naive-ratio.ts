import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startTwilioPeer } from '@/testing/twilio-peer';
import { measureNaivePeer, type NaiveRun } from './naive-peer';
import { printTable, recordTargets } from './support';
import { runVariant, twilioEnv } from './worker-ab';
import { measureWorker } from './worker-e2e';

/**
 * Issue 27 item 6: the worker against the naive peer (bench/naive-peer.ts: pg-boss `work()` and
 * one send per job, no ledger) on the same transport, the same database and the same kind of
 * local peer, in one run; the ratio and each process's CPU per notice.
 *
 * - SMTP: the worker (its best configuration when `npm run bench:worker` passes it, else 1 × 32)
 *   against nodemailer's pool, both to bench/noop-peer.ts;
 * - Postmark: the worker on its batched path (`POST /email/batch`, EMAIL_BATCH_SIZE's default, at
 *   BENCH_HTTP_CONCURRENCY handlers, 256 by default: the naive peer's 4 × work(64) has as many
 *   in flight, and a worker needs several batches in flight so that one is composed and claimed
 *   while another is out: at 64 handlers a batch of 50 held nearly all of them and the batches
 *   ran one after another, at about 80 % of the rate at 256 in one bench/worker-ab.ts run)
 *   against one SDK `sendEmail` per job, both to testing/postmark-peer.ts;
 * - SendGrid: the worker batched likewise (one Mail Send, a personalization per notice) against
 *   one `@sendgrid/client` Mail Send per job, both to testing/sendgrid-peer.ts.
 *
 * Alone: `npx tsx bench/naive-ratio.ts` (BENCH_NOTICES, default 2 000). The target is ≥ 2× on
 * each line, with 0 duplicates at the peer.
 */

const root = path.resolve(import.meta.dirname, '..');

/** One process's figures in one round. */
type Side = { perSecond: number; cpuMs: number; duplicates: number; slots: string };
type Line = { transport: string; worker: () => Promise<Side>; naive: () => Promise<Side> };

function fromNaive(run: NaiveRun): Side {
  return { perSecond: run.perSecond, cpuMs: run.cpu.workerMs, duplicates: run.duplicates, slots: `${String(run.workers)} × work(${String(run.batchSize)})` };
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const rounded = (values: number[]) => values.map((value) => String(Math.round(value))).join('/');

/**
 * Each line's worker and naive peer run back to back, round after round (BENCH_NAIVE_ROUNDS,
 * default 2), the order swapped every round: the machine's speed drifts up to 2× between
 * hours, and a ratio taken from runs minutes apart measured the drift as much as the code. The
 * ratio printed is the mean of each round's ratio.
 */
export async function measureAgainstNaive(
  url: string,
  { notices, postmaster, smtpConfig }: { notices: number; postmaster: number | null; smtpConfig?: { processes: number; concurrency: number } },
): Promise<{ postmark: { perSecond: number; concurrency: number } }> {
  const concurrency = Number(process.env.BENCH_HTTP_CONCURRENCY ?? 256);
  const rounds = Math.max(1, Number(process.env.BENCH_NAIVE_ROUNDS ?? 2));
  const smtp = smtpConfig ?? { processes: 1, concurrency: 32 };
  const twilio = await startTwilioPeer();
  const batched = (peer: 'postmark' | 'sendgrid') => async (): Promise<Side> => {
    const run = await runVariant(url, { label: `batched-${peer}`, root, peer, env: {} }, { processes: 1, concurrency, notices, baseEnv: twilioEnv(twilio) });
    return { perSecond: run.perSecond, cpuMs: run.cpuMsPerNotice, duplicates: run.duplicates, slots: `1×${String(concurrency)}` };
  };
  const lines: Line[] = [
    {
      transport: 'SMTP → no-op peer',
      worker: async () => {
        const run = await measureWorker(url, { ...smtp, notices, postmaster });
        return { perSecond: run.perSecond, cpuMs: run.cpu.workerMs, duplicates: run.duplicates, slots: `${String(run.processes)}×${String(run.concurrency)}` };
      },
      naive: async () => fromNaive(await measureNaivePeer(url, { transport: 'smtp', notices, postmaster })),
    },
    {
      transport: 'Postmark → postmark peer (worker batched, naive one sendEmail per job)',
      worker: batched('postmark'),
      naive: async () => fromNaive(await measureNaivePeer(url, { transport: 'postmark', notices, postmaster })),
    },
    {
      transport: 'SendGrid → sendgrid peer (worker batched, naive one Mail Send per job)',
      worker: batched('sendgrid'),
      naive: async () => fromNaive(await measureNaivePeer(url, { transport: 'sendgrid', notices, postmaster })),
    },
  ];
  const samples = lines.map(() => ({ worker: [] as Side[], naive: [] as Side[] }));
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const [index, line] of lines.entries()) {
        const sample = samples[index] ?? { worker: [], naive: [] };
        if (round % 2 === 0) {
          sample.worker.push(await line.worker());
          sample.naive.push(await line.naive());
        } else {
          sample.naive.push(await line.naive());
          sample.worker.push(await line.worker());
        }
      }
    }
  } finally {
    await twilio.stop();
  }

  const ratios = (worker: Side[], naive: Side[]) => worker.map((side, round) => side.perSecond / (naive[round]?.perSecond ?? Number.NaN));
  const ratioText = (values: number[]) => `${mean(values).toFixed(2)}× (${values.map((value) => value.toFixed(2)).join(', ')})`;
  const rows = lines.map((line, index) => {
    const { worker, naive } = samples[index] ?? { worker: [], naive: [] };
    return {
      transport: line.transport,
      worker: `${rounded(worker.map((side) => side.perSecond))}/s (${worker[0]?.slots ?? ''})`,
      naive: `${rounded(naive.map((side) => side.perSecond))}/s (${naive[0]?.slots ?? ''})`,
      ratio: ratioText(ratios(worker, naive)),
      'worker CPU ms/notice': mean(worker.map((side) => side.cpuMs)).toFixed(2),
      'naive CPU ms/notice': mean(naive.map((side) => side.cpuMs)).toFixed(2),
      duplicates: `${String(worker.reduce((sum, side) => sum + side.duplicates, 0))} / ${String(naive.reduce((sum, side) => sum + side.duplicates, 0))}`,
    };
  });
  const [smtpSample, postmarkSample, sendgridSample] = samples;
  const postmarkOverSmtp = ratios(postmarkSample?.worker ?? [], smtpSample?.naive ?? []);
  rows.push({
    transport: 'worker batched on Postmark ÷ naive SMTP',
    worker: `${rounded((postmarkSample?.worker ?? []).map((side) => side.perSecond))}/s`,
    naive: `${rounded((smtpSample?.naive ?? []).map((side) => side.perSecond))}/s`,
    ratio: ratioText(postmarkOverSmtp),
    'worker CPU ms/notice': '',
    'naive CPU ms/notice': '',
    duplicates: '',
  });
  printTable(`worker ÷ naive peer, same transport and database (${String(notices)} notices each, ${String(rounds)} interleaved rounds)`, rows);

  const verdict = (values: number[]) => (mean(values) >= 2 ? '≥ 2×: ok' : '≥ 2×: MISS');
  const target = (figure: string, values: number[]) => ({ figure, value: ratioText(values), target: verdict(values) });
  const workerDuplicates = samples.reduce((sum, sample) => sum + sample.worker.reduce((inner, side) => inner + side.duplicates, 0), 0);
  await recordTargets([
    target('worker ÷ naive peer, SMTP', ratios(smtpSample?.worker ?? [], smtpSample?.naive ?? [])),
    target('worker batched ÷ naive peer, Postmark', ratios(postmarkSample?.worker ?? [], postmarkSample?.naive ?? [])),
    target('worker batched ÷ naive peer, SendGrid', ratios(sendgridSample?.worker ?? [], sendgridSample?.naive ?? [])),
    target('worker batched on Postmark ÷ naive SMTP peer', postmarkOverSmtp),
    { figure: "duplicates at the worker's peers", value: String(workerDuplicates), target: workerDuplicates === 0 ? '0: ok' : '0: MISS' },
  ]);
  return { postmark: { perSecond: mean((postmarkSample?.worker ?? []).map((side) => side.perSecond)), concurrency } };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.env.NOTICE_KEY_SECRET ??= 'bench-secret-0123456789abcdef0123456789abcdef';
  const { provisionDatabase } = await import('@/testing/database');
  const { postmasterOf } = await import('./cpu');
  const database = await provisionDatabase({ prefix: 'bench_naive_ratio', serverUrl: process.env.DATABASE_URL });
  try {
    await measureAgainstNaive(database.url, { notices: Number(process.env.BENCH_NOTICES ?? 2_000), postmaster: postmasterOf(database.dataDir) });
  } finally {
    await database.release();
  }
}
