import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { createDb, createPool } from '@/db/client';
import { createWebhookEndpoint } from '@/lib/webhooks/endpoints';
import { parseAllowList } from '@/lib/webhooks/url';
import { startPostmarkPeer } from '@/testing/postmark-peer';
import { startSendgridPeer } from '@/testing/sendgrid-peer';
import { startSmtpSink } from '@/testing/smtp-sink';
import { startTwilioPeer, type TwilioPeer } from '@/testing/twilio-peer';
import { assertReadyIsLogged } from '@/testing/worker-process';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { DEFAULT_QUEUE_NAME } from '@/lib/queue/types';
import { provisionDatabase } from '@/testing/database';
import { startNoopPeer } from './noop-peer';
import { insertDueJobs as insertBenchNotices, type BenchNotices } from './worker-e2e';
import { postmasterOf, selfSeconds, serverSeconds } from './cpu';
import { printTable, settleDatabase } from './support';

/**
 * Before/after for the worker, in ONE bench process on ONE database: each variant is a source
 * tree (e.g. `git archive <commit>` of the state before a change, or this tree) plus extra
 * worker env and the SMTP peer. Variants run interleaved for BENCH_ROUNDS rounds so a change in
 * machine load hits all of them alike; the median is reported.
 *
 *   tsx bench/worker-ab.ts base=/tmp/trees/base new=.:noop new-info=.:sink:LOG_LEVEL=info
 *
 * A variant is `label=dir[:peer][:KEY=value...]`, peer `sink` (testing/smtp-sink.ts, default), `noop`
 * (bench/noop-peer.ts), `postmark` (testing/postmark-peer.ts: the worker gets EMAIL_PROVIDER=postmark
 * and the peer's URL and token; EMAIL_BATCH_SIZE=1 in the variant turns batched sends off), or
 * `sendgrid` (testing/sendgrid-peer.ts, likewise);
 * the key NODE_ARGS passes flags to node (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`); `webhooks=N`
 * subscribes N webhook endpoints to notice.sent (a local receiver answering 204), and the round
 * ends, CPU included, once every event reached every endpoint; `processes=N` runs N workers for that
 * variant (BENCH_PROCESSES for the others):
 *
 *   tsx bench/worker-ab.ts none=. one=.:webhooks=1
 *
 *   BENCH_CONCURRENCY=64 tsx bench/worker-ab.ts smtp=.:noop single=.:postmark:EMAIL_BATCH_SIZE=1 batch=.:postmark
 *
 * All variants share one database, migrated by THIS tree: a tree with other migrations is warned
 * about (schemaDrift), since its worker then runs against a schema it was not written for.
 *
 * Every variant runs on its tree's shipped configuration. That configuration has SMS types, so
 * the bench starts the local Twilio peer (testing/twilio-peer.ts) and gives every worker its
 * settings (a URL cannot ride in a variant: the syntax splits on `:`); a tree from before SMS
 * ignores them. The bench's notices are email, so the peer only lets the worker start.
 *
 * BENCH_KIND=required makes the notices required ones (bench/worker-e2e.ts BenchNotices), the kind
 * EVIDENCE_FOR=required keeps a record for: the evidence record's send path, A/B'd (issue 28):
 *
 *   BENCH_KIND=required BENCH_CONCURRENCY=32 tsx bench/worker-ab.ts base=/tmp/ab/before:noop:EVIDENCE_FOR=required new=.:noop:EVIDENCE_FOR=required
 */
process.env.NOTICE_KEY_SECRET ??= 'bench-secret-0123456789abcdef0123456789abcdef';

type Variant = {
  label: string;
  root: string;
  peer: 'sink' | 'noop' | 'postmark' | 'sendgrid';
  env: Record<string, string>;
  webhookEndpoints?: number;
  /** Worker processes for this variant (`processes=N`); BENCH_PROCESSES otherwise. */
  processes?: number;
};
type Sample = {
  perSecond: number;
  duplicates: number;
  readyRssMb: number;
  peakRssMb: number;
  cpuMsPerNotice: number;
  /** PostgreSQL's CPU per notice (NaN on an external server) and this process's (the peer, the producer, the count polling). */
  serverCpuMsPerNotice: number;
  benchCpuMsPerNotice: number;
  phases: Record<string, number>;
};

