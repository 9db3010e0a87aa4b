import { readFileSync } from 'node:fs';
import pg from 'pg';
import { createDb, createPool } from '@/db/client';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { DEFAULT_QUEUE_NAME } from '@/lib/queue/types';
import { createRabbitQueue } from '@/lib/queue/rabbitmq';
import { deleteRabbitQueue } from '@/testing/queue/rabbitmq';
import { activeNoticeConfig } from '@/lib/windows/active';
import { spawnWorker, type WorkerProcess } from '@/testing/worker-process';
import { brokerPid, pidSeconds, selfSeconds, serverSeconds } from './cpu';
import { startPostmarkPeer } from '@/testing/postmark-peer';
import { startNoopPeer } from './noop-peer';
import { percentile, printTable, settleDatabase } from './support';

/**
 * (b) The real worker end to end: queue wake-up → load → policy → domain token → claim →
 * SMTP send to a local no-op peer (bench/noop-peer.ts: reads the message, counts correlations
 * for duplicates, answers 250) → result commit → ack, in separate worker processes. Jobs are
 * inserted set-based and their wake-ups bulk-inserted into pg-boss before the clock starts.
 * With `queue: { amqpUrl }` the same run goes through the RabbitMQ adapter: the wake-ups are
 * published to a queue of the run's own before the clock starts, so PostgreSQL holds only the
 * product's own rows. Either way the job rows are marked woken, so no dispatcher adds its own.
 */

export type BenchQueue = 'pgboss' | { amqpUrl: string };

export type WorkerRun = {
  queue: 'pgboss' | 'rabbitmq';
  processes: number;
  concurrency: number;
  notices: number;
  seconds: number;
  perSecond: number;
  duplicates: number;
  peakRssMb: number;
  /** CPU milliseconds per notice: worker processes, PostgreSQL (NaN on an external server), this process (SMTP peer, inserts, polling), the RabbitMQ broker (NaN when not local or not used). */
  cpu: { workerMs: number; serverMs: number; benchMs: number; brokerMs: number };
  /**
   * What the run left to do once its last notice was sent, in CPU milliseconds per notice of the
   * workers and PostgreSQL together: its evidence entries not yet chained (the workers' maintenance
   * pass), then vacuuming its dead rows and writing its dirty pages (settleDatabase). Not in `cpu`
   * nor in `perSecond`; a comparison that must count it adds it (bench/evidence-cost.ts).
   */
  upkeepMs: number;
};

const DOMAINS = 200;

/**
 * What the bench's notices are: the courtesy 72-hour renewal reminder, or a required notice as the
 * planner writes one for California (auto_renewal_notice, its rules by `id@version`, the rule set's
 * version), the kind EVIDENCE_FOR=required keeps an evidence record for.
 */
export type BenchNotices = 'courtesy' | 'required';

/** Due jobs marked woken (as enqueueNotice marks a published one): the workers' dispatcher leaves them to the wake-ups the bench publishes. */
export async function insertDueJobs(pool: pg.Pool, tag: string, count: number, kind: BenchNotices = 'courtesy'): Promise<string[]> {
  const required = kind === 'required';
  const result = await pool.query<{ id: string }>(
    `insert into reminder_jobs (notice_key, notice_type, identity, subject_id, recipient_email, due_at, deadline_at, state, next_attempt_at, wakeup_published_at, source, payload, anchor_at,
                                category, region, rule_ids, rule_set_version)
     select md5($1 || i) || md5($1 || '-' || i), $3::text, jsonb_build_object('subscription_id', $1 || i, 'period_start', '2026-12-01'),
       $1 || i, 'bench' || i || '@d' || (i % ${DOMAINS}) || '.example', now() - interval '1 minute', now() + interval '2 days', 'pending',
       now() - interval '1 minute', now(), 'bench', '{"customer_name":"Ana Silva","plan_name":"Coffee Box","amount":"19.00","currency":"EUR"}', now() + interval '3 days',
       $4::text, $5::text, $6::text[], $7::text
     from generate_series(1, $2::int) as i returning id`,
    [
      tag,
      count,
      required ? 'auto_renewal_notice' : 'renewal_notice_t72',
      required ? 'required' : 'courtesy',
      required ? 'US-CA' : null,
      required ? ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1'] : [],
      required ? activeNoticeConfig().ruleSet.version : null,
    ],
  );
  return result.rows.map((row) => row.id);
}

