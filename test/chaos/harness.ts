import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { createDb, createPool, type Db } from '@/db/client';
import { listQuarantined } from '@/db/queries/ledger/read';
import { createUser } from '@/db/queries/users';
import { createApiToken } from '@/lib/auth/api-tokens';
import { resolveQuarantine } from '@/lib/console/quarantine';
import { reconcileQuarantine } from '@/lib/events/ingest';
import { correlationOf } from '@/lib/ledger/notice-key';
import { connectionLost } from '@/lib/jobs/send-path-statements';
import { startSmtpSink, type MessageFault, type SmtpSink } from '@/testing/smtp-sink';
import { startTwilioPeer, type CallbackMode, type PeerMessage, type TwilioFault, type TwilioPeer } from '@/testing/twilio-peer';
import { deleteRabbitQueue } from '@/testing/queue/rabbitmq';
import { decideReplay, requestReplay, startReplay } from '@/lib/replay/service';
import type { Actor } from '@/lib/replay/transitions';
import { ensureProductionBuild } from '@/scripts/production-build';
import { startConsoleServer, type ConsoleServer } from '@/testing/console-server';
import { isBouncingRecipient, planNotices } from './plan';
import { createPrng, hashUnit, type Prng } from './prng';
import { runProducer, type ProducerStats } from './producer';
import {
  countAttempts,
  countConfirmations,
  countOverlaps,
  countProviderLookups,
  countWindowAttempts,
  jobsWokenByBatch,
  liveWakeups,
  readOutcomes,
  readProgress,
  setWindowOpening,
} from './queries';
import { classifyRun, countRows, formatTable, invariantFailures, type Classified } from './verdict';
import { createWorkerPool, type PoolStats, type WorkerPool } from './workers';
import { startPostmarkRelay, type ChaosRelay, type PostmarkRelay } from './postmark-relay';

/**
 * The chaos run (`npm run chaos`, and a small fixed seed in `npm test`): N notices scheduled
 * over the producer API of the built console under `next start` (testing/console-server.ts),
 * processed by several real worker processes against the real SMTP sink while workers are
 * SIGKILLed and restarted and the sink rejects (451/550), stalls past the visibility timeout
 * and drops connections after DATA; every producer request is posted twice; the whole window
 * is then replayed (request → approve by another user → run). The sink's signed events go
 * through that server's generic webhook route into lib/events, and reconcileQuarantine runs; on-call then releases the claims the sink has no trace of, the
 * workers resend them, and the final count follows. Every random choice derives from `seed`.
 *
 * Evidence for dropped-after-data messages: the sink posts the same `accepted` (and
 * `delivered`) events for them as for a 250 (`eventsForDropped`). The relay read the whole
 * message before the connection was cut, so a real provider would deliver it and report it;
 * the ledger must then confirm that claim from the event, not leave it to on-call.
 */

export type FaultRates = {
  reject451: number;
  reject550: number;
  stallPastVisibility: number;
  stallPastTimeout: number;
  dropAfterData: number;
  /** Twilio: no answer after the message was created (unknown outcome), 429, 5xx, undelivered by the carrier. */
  smsTimeout: number;
  sms429: number;
  sms5xx: number;
  smsUndelivered: number;
  /** Twilio status callbacks of a message: none, each twice, or in reverse order. */
  smsCallbacksDropped: number;
  smsCallbacksDuplicated: number;
  smsCallbacksReordered: number;
};

export type ChaosOptions = {
  seed: number;
  notices: number;
  /** A migrated, otherwise empty database this run may fill. */
  databaseUrl: string;
  workers?: number;
  workerConcurrency?: number;
  /** Due times spread over this window after the start. */
  spreadMs?: number;
  faults?: Partial<FaultRates>;
  /** A random worker is SIGKILLed every [min, max] ms while work is in flight. */
  killEveryMs?: [number, number];
  /**
   * The relay goes down (its port refuses connects) once, `forMs` long, at a moment drawn from
   * the seed in the first half of the spread, then comes back. `false` keeps it up.
   * Default: a fifth of the spread, 3–15 s.
   */
  relayOutage?: { forMs: number } | false;
  /** Share of restarts that carry WORKER_CRASH_AT (the new process kills itself mid-send). */
  crashPointChance?: number;
  /** Each settle phase gives up after this long. */
  settleTimeoutMs?: number;
  log?: (line: string) => void;
  /** Aborting stops the run early; every process and server is still stopped. */
  signal?: AbortSignal;
  /**
   * The queue the workers consume: pg-boss (default) or RabbitMQ at this AMQP URL, on a queue
   * of the run's own (deleted at the end). With RabbitMQ the producer API publishes nothing;
   * the workers' dispatcher publishes due jobs, as in production.
   */
  rabbitmq?: { url: string };
  /**
   * Runs once, after the producer is done, as soon as the sink holds `afterMessages` messages
   * (sends in flight): the failover drill kills the primary and promotes its standby here. Its
   * rows join the summary table; the run goes on through the proxy the processes use.
   */
  midRun?: { afterMessages: number; run: (context: { sink: SmtpSink; log: (line: string) => void }) => Promise<Array<[string, string | number]>> };
  /**
   * How the workers send email: through the SMTP sink (default), or the Postmark peer's batch API
   * with its faults (test/chaos/postmark-relay.ts), whose unknown items only the workers' provider
   * reconciler can settle (the peer posts no webhooks). With `postmark` the relay outage and
   * `midRun` drills are off (they act on the SMTP sink).
   */
  provider?: 'smtp' | 'postmark';
};