function parseVariant(arg: string): Variant {
  const at = arg.indexOf('=');
  const label = arg.slice(0, at);
  const rest = at > 0 ? arg.slice(at + 1) : '';
  if (!rest) throw new Error(`variant ${arg}: expected label=dir[:peer][:KEY=value...]`);
  const [dir = '.', ...parts] = rest.split(':');
  let peer: Variant['peer'] = 'sink';
  const env: Record<string, string> = {};
  let webhookEndpoints = 0;
  let processes: number | undefined;
  for (const part of parts) {
    if (part === 'sink' || part === 'noop' || part === 'postmark' || part === 'sendgrid') peer = part;
    else if (/^webhooks=\d+$/.test(part)) webhookEndpoints = Number(part.slice('webhooks='.length));
    else if (/^processes=[1-9]\d*$/.test(part)) processes = Number(part.slice('processes='.length));
    else {
      const eq = part.indexOf('=');
      if (eq > 0) env[part.slice(0, eq)] = part.slice(eq + 1);
    }
  }
  return { label, root: path.resolve(dir), peer, env, webhookEndpoints, processes };
}

function statusMb(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${String(pid)}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * How the tree runs its worker in production: the bundle (scripts/build-worker.ts, built here
 * once per tree) on plain Node where the tree has one, else worker/main.ts under tsx, as trees
 * before the bundle did. Each variant so runs its own shipped configuration.
 */
const shippedWorker = new Map<string, string[]>();
function shippedWorkerArgs(root: string): string[] {
  let args = shippedWorker.get(root);
  if (!args) {
    const loader = pathToFileURL(path.join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
    if (existsSync(path.join(root, 'scripts', 'build-worker.ts'))) {
      execFileSync(process.execPath, ['--import', loader, 'scripts/build-worker.ts'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
      args = ['--enable-source-maps', path.join(root, 'dist', 'worker', 'main.mjs')];
    } else {
      args = ['--import', loader, 'worker/main.ts'];
    }
    shippedWorker.set(root, args);
  }
  return args;
}

function spawnFrom(root: string, env: Record<string, string>) {
  // NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) go to node itself, not the worker env.
  // SOURCE_MAPS=off runs the bundle without --enable-source-maps (what the flag costs).
  const { NODE_ARGS: nodeArgs = '', SOURCE_MAPS: sourceMaps = 'on', ...workerEnv } = env;
  assertReadyIsLogged(workerEnv.LOG_LEVEL);
  const workerArgs = shippedWorkerArgs(root).filter((arg) => sourceMaps !== 'off' || arg !== '--enable-source-maps');
  const child = spawn(process.execPath, [...nodeArgs.split(' ').filter(Boolean), ...workerArgs], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      NODE_ENV: 'test',
      NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '',
      WORKER_METRICS_PORT: '0',
      SWEEP_EVERY: '1h',
      ...workerEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.includes('"worker ready"')) resolve();
    });
    void exited.then(() => reject(new Error(`worker exited before ready: ${stderr}`)));
  });
  ready.catch(() => undefined);
  return {
    ready,
    /** VmHWM: the most the process has held; VmRSS: what it holds now (right after ready: what it loaded). */
    peakRssMb: () => statusMb(child.pid, 'VmHWM'),
    rssMb: () => statusMb(child.pid, 'VmRSS'),
    /** User + system CPU the worker process has used so far, ms (Linux /proc, clock ticks of 10 ms). */
    cpuMs: () => {
      try {
        const fields =
          readFileSync(`/proc/${String(child.pid)}/stat`, 'utf8')
            .split(') ')[1]
            ?.split(' ') ?? [];
        return (Number(fields[11]) + Number(fields[12])) * 10;
      } catch {
        return 0;
      }
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function insertDueJobs(pool: pg.Pool, tag: string, count: number): Promise<string[]> {
  const result = await pool.query<{ id: string }>(
    // Marked woken (wakeup_published_at), as enqueueNotice marks a published job: a tree whose
    // pg-boss worker runs the dispatcher leaves them to the wake-ups inserted below.
    `insert into reminder_jobs (notice_key, notice_type, identity, subject_id, recipient_email, due_at, deadline_at, state, next_attempt_at, wakeup_published_at, source, payload, anchor_at)
     select md5($1 || i) || md5($1 || '-' || i), 'renewal_notice_t72', jsonb_build_object('subscription_id', $1 || i, 'period_start', '2026-12-01'),
       $1 || i, 'bench' || i || '@d' || (i % 200) || '.example', now() - interval '1 minute', now() + interval '2 days', 'pending',
       now() - interval '1 minute', now(), 'bench', '{"customer_name":"Ana Silva","plan_name":"Coffee Box","amount":"19.00","currency":"EUR"}', now() + interval '3 days'
     from generate_series(1, $2::int) as i returning id`,
    [tag, count],
  );
  return result.rows.map((row) => row.id);
}

/**
 * Where a notice's time goes, from timestamps the run already writes (medians, ms):
 * fetch→start (pg-boss started_on → handler start), start→claim (load + token + claim),
 * claim→commit (send + result commit, measured by the worker), commit→ack (→ completed_on).
 */
async function phaseMedians(pool: pg.Pool, tag: string): Promise<Record<string, number>> {
  const result = await pool.query<Record<string, number>>(
    `select
       percentile_cont(0.5) within group (order by extract(epoch from a.started_at - q.started_on) * 1000)::int as "fetch→start",
       percentile_cont(0.5) within group (order by extract(epoch from l.claimed_at - a.started_at) * 1000)::int as "start→claim",
       percentile_cont(0.5) within group (order by a.claim_to_commit_ms)::int as "claim→commit",
       percentile_cont(0.5) within group (order by extract(epoch from q.completed_on - a.finished_at) * 1000)::int as "commit→ack",
       percentile_cont(0.5) within group (order by extract(epoch from q.completed_on - q.started_on) * 1000)::int as "fetch→ack"
     from reminder_jobs j
     join delivery_attempts a on a.job_id = j.id and a.outcome = 'sent'
     join notice_ledger l on l.notice_key = j.notice_key
     join pgboss.job q on q.name = $2 and q.data->>'jobId' = j.id::text and q.state = 'completed'
     where j.subject_id like $1 || '%'`,
    [tag, DEFAULT_QUEUE_NAME],
  );
  return result.rows[0] ?? {};
}

/** A producer's receiver that answers every delivery 204 and counts distinct webhook-ids. */
async function startWebhookReceiver(): Promise<{ url: string; delivered: () => number; close: () => Promise<void> }> {
  const ids = new Set<string>();
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      ids.add(String(request.headers['webhook-id']));
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}/hooks`,
    delivered: () => ids.size,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What a worker on the shipped configuration needs to start: Twilio settings, here the local peer's. */
export function twilioEnv(peer: Pick<TwilioPeer, 'baseUrl' | 'accountSid' | 'authToken'>): Record<string, string> {
  return { TWILIO_ACCOUNT_SID: peer.accountSid, TWILIO_AUTH_TOKEN: peer.authToken, TWILIO_FROM: '+15005550006', TWILIO_API_BASE_URL: peer.baseUrl };
}

export async function runVariant(
  url: string,
  variant: Variant,
  {
    processes,
    concurrency,
    notices,
    baseEnv = {},
    kind = 'courtesy',
    postmaster = null,
  }: { processes: number; concurrency: number; notices: number; baseEnv?: Record<string, string>; kind?: BenchNotices; postmaster?: number | null },
): Promise<Sample> {
  const pool = createPool(url, { max: 2 });
  const peer = variant.peer === 'noop' ? await startNoopPeer() : null;
  const sink = variant.peer === 'sink' ? await startSmtpSink() : null;
  const postmark = variant.peer === 'postmark' ? await startPostmarkPeer() : null;
  const sendgrid = variant.peer === 'sendgrid' ? await startSendgridPeer() : null;
  const postmarkEnv: Record<string, string> = postmark
    ? { EMAIL_PROVIDER: 'postmark', POSTMARK_SERVER_TOKEN: postmark.serverToken, POSTMARK_API_BASE_URL: postmark.baseUrl }
    : sendgrid
      ? { EMAIL_PROVIDER: 'sendgrid', SENDGRID_API_KEY: sendgrid.apiKey, SENDGRID_API_BASE_URL: sendgrid.baseUrl }
      : {};
  const publisher = createPgBossQueue({ url, visibilityTimeoutMs: 60_000, supervise: false });
  const workers: ReturnType<typeof spawnFrom>[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  const db = createDb(pool);
  try {
    await publisher.start();
    const tag = `ab${String(Date.now())}_`;
    const ids = kind === 'required' ? await insertBenchNotices(pool, tag, notices, kind) : await insertDueJobs(pool, tag, notices);
    for (let offset = 0; offset < ids.length; offset += 5_000) {
      await publisher.boss.insert(
        ids.slice(offset, offset + 5_000).map((jobId) => ({ name: DEFAULT_QUEUE_NAME, data: { jobId }, expireInSeconds: 60, retryLimit: 20 })),
      );
    }
    // `webhooks=N`: N endpoints subscribed to notice.sent, answered 204 by a local receiver; each
    // sent notice then writes an outbox event in its commit and the worker's dispatcher delivers it.
    const receiver = (variant.webhookEndpoints ?? 0) > 0 ? await startWebhookReceiver() : null;
    if (receiver) cleanups.push(() => receiver.close());
    for (let i = 0; i < (variant.webhookEndpoints ?? 0); i += 1) {
      const created = await createWebhookEndpoint(
        db,
        { url: receiver?.url ?? '', description: `bench ${String(i)}`, eventTypes: ['notice.sent'], createdBy: 'bench' },
        { production: false, allow: parseAllowList('127.0.0.1'), noticeKeySecret: process.env.NOTICE_KEY_SECRET ?? '' },
      );
      if (!created.ok) throw new Error(`bench webhook endpoint refused: ${created.problem.message}`);
      cleanups.push(async () => void (await pool.query('delete from webhook_endpoints where id = $1', [created.endpoint.id])));
    }
    const env = {
      DATABASE_URL: url,
      ...(receiver ? { WEBHOOK_ALLOWED_PRIVATE: '127.0.0.1' } : {}),
      // A worker on the shipped configuration needs an SMTP_URL even when an HTTP provider sends.
      SMTP_URL: peer?.url ?? sink?.url ?? 'smtp://127.0.0.1:9',
      ...postmarkEnv,
      WORKER_CONCURRENCY: String(concurrency),
      RATE_LIMIT_PER_DOMAIN: '100000',
      VISIBILITY_TIMEOUT: '60s',
      LOG_LEVEL: 'info',
      ...baseEnv,
      ...variant.env,
    };
    await settleDatabase(pool);
    for (let i = 0; i < processes; i += 1) workers.push(spawnFrom(variant.root, env));
    await Promise.all(workers.map((w) => w.ready));
    const readyRssMb = Math.max(...workers.map((w) => w.rssMb()));
    const cpuBefore = workers.reduce((sum, w) => sum + w.cpuMs(), 0);
    const serverBefore = serverSeconds(postmaster);
    const benchBefore = selfSeconds();
    const started = performance.now();
    let peak = 0;
    // What the peer has seen, counted in this process: the count of sent rows is a scan over every
    // finished job of the run's database, growing round after round on the same two cores (1–4 ms
    // a poll), so the database is asked only once the peer has every notice (each commit follows
    // its send), as bench/worker-e2e.ts and bench/naive-peer.ts do.
    const delivered = () => peer?.received() ?? (sink?.messages() ?? postmark?.messages() ?? sendgrid?.messages() ?? []).length;
    for (let sent = 0; sent < notices;) {
      if (performance.now() - started > 300_000) throw new Error(`${variant.label}: only ${String(sent)} sent after 300 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      peak = Math.max(peak, ...workers.map((w) => w.peakRssMb()));
      if (delivered() < notices) continue;
      const counted = await pool.query<{ n: number }>("select count(*)::int as n from reminder_jobs where subject_id like $1 || '%' and state = 'sent'", [tag]);
      sent = counted.rows[0]?.n ?? 0;
    }
    const seconds = (performance.now() - started) / 1000;
    let duplicates = peer?.duplicates() ?? 0;
    if (sink || postmark || sendgrid) {
      const per = new Map<string, number>();
      for (const m of sink?.messages() ?? postmark?.messages() ?? sendgrid?.messages() ?? [])
        per.set(m.correlation ?? '', (per.get(m.correlation ?? '') ?? 0) + 1);
      duplicates = [...per.values()].reduce((s, n) => s + Math.max(0, n - 1), 0);
    }
    if (receiver) {
      // Every sent notice's event reached each endpoint before the round counts as done.
      const expected = notices * (variant.webhookEndpoints ?? 0);
      for (const until = Date.now() + 120_000; receiver.delivered() < expected;) {
        if (Date.now() > until) throw new Error(`${variant.label}: ${String(receiver.delivered())} of ${String(expected)} webhook deliveries after 120 s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const webhookSeconds = (performance.now() - started) / 1000;
    // With webhooks, the CPU their dispatch took after the last send counts too.
    const cpuMsPerNotice = (workers.reduce((sum, w) => sum + w.cpuMs(), 0) - cpuBefore) / notices;
    const serverCpuMsPerNotice = ((serverSeconds(postmaster) - serverBefore) * 1000) / notices;
    const benchCpuMsPerNotice = ((selfSeconds() - benchBefore) * 1000) / notices;
    return {
      perSecond: notices / seconds,
      duplicates,
      readyRssMb,
      peakRssMb: peak,
      cpuMsPerNotice,
      serverCpuMsPerNotice,
      benchCpuMsPerNotice,
      phases: { ...(await phaseMedians(pool, tag)), ...(receiver ? { 'webhooks delivered (s)': Math.round(webhookSeconds * 10) / 10 } : {}) },
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    for (const cleanup of cleanups.reverse()) await cleanup();
    await publisher.stop();
    await sink?.stop();
    await peer?.stop();
    await postmark?.stop();
    await sendgrid?.stop();
    await pool.end();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
};

/** A tree's migrations by tag (drizzle's journal); empty when it has none to read. */
function migrationTags(root: string): string[] {
  try {
    const journal = JSON.parse(readFileSync(path.join(root, 'db/migrations/meta/_journal.json'), 'utf8')) as { entries?: { tag?: unknown }[] };
    return (journal.entries ?? []).map((entry) => String(entry.tag));
  } catch {
    return [];
  }
}

/**
 * Every variant runs on ONE database, migrated by this tree. A tree whose migrations differ runs
 * its worker against a schema it was not written for: where a migration changed tables that
 * worker reads or writes, its figures are wrong without any error (session 22: an older tree's
 * evidence chainer failed on every pass against the new chain tables, so it looked cheaper). Said
 * before the first round, and again under the table.
 */
function schemaDrift(variants: readonly Variant[]): string[] {
  const here = migrationTags(process.cwd());
  return variants.flatMap((variant) => {
    const theirs = migrationTags(variant.root);
    const missing = here.filter((tag) => !theirs.includes(tag));
    const extra = theirs.filter((tag) => !here.includes(tag));
    if (missing.length === 0 && extra.length === 0) return [];
    return [
      `variant ${variant.label}: its tree ${missing.length > 0 ? `lacks migrations ${missing.join(', ')}` : ''}${missing.length > 0 && extra.length > 0 ? ' and ' : ''}${extra.length > 0 ? `has migrations this tree lacks (${extra.join(', ')}, not applied)` : ''}: it runs on a database migrated by this tree; if those migrations touch what its worker reads or writes, its figures are wrong`,
    ];
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const variants = process.argv.slice(2).map(parseVariant);
  if (variants.length === 0) throw new Error('usage: tsx bench/worker-ab.ts label=dir[:peer][:KEY=value...] ...');
  const drift = schemaDrift(variants);
  for (const line of drift) console.warn(`WARNING ${line}`);
  const shape = {
    processes: Number(process.env.BENCH_PROCESSES ?? 1),
    concurrency: Number(process.env.BENCH_CONCURRENCY ?? 16),
    notices: Number(process.env.BENCH_NOTICES ?? 2_000),
    kind: process.env.BENCH_KIND === 'required' ? ('required' as const) : ('courtesy' as const),
  };
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  const database = await provisionDatabase({ prefix: 'bench_worker_ab', serverUrl: process.env.DATABASE_URL });
  const twilio = await startTwilioPeer();
  const samples = new Map<string, Sample[]>(variants.map((v) => [v.label, []]));
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const variant of variants) {
        const sample = await runVariant(database.url, variant, {
          ...shape,
          processes: variant.processes ?? shape.processes,
          baseEnv: twilioEnv(twilio),
          postmaster: postmasterOf(database.dataDir),
        });
        samples.get(variant.label)?.push(sample);
        const phases = Object.entries(sample.phases)
          .map(([k, v]) => `${k} ${String(v)}`)
          .join(', ');
        console.log(
          `round ${String(round + 1)} ${variant.label}: ${Math.round(sample.perSecond).toString()} notices/s, ${String(sample.duplicates)} duplicates, ${Math.round(sample.readyRssMb).toString()} MB at ready, ${Math.round(sample.peakRssMb).toString()} MB peak, CPU ms/notice worker ${sample.cpuMsPerNotice.toFixed(2)} + PostgreSQL ${sample.serverCpuMsPerNotice.toFixed(2)} + bench/peer ${sample.benchCpuMsPerNotice.toFixed(2)}; median ms: ${phases}`,
        );
      }
    }
  } finally {
    await twilio.stop();
    await database.release();
  }
  // The host's speed drifts between rounds more than most changes move a median: each variant's
  // worker CPU per notice is also given as its difference from the first variant's in the same
  // round, which the drift moves alike.
  const baseline = samples.get(variants[0]?.label ?? '') ?? [];
  const pairedCpu = (s: Sample[]) =>
    s.map((x, round) => {
      const delta = x.cpuMsPerNotice - (baseline[round]?.cpuMsPerNotice ?? Number.NaN);
      return `${delta >= 0 ? '+' : ''}${delta.toFixed(2)}`;
    });
  printTable(
    `worker A/B: ${String(shape.processes)}×${String(shape.concurrency)}, ${String(shape.notices)} notices, median of ${String(rounds)}`,
    variants.map((v, index) => {
      const s = samples.get(v.label) ?? [];
      return {
        variant: v.label,
        peer: v.peer,
        env: Object.entries(v.env)
          .map(([k, val]) => `${k}=${val}`)
          .join(' '),
        'notices/s': Math.round(median(s.map((x) => x.perSecond))),
        runs: s.map((x) => Math.round(x.perSecond)).join(' / '),
        duplicates: s.reduce((sum, x) => sum + x.duplicates, 0),
        'RSS at ready MB': Math.round(median(s.map((x) => x.readyRssMb))),
        'peak RSS MB': Math.round(Math.max(0, ...s.map((x) => x.peakRssMb))),
        'worker CPU ms/notice': median(s.map((x) => x.cpuMsPerNotice)).toFixed(2),
        'PostgreSQL CPU ms/notice': median(s.map((x) => x.serverCpuMsPerNotice)).toFixed(2),
        'bench/peer CPU ms/notice': median(s.map((x) => x.benchCpuMsPerNotice)).toFixed(2),
        [`worker CPU vs ${variants[0]?.label ?? ''}, by round`]: index === 0 ? '' : pairedCpu(s).join(' '),
      };
    }),
  );
  for (const line of drift) console.warn(`WARNING ${line}`);
}