function peakRssMb(worker: WorkerProcess): number {
  try {
    const status = readFileSync(`/proc/${String(worker.child.pid)}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Until the workers' maintenance pass has chained every evidence entry (none are written when the record is off); at most a minute. */
async function untilChained(pool: pg.Pool): Promise<void> {
  for (const started = performance.now(); performance.now() - started < 60_000;) {
    const result = await pool.query<{ waiting: boolean }>('select exists (select 1 from evidence_unchained) as waiting');
    if (!result.rows[0]?.waiting) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('evidence entries still unchained a minute after the run');
}

async function countSent(pool: pg.Pool, tag: string): Promise<number> {
  const result = await pool.query<{ n: number }>("select count(*)::int as n from reminder_jobs where subject_id like $1 || '%' and state = 'sent'", [tag]);
  return result.rows[0]?.n ?? 0;
}

export async function measureWorker(
  url: string,
  {
    processes,
    concurrency,
    notices,
    timeoutMs = 300_000,
    nodeArgs = [],
    postmaster = null,
    queue = 'pgboss',
    kind = 'courtesy',
    workerEnv = {},
  }: {
    processes: number;
    concurrency: number;
    notices: number;
    timeoutMs?: number;
    nodeArgs?: string[];
    postmaster?: number | null;
    queue?: BenchQueue;
    /** The notices' kind (BenchNotices); courtesy unless a comparison needs the required ones. */
    kind?: BenchNotices;
    /** Settings on top of the bench's own (EVIDENCE_FOR, EVIDENCE_SIGN_EVERY for bench/evidence-cost.ts). */
    workerEnv?: Record<string, string>;
  },
): Promise<WorkerRun> {
  const pool = createPool(url, { max: 4 });
  const sink = await startNoopPeer();
  const rabbit = queue === 'pgboss' ? null : { url: queue.amqpUrl, name: `bench-${String(Date.now())}` };
  const publisher = rabbit
    ? createRabbitQueue({ url: rabbit.url, queueName: rabbit.name, visibilityTimeoutMs: 60_000 })
    : createPgBossQueue({ url, visibilityTimeoutMs: 60_000, supervise: false });
  const workers: WorkerProcess[] = [];
  try {
    await publisher.start();
    const tag = `b${String(Date.now())}_`;
    const ids = await insertDueJobs(pool, tag, notices, kind);
    if (publisher.name === 'pgboss') {
      for (let offset = 0; offset < ids.length; offset += 5_000) {
        await publisher.boss.insert(
          ids.slice(offset, offset + 5_000).map((jobId) => ({ name: DEFAULT_QUEUE_NAME, data: { jobId }, expireInSeconds: 60, retryLimit: 20 })),
        );
      }
    } else {
      for (let offset = 0; offset < ids.length; offset += 500) await Promise.all(ids.slice(offset, offset + 500).map((jobId) => publisher.publish({ jobId })));
    }
    const env = {
      DATABASE_URL: url,
      SMTP_URL: sink.url,
      WORKER_CONCURRENCY: String(concurrency),
      RATE_LIMIT_PER_DOMAIN: '100000',
      VISIBILITY_TIMEOUT: '60s',
      LOG_LEVEL: 'info',
      ...(rabbit ? { QUEUE_BACKEND: 'rabbitmq', AMQP_URL: rabbit.url, QUEUE_NAME: rabbit.name } : {}),
      ...workerEnv,
    };
    await settleDatabase(pool);
    for (let i = 0; i < processes; i += 1) workers.push(spawnWorker(env, { nodeArgs }));
    await Promise.all(workers.map((w) => w.ready));
    const workerPids = workers.map((w) => w.child.pid ?? 0);
    const broker = rabbit ? brokerPid(rabbit.url) : null;
    const brokerSeconds = () => (broker === null ? Number.NaN : pidSeconds([broker]));
    const cpuBefore = { worker: pidSeconds(workerPids), server: serverSeconds(postmaster), bench: selfSeconds(), broker: brokerSeconds() };
    const started = performance.now();
    let peak = 0;
    let sent = 0;
    while (sent < notices) {
      if (performance.now() - started > timeoutMs) throw new Error(`only ${String(sent)} of ${String(notices)} sent after ${String(timeoutMs / 1000)} s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      peak = Math.max(peak, ...workers.map(peakRssMb));
      // Counting rows is a scan that competes for the same two cores: ask the database only
      // once the peer has seen every notice (each commit follows its send).
      if (sink.received() >= notices) sent = await countSent(pool, tag);
    }
    const seconds = (performance.now() - started) / 1000;
    const perNoticeMs = (after: number, before: number) => ((after - before) * 1000) / notices;
    const cpu = {
      workerMs: perNoticeMs(pidSeconds(workerPids), cpuBefore.worker),
      serverMs: perNoticeMs(serverSeconds(postmaster), cpuBefore.server),
      benchMs: perNoticeMs(selfSeconds(), cpuBefore.bench),
      brokerMs: perNoticeMs(brokerSeconds(), cpuBefore.broker),
    };
    const duplicates = sink.duplicates();
    const upkeepBefore = pidSeconds(workerPids) + serverSeconds(postmaster);
    await untilChained(pool);
    await settleDatabase(pool);
    const upkeepMs = perNoticeMs(pidSeconds(workerPids) + serverSeconds(postmaster), upkeepBefore);
    return { queue: publisher.name, processes, concurrency, notices, seconds, perSecond: notices / seconds, duplicates, peakRssMb: peak, cpu, upkeepMs };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await publisher.stop();
    if (rabbit) await deleteRabbitQueue(rabbit.url, rabbit.name);
    await sink.stop();
    await pool.end();
  }
}