export type ChaosReport = {
  seed: number;
  counts: Classified;
  failures: string[];
  kills: PoolStats;
  faults: Record<string, number>;
  producer: ProducerStats;
  replay: { batchId: string; state: string; published: number; dryRun: { total: number; newKeys: number } };
  reconciliation: {
    confirmedByEvents: number;
    confirmedByReconcile: number;
    eventsPosted: number;
    eventPostFailures: number;
    releasedForResend: number;
    /** `--provider postmark`: claims the workers' provider reconciler recorded sent from the Messages API, and those it left to a person. */
    byProviderLookup: { found: number; gaveUp: number } | null;
  };
  /** The SMS side: messages the Twilio peer created, requests it answered (or not), signed callbacks it posted to the console. */
  sms: { messages: number; requests: number; callbacks: number; callbackFailures: number };
  attempts: Record<string, number>;
  overlaps: number;
  /** Windows opening after the due time that the harness set (`planned`) before the notice was due (`set`); wake-ups before and after a window. */
  windows: { planned: number; set: number; tight: number; deferredEarly: number; windowMissed: number };
  phasesMs: Record<string, number>;
  /** When the relay was down, from the start of production, or null without the fault. */
  relayOutage: { downAtMs: number; forMs: number } | null;
  elapsedMs: number;
  table: string;
};

const defaultFaults: FaultRates = {
  reject451: 0.04,
  reject550: 0.01,
  stallPastVisibility: 0.015,
  stallPastTimeout: 0.01,
  dropAfterData: 0.02,
  smsTimeout: 0.04,
  sms429: 0.06,
  sms5xx: 0.03,
  smsUndelivered: 0.04,
  smsCallbacksDropped: 0.08,
  smsCallbacksDuplicated: 0.1,
  smsCallbacksReordered: 0.1,
};

const VISIBILITY_MS = 3_000;
const QUARANTINE_AFTER_MS = 5_000;
// pg-boss hands an expired wake-up out again only after expiry (3 s), a maintenance pass (≤1 s)
// and its retry delay (5 s): a stall must outlast ~9 s for a second worker to arrive while
// the first still waits for its 250, so SMTP_TIMEOUT has to be longer still.
const PGBOSS_RETRY_DELAY_MS = 5_000;
const SMTP_TIMEOUT_MS = 20_000;
const RATE_LIMIT_PER_DOMAIN = 40;
// Shorter than the visibility window: a send Twilio never answers is recorded unknown by the worker that made it.
const TWILIO_TIMEOUT_MS = 2_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error('chaos run aborted');
}

