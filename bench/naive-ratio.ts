import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startTwilioPeer } from '@/testing/twilio-peer';
import { measureNaivePeer } from './naive-peer';
import { printTable, recordTargets } from './support';
import { runVariant, twilioEnv } from './worker-ab';
import { measureWorker, type WorkerRun } from './worker-e2e';

/**
 * Issue 27 item 6: the worker against the naive peer (bench/naive-peer.ts: pg-boss `work()` and
 * one send per job, no ledger) on the same transport, the same database and the same kind of
 * local peer, in one run; the ratio and each process's CPU per notice.
 *
 * - SMTP: the worker (its best configuration when `npm run bench:worker` passes it, else 1 × 32)
 *   against nodemailer's pool, both to bench/noop-peer.ts;
 * - Postmark: the worker on its batched path (`POST /email/batch`, EMAIL_BATCH_SIZE's default, at
 *   BENCH_HTTP_CONCURRENCY handlers, 64 by default: a batch is at most the handlers in flight)
 *   against one SDK `sendEmail` per job, both to testing/postmark-peer.ts;
 * - SendGrid: the worker batched likewise (one Mail Send, a personalization per notice) against
 *   one `@sendgrid/client` Mail Send per job, both to testing/sendgrid-peer.ts.
 *
 * Alone: `npx tsx bench/naive-ratio.ts` (BENCH_NOTICES, default 2 000). The target is ≥ 2× on
 * each line, with 0 duplicates at the peer.
 */

const root = path.resolve(import.meta.dirname, '..');

export async function measureAgainstNaive(
  url: string,
  { notices, postmaster, smtpWorker }: { notices: number; postmaster: number | null; smtpWorker?: WorkerRun },
): Promise<void> {
  const concurrency = Number(process.env.BENCH_HTTP_CONCURRENCY ?? 64);
  const smtp = smtpWorker ?? (await measureWorker(url, { processes: 1, concurrency: 32, notices, postmaster }));
  const twilio = await startTwilioPeer();
  let batched: Awaited<ReturnType<typeof runVariant>>;
  let batchedSendgrid: Awaited<ReturnType<typeof runVariant>>;
  try {
    batched = await runVariant(url, { label: 'batched', root, peer: 'postmark', env: {} }, { processes: 1, concurrency, notices, baseEnv: twilioEnv(twilio) });
    batchedSendgrid = await runVariant(
      url,
      { label: 'batched-sendgrid', root, peer: 'sendgrid', env: {} },
      { processes: 1, concurrency, notices, baseEnv: twilioEnv(twilio) },
    );
  } finally {
    await twilio.stop();
  }
  const naiveSmtp = await measureNaivePeer(url, { transport: 'smtp', notices, postmaster });
  const naivePostmark = await measureNaivePeer(url, { transport: 'postmark', notices, postmaster });
  const naiveSendgrid = await measureNaivePeer(url, { transport: 'sendgrid', notices, postmaster });

  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  const slots = `${String(smtp.processes)}×${String(smtp.concurrency)}`;
  printTable(`worker ÷ naive peer, same transport and database (${String(notices)} notices each)`, [
    {
      transport: 'SMTP → no-op peer',
      worker: `${String(Math.round(smtp.perSecond))}/s (${slots})`,
      naive: `${String(Math.round(naiveSmtp.perSecond))}/s (${String(naiveSmtp.workers)} × work(${String(naiveSmtp.batchSize)}))`,
      ratio: ratio(smtp.perSecond, naiveSmtp.perSecond),
      'worker CPU ms/notice': smtp.cpu.workerMs.toFixed(2),
      'naive CPU ms/notice': naiveSmtp.cpu.workerMs.toFixed(2),
      duplicates: `${String(smtp.duplicates)} / ${String(naiveSmtp.duplicates)}`,
    },
    {
      transport: 'Postmark → postmark peer (worker batched, naive one sendEmail per job)',
      worker: `${String(Math.round(batched.perSecond))}/s (1×${String(concurrency)})`,
      naive: `${String(Math.round(naivePostmark.perSecond))}/s (${String(naivePostmark.workers)} × work(${String(naivePostmark.batchSize)}))`,
      ratio: ratio(batched.perSecond, naivePostmark.perSecond),
      'worker CPU ms/notice': batched.cpuMsPerNotice.toFixed(2),
      'naive CPU ms/notice': naivePostmark.cpu.workerMs.toFixed(2),
      duplicates: `${String(batched.duplicates)} / ${String(naivePostmark.duplicates)}`,
    },
    {
      transport: 'SendGrid → sendgrid peer (worker batched, naive one Mail Send per job)',
      worker: `${String(Math.round(batchedSendgrid.perSecond))}/s (1×${String(concurrency)})`,
      naive: `${String(Math.round(naiveSendgrid.perSecond))}/s (${String(naiveSendgrid.workers)} × work(${String(naiveSendgrid.batchSize)}))`,
      ratio: ratio(batchedSendgrid.perSecond, naiveSendgrid.perSecond),
      'worker CPU ms/notice': batchedSendgrid.cpuMsPerNotice.toFixed(2),
      'naive CPU ms/notice': naiveSendgrid.cpu.workerMs.toFixed(2),
      duplicates: `${String(batchedSendgrid.duplicates)} / ${String(naiveSendgrid.duplicates)}`,
    },
    {
      transport: 'worker batched on Postmark ÷ naive SMTP',
      worker: `${String(Math.round(batched.perSecond))}/s`,
      naive: `${String(Math.round(naiveSmtp.perSecond))}/s`,
      ratio: ratio(batched.perSecond, naiveSmtp.perSecond),
      'worker CPU ms/notice': '',
      'naive CPU ms/notice': '',
      duplicates: '',
    },
  ]);
  const verdict = (value: number) => (value >= 2 ? '≥ 2×: ok' : '≥ 2×: MISS');
  await recordTargets([
    { figure: 'worker ÷ naive peer, SMTP', value: ratio(smtp.perSecond, naiveSmtp.perSecond), target: verdict(smtp.perSecond / naiveSmtp.perSecond) },
    {
      figure: 'worker batched ÷ naive peer, Postmark',
      value: ratio(batched.perSecond, naivePostmark.perSecond),
      target: verdict(batched.perSecond / naivePostmark.perSecond),
    },
    {
      figure: 'worker batched ÷ naive peer, SendGrid',
      value: ratio(batchedSendgrid.perSecond, naiveSendgrid.perSecond),
      target: verdict(batchedSendgrid.perSecond / naiveSendgrid.perSecond),
    },
    {
      figure: 'worker batched on Postmark ÷ naive SMTP peer',
      value: ratio(batched.perSecond, naiveSmtp.perSecond),
      target: verdict(batched.perSecond / naiveSmtp.perSecond),
    },
    {
      figure: "duplicates at the worker's peers",
      value: String(smtp.duplicates + batched.duplicates + batchedSendgrid.duplicates),
      target: smtp.duplicates + batched.duplicates + batchedSendgrid.duplicates === 0 ? '0: ok' : '0: MISS',
    },
  ]);
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