/** p50/p99 claim-to-commit while wake-ups arrive at `rate` per second (half of the peak). */
export async function measureLatencyAtRate(
  url: string,
  {
    rate,
    seconds,
    processes,
    concurrency,
    nodeArgs = [],
    env: extraEnv = {},
    peer = 'smtp',
    warmSeconds = 2,
  }: {
    rate: number;
    seconds: number;
    /** Seconds at the rate before the measured ones, left out of the percentiles (a fresh worker's code is not optimised yet). */
    warmSeconds?: number;
    processes: number;
    concurrency: number;
    /** Flags for node itself (a V8 setting's effect on latency). */ nodeArgs?: string[];
    /** Settings on top of the bench's own (a setting's effect on latency). */ env?: Record<string, string>;
    /**
     * `smtp`: the no-op SMTP peer, one send per notice. `postmark`: testing/postmark-peer.ts, the
     * worker batching (EMAIL_BATCH_SIZE's default): each item's interval runs from its batch's claim
     * to the commit of the batch's results.
     */
    peer?: 'smtp' | 'postmark';
  },
) {
  const pool = createPool(url, { max: 4 });
  const db = createDb(pool);
  const postmark = peer === 'postmark' ? await startPostmarkPeer() : null;
  const noop = await startNoopPeer();
  const sink = {
    received: () => postmark?.messages().length ?? noop.received(),
    duplicates: () => {
      if (!postmark) return noop.duplicates();
      const per = new Map<string, number>();
      for (const m of postmark.messages()) per.set(m.correlation ?? '', (per.get(m.correlation ?? '') ?? 0) + 1);
      return [...per.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
    },
    stop: async () => {
      await noop.stop();
      await postmark?.stop();
    },
  };
  const publisher = createPgBossQueue({ url, visibilityTimeoutMs: 60_000, supervise: false });
  const workers: WorkerProcess[] = [];
  try {
    await publisher.start();
    // Wake-ups published every 100 ms, as many as the rate has made due since the first.
    const publishAtRate = async (jobIds: string[], perSecond: number) => {
      const started = performance.now();
      for (let sent = 0; sent < jobIds.length;) {
        const due = Math.min(jobIds.length, Math.round(((performance.now() - started) / 1000) * perSecond));
        if (due > sent) {
          await publisher.boss.insert(jobIds.slice(sent, due).map((jobId) => ({ name: DEFAULT_QUEUE_NAME, data: { jobId }, expireInSeconds: 60 })));
          sent = due;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const tag = `l${String(Date.now())}_`;
    const total = Math.round(rate * seconds);
    const ids = await insertDueJobs(pool, tag, total);
    const env = {
      DATABASE_URL: url,
      SMTP_URL: noop.url,
      ...(postmark ? { EMAIL_PROVIDER: 'postmark', POSTMARK_SERVER_TOKEN: postmark.serverToken, POSTMARK_API_BASE_URL: postmark.baseUrl } : {}),
      WORKER_CONCURRENCY: String(concurrency),
      RATE_LIMIT_PER_DOMAIN: '100000',
      LOG_LEVEL: 'info',
      ...extraEnv,
    };
    for (let i = 0; i < processes; i += 1) workers.push(spawnWorker(env, { nodeArgs }));
    await Promise.all(workers.map((w) => w.ready));
    // A fresh worker opens its SMTP pool and compiles its hot code on the first notices: one
    // burst of two per handler slot, measured apart (coldMax) and left out of the percentiles.
    const warmTag = `w${tag}`;
    const warm = 2 * processes * concurrency;
    const warmIds = await insertDueJobs(pool, warmTag, warm);
    await settleDatabase(pool);
    await publisher.boss.insert(warmIds.map((jobId) => ({ name: DEFAULT_QUEUE_NAME, data: { jobId }, expireInSeconds: 60 })));
    while (sink.received() < warm || (await countSent(pool, warmTag)) < warm) await new Promise((resolve) => setTimeout(resolve, 20));
    const cold = await db.$client.query<{ ms: number }>(
      `select max(a.claim_to_commit_ms)::int as ms from delivery_attempts a join reminder_jobs j on j.id = a.job_id where j.subject_id like $1 || '%' and a.outcome = 'sent'`,
      [warmTag],
    );
    const coldMax = cold.rows[0]?.ms ?? Number.NaN;
    // Then `warmSeconds` at the measured rate, also left out: V8 optimises the hot code only after
    // some hundreds of notices, and until then each burst took longer (at 361/s on 1 × 32, the
    // first ~0.7 s after a burst-only warm-up ran at a 29 ms median, enough to decide the p99).
    const steadyTag = `s${tag}`;
    const steady = Math.round(rate * warmSeconds);
    const steadyIds = await insertDueJobs(pool, steadyTag, steady);
    await publishAtRate(steadyIds, rate);
    while (sink.received() < warm + steady || (await countSent(pool, steadyTag)) < steady) await new Promise((resolve) => setTimeout(resolve, 20));
    await publishAtRate(ids, rate);
    while (sink.received() < warm + steady + total || (await countSent(pool, tag)) < total) await new Promise((resolve) => setTimeout(resolve, 20));
    const result = await db.$client.query<{ ms: number }>(
      `select a.claim_to_commit_ms as ms from delivery_attempts a join reminder_jobs j on j.id = a.job_id
       where j.subject_id like $1 || '%' and a.outcome = 'sent' and a.claim_to_commit_ms is not null order by 1`,
      [tag],
    );
    const values = result.rows.map((r) => r.ms);
    // The attempt row cannot carry its own commit time: claim_to_commit_ms ends when the result
    // commit is issued. Claim → ack (pg-boss completed_on, after the commit returned) bounds it.
    const acked = await db.$client.query<{ ms: number }>(
      `select extract(epoch from q.completed_on - l.claimed_at) * 1000 as ms
       from reminder_jobs j join notice_ledger l on l.notice_key = j.notice_key
       join pgboss.job q on q.name = $2 and q.data->>'jobId' = j.id::text and q.state = 'completed'
       where j.subject_id like $1 || '%' order by 1`,
      [tag, DEFAULT_QUEUE_NAME],
    );
    const bound = acked.rows.map((r) => Math.round(r.ms));
    return {
      rate,
      samples: values.length,
      p50: percentile(values, 50),
      p99: percentile(values, 99),
      ackP50: percentile(bound, 50),
      ackP99: percentile(bound, 99),
      coldMax,
      duplicates: sink.duplicates(),
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await publisher.stop();
    await sink.stop();
    await pool.end();
  }
}

export function printWorkerRuns(runs: WorkerRun[]): void {
  printTable(
    '(b) worker end to end: wake-up → claim → SMTP → commit → ack',
    runs.map((r) => ({
      queue: r.queue,
      processes: r.processes,
      concurrency: r.concurrency,
      notices: r.notices,
      'notices/s': Math.round(r.perSecond),
      duplicates: r.duplicates,
      'peak RSS MB': Math.round(r.peakRssMb),
      'CPU ms/notice: worker': r.cpu.workerMs.toFixed(2),
      postgres: r.cpu.serverMs.toFixed(2),
      'bench+peer': r.cpu.benchMs.toFixed(2),
      broker: Number.isNaN(r.cpu.brokerMs) ? '' : r.cpu.brokerMs.toFixed(2),
      'upkeep after: worker+postgres': Number.isNaN(r.upkeepMs) ? '' : r.upkeepMs.toFixed(2),
    })),
  );
}