/** `promise`, or a rejection as soon as `signal` aborts. */
async function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  checkAborted(signal);
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Error('chaos run aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** The per-message fault: fixed by the seed, the correlation and how often it came before. */
/** Twilio's faults per request, from the seed, the correlation and how many requests it already made. */
function smsFaultDecider(
  seed: number,
  rates: FaultRates,
  injected: Record<string, number>,
): (to: string, index: number, correlation: string | null) => TwilioFault {
  const requests = new Map<string, number>();
  return (_to, _index, correlation) => {
    if (!correlation) return { kind: 'none' };
    const previous = requests.get(correlation) ?? 0;
    requests.set(correlation, previous + 1);
    const roll = hashUnit(seed, 'sms-fault', correlation, previous);
    const note = (name: string, fault: TwilioFault): TwilioFault => {
      injected[name] = (injected[name] ?? 0) + 1;
      return fault;
    };
    let edge = rates.smsTimeout;
    if (roll < edge) return note('sms_timeout', { kind: 'timeout' });
    edge += rates.sms429;
    if (roll < edge) return note('sms_429', { kind: 'status', status: 429 });
    edge += rates.sms5xx;
    if (roll < edge) return note('sms_5xx', { kind: 'status', status: 503 });
    edge += rates.smsUndelivered;
    if (roll < edge) return note('sms_undelivered', { kind: 'undelivered', errorCode: 30003 });
    return { kind: 'none' };
  };
}

function smsCallbackDecider(seed: number, rates: FaultRates, injected: Record<string, number>): (message: PeerMessage) => CallbackMode {
  return (message) => {
    const roll = hashUnit(seed, 'sms-callbacks', message.correlation ?? message.sid);
    const note = (name: string, mode: CallbackMode): CallbackMode => {
      injected[name] = (injected[name] ?? 0) + 1;
      return mode;
    };
    let edge = rates.smsCallbacksDropped;
    if (roll < edge) return note('sms_callbacks_dropped', 'drop');
    edge += rates.smsCallbacksDuplicated;
    if (roll < edge) return note('sms_callbacks_duplicated', 'duplicate');
    edge += rates.smsCallbacksReordered;
    if (roll < edge) return note('sms_callbacks_reordered', 'reorder');
    return 'normal';
  };
}

function faultDecider(
  seed: number,
  rates: FaultRates,
  injected: Record<string, number>,
): (context: { correlation: string | null; previousAttempts: number }) => MessageFault {
  return ({ correlation, previousAttempts }) => {
    if (!correlation) return { kind: 'none' };
    const roll = hashUnit(seed, 'fault', correlation, previousAttempts);
    const note = (name: string, fault: MessageFault): MessageFault => {
      injected[name] = (injected[name] ?? 0) + 1;
      return fault;
    };
    let edge = rates.reject451;
    if (roll < edge) return note('reject_451', { kind: 'reject', code: 451 });
    edge += rates.reject550;
    if (roll < edge) return note('reject_550', { kind: 'reject', code: 550 });
    edge += rates.stallPastVisibility;
    // Longer than the visibility window, shorter than SMTP_TIMEOUT: the wake-up goes to another
    // worker while the first is still waiting for its 250, which then arrives.
    if (roll < edge)
      return note('stall_past_visibility', {
        kind: 'stall',
        ms: VISIBILITY_MS + PGBOSS_RETRY_DELAY_MS + 5_000 + Math.floor(hashUnit(seed, 'stall', correlation) * 3_000),
      });
    edge += rates.stallPastTimeout;
    // Longer than SMTP_TIMEOUT: the worker records an unknown outcome, the relay delivers later.
    if (roll < edge) return note('stall_past_timeout', { kind: 'stall', ms: SMTP_TIMEOUT_MS + 3_000 });
    edge += rates.dropAfterData;
    if (roll < edge) return note('drop_after_data', { kind: 'drop-after-data' });
    return { kind: 'none' };
  };
}

/**
 * Settled: every scheduled job exists, nothing pending, no stalled message at the sink, and
 * every open claim older than QUARANTINE_AFTER. A send still in flight for an old claim is
 * finished by the graceful worker stop that comes before the final count.
 */
async function waitUntilSettled({
  db,
  sink,
  expectedJobs,
  timeoutMs,
  log,
  extra,
  signal,
}: {
  db: Db;
  sink: ChaosRelay;
  expectedJobs: number;
  timeoutMs: number;
  log: (line: string) => void;
  extra?: () => Promise<boolean>;
  signal?: AbortSignal;
}): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  let lastLog = 0;
  for (;;) {
    checkAborted(signal);
    let progress: Awaited<ReturnType<typeof readProgress>>;
    try {
      progress = await readProgress(db);
    } catch (error) {
      // The database is failing over (the drill): ask again on a fresh connection.
      if (!connectionLost(error) || Date.now() > deadline) throw error;
      await delay(250);
      continue;
    }
    const claimsOld = progress.claimed === 0 || (progress.youngestClaimAgeMs ?? 0) > QUARANTINE_AFTER_MS;
    const settled = progress.jobs >= expectedJobs && progress.pending === 0 && claimsOld && sink.stalled().length === 0 && (extra ? await extra() : true);
    if (settled) return null;
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      log(
        `  … jobs ${progress.jobs}/${expectedJobs}, pending ${progress.pending}, claimed ${progress.claimed}, stalled at sink ${sink.stalled().length}, messages ${sink.messages().length}`,
      );
    }
    if (Date.now() > deadline) return `did not settle within ${timeoutMs} ms: ${JSON.stringify(progress)}, stalled ${sink.stalled().length}`;
    await delay(250);
  }
}

