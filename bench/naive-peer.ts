import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import nodemailer from 'nodemailer';
import PgBoss from 'pg-boss';
import { ServerClient } from 'postmark';
import sendgridClient from '@sendgrid/client';

/**
 * The naive peer (issue 27 item 6): the worker a user would write without notice-ledger, so the
 * benchmark can say how the real worker compares. pg-boss `work()` and one send per job, no
 * ledger, no claim, no commit: the job is completed when the send resolves, and a batch whose
 * handler throws is retried whole (pg-boss's at-least-once, which is where its duplicates come
 * from). Tuned only as the libraries document:
 * - pg-boss 10: `batchSize` per `work()` call, and several `work()` calls for concurrency (each
 *   call adds a polling worker; pg-boss 10 has no teamSize or localConcurrency any more);
 * - nodemailer: `pool: true` with `maxConnections` and `maxMessages: Infinity`;
 * - postmark: one `ServerClient`, one `sendEmail` per job (Node's fetch keeps connections alive);
 * - sendgrid: the `@sendgrid/client` singleton, one `POST /v3/mail/send` per job.
 *
 * `tsx bench/naive-peer.ts` runs one short measurement per transport (SMTP to the bench's no-op
 * peer, the Postmark SDK to testing/postmark-peer.ts) and prints notices/s, the naive worker's
 * own CPU per notice and the duplicates the peer counted. `measureNaivePeer` is what
 * `npm run bench:worker` can call later, on its own database and peer. Settings: BENCH_NOTICES,
 * NAIVE_WORKERS (work() calls), NAIVE_BATCH_SIZE, NAIVE_POOL (SMTP connections).
 */

export type NaiveJob = { to: string; subject: string; text: string; html: string; correlation: string };

export type NaiveTransport = 'smtp' | 'postmark' | 'sendgrid';

/** The user's worker: what runs in the child process. */
async function runNaiveWorker(env: NodeJS.ProcessEnv): Promise<void> {
  const queue = env.NAIVE_QUEUE ?? 'naive-notices';
  const workers = Number(env.NAIVE_WORKERS ?? 4);
  const batchSize = Number(env.NAIVE_BATCH_SIZE ?? 64);
  const boss = new PgBoss({ connectionString: env.DATABASE_URL });
  boss.on('error', (error: Error) => console.error(error.message));
  await boss.start();

  let send: (job: NaiveJob) => Promise<unknown>;
  let close: () => void = () => undefined;
  if (env.NAIVE_TRANSPORT === 'sendgrid') {
    sendgridClient.setApiKey(env.SENDGRID_API_KEY ?? '');
    sendgridClient.setDefaultRequest('baseUrl', `${env.SENDGRID_API_BASE_URL ?? ''}/`);
    send = (job) =>
      sendgridClient.request({
        url: '/v3/mail/send',
        method: 'POST',
        body: {
          from: { email: 'notices@naive.example' },
          subject: job.subject,
          personalizations: [{ to: [{ email: job.to }], custom_args: { notice_correlation: job.correlation } }],
          content: [
            { type: 'text/plain', value: job.text },
            { type: 'text/html', value: job.html },
          ],
        },
      });
  } else if (env.NAIVE_TRANSPORT === 'postmark') {
    const client = new ServerClient(env.POSTMARK_SERVER_TOKEN ?? '', { useHttps: false, requestHost: env.POSTMARK_REQUEST_HOST ?? '' });
    send = (job) =>
      client.sendEmail({
        From: 'notices@naive.example',
        To: job.to,
        Subject: job.subject,
        TextBody: job.text,
        HtmlBody: job.html,
        MessageStream: 'outbound',
        Metadata: { notice_correlation: job.correlation },
      });
  } else {
    const url = new URL(env.SMTP_URL ?? '');
    const transporter = nodemailer.createTransport({
      host: url.hostname,
      port: Number(url.port),
      secure: false,
      ignoreTLS: true,
      pool: true,
      maxConnections: Number(env.NAIVE_POOL ?? 16),
      maxMessages: Infinity,
    });
    send = (job) =>
      transporter.sendMail({
        from: 'notices@naive.example',
        to: job.to,
        subject: job.subject,
        text: job.text,
        html: job.html,
        messageId: `<${job.correlation}@naive.example>`,
        headers: { 'X-Notice-Correlation': job.correlation },
      });
    close = () => transporter.close();
  }

  const stop = async () => {
    await boss.stop({ graceful: true, wait: true });
    close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  // The harness starts the clock, then says go: the start-up is not what is measured.
  console.log('naive ready');
  const input = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => input.once('line', () => resolve()));
  for (let i = 0; i < workers; i += 1) {
    await boss.work<NaiveJob>(queue, { batchSize, pollingIntervalSeconds: 0.5 }, async (jobs) => {
      await Promise.all(jobs.map((job) => send(job.data)));
    });
  }
}