/** A replay the workers publish: its state once it is no longer running, and how many wake-ups it published. */
async function waitForReplayEnd({
  db,
  replayId,
  timeoutMs,
  signal,
}: {
  db: Db;
  replayId: string;
  timeoutMs: number;
  signal?: AbortSignal;
}): Promise<{ state: string; published: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    checkAborted(signal);
    const result = await db.execute<{ state: string; published: number }>(sql`select state, published from replays where id = ${replayId}`);
    const row = result.rows[0];
    if (!row) throw new Error(`replay ${replayId} vanished`);
    if (row.state !== 'running') return row;
    if (Date.now() > deadline) return { state: `still running after ${timeoutMs} ms`, published: row.published };
    await delay(250);
  }
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const started = performance.now();
  const log = options.log ?? (() => undefined);
  const seed = options.seed;
  const prng: Prng = createPrng(seed);
  const rates: FaultRates = { ...defaultFaults, ...options.faults };
  const workerCount = options.workers ?? 3;
  const spreadMs = options.spreadMs ?? Math.max(5_000, options.notices * 8);
  const settleTimeoutMs = options.settleTimeoutMs ?? Math.max(60_000, spreadMs * 4);
  const secret = process.env.NOTICE_KEY_SECRET ?? '';
  if (secret.length < 32) throw new Error('NOTICE_KEY_SECRET must be set (the workers derive the same keys)');
  const phases: Record<string, number> = {};
  let phaseStart = performance.now();
  const phase = (name: string) => {
    phases[name] = Math.round(performance.now() - phaseStart);
    phaseStart = performance.now();
  };

  const webhookSecret = randomBytes(24).toString('hex');
  const twilioAccountSid = `AC${randomBytes(16).toString('hex')}`;
  const twilioAuthToken = randomBytes(16).toString('hex');

  const pool = createPool(options.databaseUrl, { max: 6, applicationName: 'notice-ledger-chaos' });
  const db = createDb(pool);
  const faults: Record<string, number> = {};
  let app: ConsoleServer | null = null;
  let sink: SmtpSink | null = null;
  let peer: TwilioPeer | null = null;
  let postmark: PostmarkRelay | null = null;
  let workers: WorkerPool | null = null;
  const viaPostmark = options.provider === 'postmark';
  if (viaPostmark && options.midRun) throw new Error('--provider postmark runs without the failover and broker drills (they act on the SMTP path)');
  const queueEnv: Record<string, string> = options.rabbitmq
    ? { QUEUE_BACKEND: 'rabbitmq', AMQP_URL: options.rabbitmq.url, QUEUE_NAME: `chaos-${String(seed)}-${randomBytes(4).toString('hex')}` }
    : { QUEUE_BACKEND: 'pgboss' };
  const failures: string[] = [];
  try {
    const planned = planNotices({ prng: prng.fork('plan'), secret, notices: options.notices, spreadMs });
    const operator = await createUser(db, { email: `operator-${seed}@chaos.test`, name: 'Chaos Operator', role: 'operator', passwordHash: null });
    const manager = await createUser(db, { email: `manager-${seed}@chaos.test`, name: 'Chaos Manager', role: 'manager', passwordHash: null });
    if (!operator || !manager) throw new Error('could not create the replay users');
    const { token } = await createApiToken(db, { name: 'chaos producer', createdBy: null, actor: 'system:chaos' });

    // The producer API and the webhooks are served by the console itself, as in production.
    await ensureProductionBuild({ root: path.resolve(import.meta.dirname, '..', '..'), log });
    app = await startConsoleServer({
      env: {
        DATABASE_URL: options.databaseUrl,
        NOTICE_KEY_SECRET: secret,
        NEXTAUTH_SECRET: randomBytes(32).toString('hex'),
        WEBHOOK_SECRET: webhookSecret,
        WEBHOOK_PROVIDERS: 'generic,twilio',
        // Twilio's status callbacks are verified with the auth token against the console's own URL (PUBLIC_BASE_URL ← NEXTAUTH_URL).
        TWILIO_AUTH_TOKEN: twilioAuthToken,
        VISIBILITY_TIMEOUT: `${VISIBILITY_MS}ms`,
        ...queueEnv,
        NOTICE_LEDGER_PROCESS: 'notice-ledger-chaos-console',
        LOG_LEVEL: 'warn',
      },
    });
    sink = await startSmtpSink({
      eventsUrl: `${app.url}/api/webhooks/generic`,
      eventsSecret: webhookSecret,
      eventDelayMs: 50,
      eventTypes: ['accepted', 'delivered'],
      bounce: isBouncingRecipient,
      eventsForDropped: true,
    });
    sink.setFault({ kind: 'per-message', decide: faultDecider(seed, rates, faults) });
    // SMS: the payment recoveries with a phone go to the Twilio peer, whose signed callbacks come back to the console.
    peer = await startTwilioPeer({ accountSid: twilioAccountSid, authToken: twilioAuthToken, callbackDelayMs: 50 });
    peer.setFault(smsFaultDecider(seed, rates, faults));
    peer.setCallbacks(smsCallbackDecider(seed, rates, faults));
    postmark = viaPostmark
      ? await startPostmarkRelay({
          seed,
          injected: faults,
          delays: { pastVisibilityMs: VISIBILITY_MS + PGBOSS_RETRY_DELAY_MS + 5_000, pastTimeoutMs: SMTP_TIMEOUT_MS + 3_000 },
        })
      : null;
    // What the run counts messages at: the SMTP sink, or the Postmark peer.
    const relay: ChaosRelay = postmark ?? sink;

    workers = createWorkerPool({
      size: workerCount,
      log,
      env: {
        DATABASE_URL: options.databaseUrl,
        SMTP_URL: sink.url,
        VISIBILITY_TIMEOUT: `${VISIBILITY_MS}ms`,
        QUARANTINE_AFTER: `${QUARANTINE_AFTER_MS}ms`,
        SMTP_TIMEOUT: `${SMTP_TIMEOUT_MS}ms`,
        TWILIO_ACCOUNT_SID: twilioAccountSid,
        TWILIO_AUTH_TOKEN: twilioAuthToken,
        TWILIO_FROM: '+15005550006',
        TWILIO_API_BASE_URL: peer.baseUrl,
        TWILIO_TIMEOUT: `${TWILIO_TIMEOUT_MS}ms`,
        RATE_LIMIT_PER_SMS_SENDER: '50',
        PUBLIC_BASE_URL: app.url,
        WORKER_CONCURRENCY: String(options.workerConcurrency ?? 8),
        RETRY_BASE: '1s',
        RETRY_CAP: '4s',
        MAX_ATTEMPTS: '4',
        SWEEP_EVERY: '2s',
        RATE_LIMIT_PER_DOMAIN: String(RATE_LIMIT_PER_DOMAIN),
        REPLAY_EVERY: '200ms',
        REPLAY_BATCH: '100',
        // The relay outage: a breaker opens after 5 refused connects and probes every 0.5–2 s.
        TRANSPORT_PROBE_BASE: '500ms',
        TRANSPORT_PROBE_CAP: '2s',
        ...queueEnv,
        ...(postmark
          ? {
              ...postmark.env,
              EMAIL_API_TIMEOUT: `${SMTP_TIMEOUT_MS}ms`,
              // Asked only once no send of the claim can still be waiting for its answer.
              RECONCILE_AFTER: `${SMTP_TIMEOUT_MS + 5_000}ms`,
              RECONCILE_GIVE_UP: `${SMTP_TIMEOUT_MS + 25_000}ms`,
              RECONCILE_EVERY: '1s',
            }
          : {}),
      },
    });
    await workers.start();
    phase('setup');
    log(
      `seed ${seed}: ${planned.length} notices over ${spreadMs} ms, ${workerCount} workers, app ${app.url}, ${postmark ? `postmark ${postmark.peer.baseUrl}` : `sink ${sink.url}`}, twilio ${peer.baseUrl}`,
    );

    const [killMin, killMax] = options.killEveryMs ?? [3_000, 8_000];
    workers.startChaos({ prng: prng.fork('kills'), minMs: killMin, maxMs: killMax, crashPointChance: options.crashPointChance ?? 0.3 });
    const startedAt = Date.now();
    const windows = { planned: planned.filter((notice) => notice.windowOpensAfterDueMs !== null).length, set: 0, tight: 0, deferredEarly: 0, windowMissed: 0 };
    const onCreated = async (notice: (typeof planned)[number], jobId: string) => {
      if (notice.windowOpensAfterDueMs === null) return;
      if (await setWindowOpening(db, { jobId, opensAfterDueMs: notice.windowOpensAfterDueMs })) {
        windows.set += 1;
        if (notice.deadlineAfterMs - notice.windowOpensAfterDueMs <= 3_000) windows.tight += 1;
      }
    };
    const producer = runProducer({ appUrl: app.url, token, planned, startedAt, onCreated });
    // The relay-outage fault: nothing listening on the relay's port for a while (issue 23), while
    // the kills and the per-message faults go on. The breakers must stop claiming and resume.
    const outageForMs =
      options.relayOutage === false || viaPostmark ? 0 : (options.relayOutage?.forMs ?? Math.min(15_000, Math.max(3_000, Math.round(spreadMs / 5))));
    const outageAtMs = Math.round(prng.fork('relay-outage').next() * (spreadMs / 2));
    const outageSink = sink;
    const outage =
      outageForMs > 0
        ? (async () => {
            await delay(outageAtMs);
            await outageSink.goDown();
            faults.relay_outage = (faults.relay_outage ?? 0) + 1;
            log(`  … relay down for ${outageForMs} ms`);
            await delay(outageForMs);
            await outageSink.comeBack();
            log('  … relay back');
            return { downAtMs: outageAtMs, forMs: outageForMs };
          })()
        : Promise.resolve(null);
    const progress = setInterval(() => {
      log(
        `  … producer: ${producer.stats.posts} requests, ${producer.stats.created} reminders created, ${relay.messages().length} messages at the relay, ${workers?.stats().kills ?? 0} kills`,
      );
    }, 15_000);
    try {
      await unlessAborted(producer.done, options.signal);
    } catch (error) {
      // No verdict is worth computing over a console that refuses the producer: say why, with its log.
      throw new Error(
        `${error instanceof Error ? error.message : String(error)} (statuses ${JSON.stringify(producer.stats.statuses)}; console ${app.exit() ? `exited ${JSON.stringify(app.exit())}` : 'still running'}); the console's last log lines:\n${app.logTail().trim().split('\n').slice(-8).join('\n')}`,
        { cause: error },
      );
    } finally {
      clearInterval(progress);
    }
    failures.push(...producer.problems.slice(0, 20));
    phase('produce');
    log(`producer done: ${producer.stats.posts} requests ${JSON.stringify(producer.stats.statuses)}`);

    let midRunRows: Array<[string, string | number]> = [];
    if (options.midRun) {
      const { afterMessages, run } = options.midRun;
      while (sink.messages().length < afterMessages) {
        checkAborted(options.signal);
        await delay(50);
      }
      midRunRows = await run({ sink, log });
    }
    const relayOutage = await unlessAborted(outage, options.signal);
    const scheduled = producer.stats.created;
    const firstSettle = await waitUntilSettled({ db, sink: relay, expectedJobs: scheduled, timeoutMs: settleTimeoutMs, log, signal: options.signal });
    if (firstSettle) failures.push(`first pass ${firstSettle}`);
    phase('process');
    log(`first pass settled: ${relay.messages().length} messages at the relay, ${workers.stats().kills} kills`);

    // The whole window again, through the replay path, with the chaos still running.
    const actor = (row: { id: string; email: string; role: Actor['role'] }): Actor => ({ id: row.id, email: row.email, role: row.role });
    const windowFilter = { dueFrom: new Date(startedAt - 60_000).toISOString(), dueTo: new Date(startedAt + spreadMs + 60_000).toISOString() };
    const requested = await requestReplay(db, { actor: actor(operator), input: { reason: 'chaos: replay the whole window', filter: windowFilter }, secret });
    if (!requested.ok) throw new Error(`replay request refused: ${requested.refusal.message}`);
    const replayId = requested.data.replay.id;
    const selfApproval = await decideReplay(db, {
      id: replayId,
      actor: { ...actor(operator), role: 'manager' },
      decision: 'approve',
      reason: 'approving my own',
    });
    if (selfApproval.ok) failures.push('replay: the requester could approve their own replay');
    const approved = await decideReplay(db, { id: replayId, actor: actor(manager), decision: 'approve', reason: 'chaos: approved by a second person' });
    if (!approved.ok) throw new Error(`replay approval refused: ${approved.refusal.message}`);
    const running = await startReplay(db, { id: replayId, actor: actor(operator), reason: 'chaos: run' });
    if (!running.ok) throw new Error(`replay start refused: ${running.refusal.message}`);
    // The workers publish it, paced per domain, while they are being killed and restarted.
    const ran = await waitForReplayEnd({ db, replayId, timeoutMs: settleTimeoutMs, signal: options.signal });
    const batchId = requested.data.replay.batchId;
    const replayReport: ChaosReport['replay'] = {
      batchId,
      state: ran.state,
      published: ran.published,
      dryRun: { total: requested.data.dryRun.counts.total, newKeys: requested.data.dryRun.counts.newKeys },
    };
    if (ran.state !== 'completed') failures.push(`replay ended ${ran.state}`);
    const secondSettle = await waitUntilSettled({
      db,
      sink: relay,
      expectedJobs: scheduled,
      timeoutMs: settleTimeoutMs,
      log,
      signal: options.signal,
      extra: async () => (options.rabbitmq ? (await jobsWokenByBatch(db, batchId)) >= ran.published : (await liveWakeups(db, batchId)) === 0),
    });
    if (secondSettle) failures.push(`replay pass ${secondSettle}`);
    phase('replay');
    log(`replay ${batchId} ${ran.state}: ${ran.published} wake-ups published`);

    await workers.stopChaos();

    // Provider evidence: every event the sink still owes, then the periodic reconciliation.
    const reconcileAll = async (): Promise<number> => {
      let confirmed = 0;
      for (;;) {
        const pass = await reconcileQuarantine(db, { limit: 500 });
        confirmed += pass.confirmed.length;
        if (pass.confirmed.length === 0) return confirmed;
      }
    };
    sink.releaseStalled();
    await sink.flushEvents();
    await peer.settle();
    // Through Postmark nothing posts events: the workers' provider reconciler must settle every
    // claim the peer holds (asked RECONCILE_AFTER after the claim); wait for it, then count.
    type LookupCounts = ChaosReport['reconciliation']['byProviderLookup'];
    const waitForProviderReconciler = async (stage: string): Promise<LookupCounts> => {
      if (!postmark) return null;
      const atPeer = new Set(postmark.messages().map((message) => message.correlation));
      const deadline = Date.now() + SMTP_TIMEOUT_MS * 6;
      for (;;) {
        checkAborted(options.signal);
        const open = (await listQuarantined(db, { quarantineAfterMs: 0, limit: 5_000 })).filter((row) => atPeer.has(correlationOf(row.noticeKey)));
        if (open.length === 0) break;
        if (Date.now() > deadline) {
          failures.push(`${stage}: the provider reconciler left ${open.length} claims the Postmark peer holds unsettled`);
          break;
        }
        await delay(500);
      }
      const counts = await countProviderLookups(db);
      log(`provider reconciler (${stage}): ${counts.found} claims found at Postmark and sent, ${counts.gaveUp} left to a person`);
      return counts;
    };
    let byProviderLookup = await waitForProviderReconciler('after the replay');
    const confirmedByEvents = await countConfirmations(db);
    let confirmedByReconcile = await reconcileAll();
    phase('reconcile');

    // On-call: a claim the provider has no trace of is released for resend (the console's bulk
    // action); the workers (no more kills, sink faults still on) send it again via the sweeper.
    // A message the Twilio peer created counts as a trace too (on-call would find it in Twilio's log).
    const atSink = new Set([...relay.messages().map((message) => message.correlation), ...peer.messages().map((message) => message.correlation)]);
    // Only claims older than SMTP_TIMEOUT: no send for them can still be on the wire.
    const stuck = (await listQuarantined(db, { quarantineAfterMs: SMTP_TIMEOUT_MS + 2_000, limit: 5_000 }))
      .map((row) => row.noticeKey)
      .filter((key) => !atSink.has(correlationOf(key)));
    const released =
      stuck.length === 0
        ? 0
        : (
            await resolveQuarantine(db, {
              action: 'release',
              selection: { keys: stuck },
              actor: manager.email,
              reason: 'chaos: no provider trace, resend',
              quarantineAfterMs: SMTP_TIMEOUT_MS + 2_000,
            })
          ).resolved.length;
    const onCallWait = await waitUntilSettled({ db, sink: relay, expectedJobs: scheduled, timeoutMs: settleTimeoutMs, log, signal: options.signal });
    if (onCallWait) failures.push(`after the on-call release ${onCallWait}`);
    // A resend of a released claim can end unknown too (the peer's faults stay on): the workers' reconciler settles it before they stop.
    // Found: over the whole run; left to a person: when on-call looked (the release settles them).
    const afterResends = await waitForProviderReconciler('after the resends');
    if (afterResends && byProviderLookup) byProviderLookup = { found: afterResends.found, gaveUp: byProviderLookup.gaveUp };
    log(`on-call released ${released} of ${stuck.length} claims with no trace at the sink for resend`);
    await workers.stop();
    sink.releaseStalled();
    await sink.flushEvents();
    await peer.settle();
    confirmedByReconcile += await reconcileAll();
    phase('resend');

    const quarantineWait = await waitUntilSettled({ db, sink: relay, expectedJobs: scheduled, timeoutMs: QUARANTINE_AFTER_MS * 4, log });
    if (quarantineWait) failures.push(`after reconciliation ${quarantineWait}`);
    const outcomes = await readOutcomes(
      db,
      planned.map((notice) => notice.noticeKey),
    );
    const dbNow = (await db.execute<{ now: Date | string }>(sql`select now() as now`)).rows[0]?.now ?? new Date();
    // Both channels' messages, counted together: at most one per correlation and per business fact, whichever channel.
    const callbacks = peer.callbacks();
    const smsEvidence = new Set(callbacks.filter((callback) => callback.status === 200).map((callback) => callback.params.MessageSid));
    const messages = [
      // A message the Postmark peer holds is a hand-over (it refused the bouncing recipients with 406).
      ...relay.messages().map((message) => ({
        correlation: message.correlation,
        outcome: message.outcome,
        handOver: postmark !== null || !message.to.every(isBouncingRecipient),
      })),
      ...peer.messages().map((message) => ({ correlation: message.correlation, outcome: 'accepted' as const, handOver: smsEvidence.has(message.sid) })),
    ];
    const counts = classifyRun({ planned, outcomes, messages, quarantineAfterMs: QUARANTINE_AFTER_MS, now: new Date(dbNow) });
    failures.push(...invariantFailures(counts));
    const kills = workers.stats();
    failures.push(...kills.unexpectedExits);
    const consoleExit = app.exit();
    if (consoleExit) failures.push(`the console (next start) exited during the run: ${JSON.stringify(consoleExit)}`);
    const posted = sink.postedEvents();
    const eventPostFailures = posted.filter((entry) => entry.status !== 200).length;
    if (eventPostFailures > 0) failures.push(`${eventPostFailures} event posts to the webhook failed`);
    const callbackFailures = callbacks.filter((callback) => callback.status !== 200).length;
    if (callbackFailures > 0) failures.push(`${callbackFailures} Twilio status callbacks to the console failed`);
    const smsMessages = peer.messages().length;
    const attempts = await countAttempts(db);
    const overlaps = await countOverlaps(db);
    const windowAttempts = await countWindowAttempts(db);
    windows.deferredEarly = windowAttempts.early;
    windows.windowMissed = windowAttempts.missed;
    const elapsedMs = Math.round(performance.now() - started);
    const crashPointKills = Object.values(kills.crashPointKills).reduce((total, count) => total + count, 0);
    const faultTotal = Object.values(faults).reduce((total, count) => total + count, 0);
    const table = formatTable([
      ['seed', seed],
      ...countRows(counts),
      ['kills (SIGKILL at random)', kills.kills],
      [
        'kills (WORKER_CRASH_AT)',
        `${crashPointKills}${
          crashPointKills
            ? ` (${Object.entries(kills.crashPointKills)
                .map(([point, count]) => `${point} ${count}`)
                .join(', ')})`
            : ''
        }`,
      ],
      ['worker restarts', kills.restarts],
      [
        'faults injected',
        `${faultTotal} (${Object.entries(faults)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([kind, count]) => `${kind} ${count}`)
          .join(', ')})`,
      ],
      [
        'producer requests',
        `${producer.stats.posts} (${Object.entries(producer.stats.statuses)
          .map(([status, count]) => `${status}: ${count}`)
          .join(', ')})`,
      ],
      ['evidence resolved by producer', producer.stats.evidenceResolved],
      ['replay', `${ran.state}, ${ran.published} wake-ups, dry run ${replayReport.dryRun.newKeys} new of ${replayReport.dryRun.total}`],
      [
        'send-path attempts',
        Object.entries(attempts)
          .map(([outcome, count]) => `${outcome} ${count}`)
          .join(', '),
      ],
      ['redeliveries refused mid-send', `${overlaps} (the first send then committed sent)`],
      [
        'windows opening after due',
        `${windows.set} set of ${windows.planned} planned (${windows.tight} tight, ≤ 3 s); wake-ups before a window ${windows.deferredEarly}, after one ${windows.windowMissed}`,
      ],
      ['claims confirmed by events', confirmedByEvents],
      ['claims confirmed by reconcileQuarantine', confirmedByReconcile],
      ...(byProviderLookup
        ? ([
            [
              'claims settled by the provider reconciler (Postmark Messages API)',
              `${byProviderLookup.found} sent, ${byProviderLookup.gaveUp} left to a person`,
            ],
          ] as Array<[string, string | number]>)
        : []),
      ...(postmark
        ? ([
            ['Postmark peer', `${postmark.messages().length} messages accepted, ${postmark.peer.requests()} send requests, ${postmark.peer.lookups()} lookups`],
          ] as Array<[string, string | number]>)
        : []),
      ['released for resend by on-call', `${released} (claims with no trace at the sink)`],
      ['provider event posts', `${posted.length} (${eventPostFailures} failed)`],
      ['SMS at the Twilio peer', `${smsMessages} messages, ${peer.requests()} requests, ${callbacks.length} signed callbacks (${callbackFailures} failed)`],
      [
        'phases (ms)',
        Object.entries(phases)
          .map(([name, ms]) => `${name} ${ms}`)
          .join(', '),
      ],
      ...midRunRows,
      ['elapsed', `${(elapsedMs / 1000).toFixed(1)} s`],
    ]);
    return {
      seed,
      counts,
      failures,
      kills,
      faults,
      producer: producer.stats,
      replay: replayReport,
      reconciliation: {
        confirmedByEvents,
        confirmedByReconcile,
        eventsPosted: posted.length,
        eventPostFailures,
        releasedForResend: released,
        byProviderLookup,
      },
      sms: { messages: smsMessages, requests: peer.requests(), callbacks: callbacks.length, callbackFailures },
      attempts,
      overlaps,
      windows,
      phasesMs: phases,
      relayOutage,
      elapsedMs,
      table,
    };
  } finally {
    await workers?.stopChaos();
    await workers?.stop();
    if (options.rabbitmq && queueEnv.QUEUE_NAME) await deleteRabbitQueue(options.rabbitmq.url, queueEnv.QUEUE_NAME).catch(() => undefined);
    await sink?.stop();
    await postmark?.stop();
    await peer?.stop();
    await app?.stop();
    await pool.end();
  }
}