export type NaiveRun = {
  transport: NaiveTransport;
  workers: number;
  batchSize: number;
  notices: number;
  seconds: number;
  perSecond: number;
  duplicates: number;
  /** CPU milliseconds per notice: the naive worker process, PostgreSQL (NaN on an external server), this process (peer, polling). */
  cpu: { workerMs: number; serverMs: number; benchMs: number };
};

const root = path.resolve(import.meta.dirname, '..');
const tsxLoader = pathToFileURL(path.join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
const bodyText = 'Your Coffee Box renews soon. '.repeat(20);

/** One run: `notices` jobs queued, the naive worker started, timed from "go" until every job is sent and completed. */
export async function measureNaivePeer(
  url: string,
  {
    transport,
    notices,
    workers = 4,
    batchSize = 64,
    pool = 16,
    postmaster = null,
    timeoutMs = 300_000,
  }: { transport: NaiveTransport; notices: number; workers?: number; batchSize?: number; pool?: number; postmaster?: number | null; timeoutMs?: number },
): Promise<NaiveRun> {
  const { pidSeconds, selfSeconds, serverSeconds } = await import('./cpu');
  const { startNoopPeer } = await import('./noop-peer');
  const { startPostmarkPeer } = await import('@/testing/postmark-peer');
  const { startSendgridPeer } = await import('@/testing/sendgrid-peer');
  const smtp = transport === 'smtp' ? await startNoopPeer() : null;
  const postmark = transport === 'postmark' ? await startPostmarkPeer() : null;
  const sendgrid = transport === 'sendgrid' ? await startSendgridPeer() : null;
  const received = () => smtp?.received() ?? postmark?.messages().length ?? sendgrid?.messages().length ?? 0;
  const duplicates = () => {
    if (smtp) return smtp.duplicates();
    const seen = new Map<string, number>();
    for (const message of postmark?.messages() ?? sendgrid?.messages() ?? [])
      seen.set(message.correlation ?? '', (seen.get(message.correlation ?? '') ?? 0) + 1);
    return [...seen.values()].reduce((sum, n) => sum + n - 1, 0);
  };
  const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false });
  boss.on('error', () => undefined);
  await boss.start();
  const tag = `n${Date.now().toString(36)}`;
  // A queue of the run's own: a second run on the same database starts from an empty one.
  const queue = `naive-${transport}-${tag}`;
  await boss.createQueue(queue);
  const jobs = Array.from({ length: notices }, (_, i) => ({
    name: queue,
    data: {
      to: `naive${String(i)}@d${String(i % 200)}.example`,
      subject: 'Your renewal — in 3 days',
      text: bodyText,
      html: `<p>${bodyText}</p>`,
      correlation: (tag + i.toString(16)).padStart(32, '0').slice(-32),
    } satisfies NaiveJob,
  }));
  for (let offset = 0; offset < jobs.length; offset += 5_000) await boss.insert(jobs.slice(offset, offset + 5_000));
  // The same starting point as the worker's runs (bench/support.ts settleDatabase).
  const { settleDatabase } = await import('./support');
  const { createPool } = await import('@/db/client');
  const settlePool = createPool(url, { max: 1 });
  await settleDatabase(settlePool).finally(() => settlePool.end());

  const child = spawn(process.execPath, ['--import', tsxLoader, 'bench/naive-peer.ts', 'worker'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      NODE_ENV: 'production',
      DATABASE_URL: url,
      NAIVE_QUEUE: queue,
      NAIVE_TRANSPORT: transport,
      NAIVE_WORKERS: String(workers),
      NAIVE_BATCH_SIZE: String(batchSize),
      NAIVE_POOL: String(pool),
      SMTP_URL: smtp?.url ?? '',
      POSTMARK_REQUEST_HOST: postmark?.requestHost ?? '',
      POSTMARK_SERVER_TOKEN: postmark?.serverToken ?? '',
      SENDGRID_API_KEY: sendgrid?.apiKey ?? '',
      SENDGRID_API_BASE_URL: sendgrid?.baseUrl ?? '',
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (line === 'naive ready') resolve();
      });
      void exited.then(() => reject(new Error('the naive worker exited before it was ready')));
    });
    const pid = child.pid ?? 0;
    const before = { worker: pidSeconds([pid]), server: serverSeconds(postmaster), bench: selfSeconds() };
    const started = performance.now();
    child.stdin.write('go\n');
    const completed = async () => (await boss.getQueueSize(queue, { before: 'completed' })) === 0;
    while (received() < notices || !(await completed())) {
      if (performance.now() - started > timeoutMs)
        throw new Error(`naive peer: ${String(received())} of ${String(notices)} sent after ${String(timeoutMs / 1000)} s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    const perNoticeMs = (after: number, start: number) => ((after - start) * 1000) / notices;
    return {
      transport,
      workers,
      batchSize,
      notices,
      seconds,
      perSecond: notices / seconds,
      duplicates: duplicates(),
      cpu: {
        workerMs: perNoticeMs(pidSeconds([pid]), before.worker),
        serverMs: perNoticeMs(serverSeconds(postmaster), before.server),
        benchMs: perNoticeMs(selfSeconds(), before.bench),
      },
    };
  } finally {
    child.kill('SIGTERM');
    await exited;
    await boss.stop({ graceful: false, wait: true });
    await smtp?.stop();
    await postmark?.stop();
    await sendgrid?.stop();
  }
}

async function main(): Promise<void> {
  const { provisionDatabase } = await import('@/testing/database');
  const { postmasterOf } = await import('./cpu');
  const { printTable } = await import('./support');
  const notices = Number(process.env.BENCH_NOTICES ?? 2_000);
  const settings = {
    workers: Number(process.env.NAIVE_WORKERS ?? 4),
    batchSize: Number(process.env.NAIVE_BATCH_SIZE ?? 64),
    pool: Number(process.env.NAIVE_POOL ?? 16),
  };
  const database = await provisionDatabase({ prefix: 'bench_naive', serverUrl: process.env.DATABASE_URL });
  const postmaster = postmasterOf(database.dataDir);
  try {
    const runs: NaiveRun[] = [];
    for (const transport of ['smtp', 'postmark', 'sendgrid'] as const)
      runs.push(await measureNaivePeer(database.url, { transport, notices, postmaster, ...settings }));
    printTable(
      'naive peer: pg-boss work() + one send per job, no ledger',
      runs.map((run) => ({
        transport:
          run.transport === 'smtp'
            ? `SMTP (nodemailer pool ${String(settings.pool)}) → no-op peer`
            : run.transport === 'postmark'
              ? 'Postmark SDK → postmark peer'
              : 'SendGrid client → sendgrid peer',
        'work() × batch': `${String(run.workers)} × ${String(run.batchSize)}`,
        notices: run.notices,
        'notices/s': Math.round(run.perSecond),
        duplicates: run.duplicates,
        'CPU ms/notice: naive worker': run.cpu.workerMs.toFixed(2),
        postgres: Number.isNaN(run.cpu.serverMs) ? '' : run.cpu.serverMs.toFixed(2),
        'bench+peer': run.cpu.benchMs.toFixed(2),
      })),
    );
  } finally {
    await database.release();
  }
}

if (process.argv[2] === 'worker') await runNaiveWorker(process.env);
else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
