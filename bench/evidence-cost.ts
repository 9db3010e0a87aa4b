import { createPool } from '@/db/client';
import { provisionDatabase } from '@/testing/database';
import { postmasterOf } from './cpu';
import { printTable, recordTargets } from './support';
import { measureWorker, printWorkerRuns, type WorkerRun } from './worker-e2e';

/**
 * The evidence record's cost on the send path (issue 28): the same worker on the same required
 * notices (auto_renewal_notice for California, the kind EVIDENCE_FOR=required keeps a record for)
 * with the record on (EVIDENCE_FOR=required) and off (EVIDENCE_FOR=none), interleaved for
 * `rounds` rounds (on/off, then off/on) so a change in machine load hits both alike; medians.
 * Both run the maintenance pass every second (EVIDENCE_SIGN_EVERY=1s), so "on" pays for its
 * chaining and signing during the measurement too, not only the entry its result commit writes.
 * Each "on" run is checked to have written one notice.sent entry per notice (and "off" none):
 * a comparison on notices that keep no record would measure nothing. Every run starts from a
 * settled database (bench/support.ts settleDatabase), and what it left behind (its last entries'
 * chaining, vacuuming the chainer's dead rows, writing the pages) is measured after it as its
 * upkeep: the all-in CPU per notice below counts it, the throughput cannot.
 *
 * Part of `npm run bench:worker` (bench/run.ts, at its best configuration); alone:
 *   BENCH_NOTICES=4000 BENCH_CONCURRENCY=32 npx tsx bench/evidence-cost.ts
 */

export type EvidenceCost = { on: WorkerRun[]; off: WorkerRun[]; ratio: number; entriesPerRun: number[]; chainedAtEnd: number[] };

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 === 1
    ? (sorted[(sorted.length - 1) / 2] ?? Number.NaN)
    : ((sorted[sorted.length / 2 - 1] ?? Number.NaN) + (sorted[sorted.length / 2] ?? Number.NaN)) / 2;
};

export async function measureEvidenceCost(
  url: string,
  {
    processes,
    concurrency,
    notices,
    postmaster,
    rounds = 3,
  }: { processes: number; concurrency: number; notices: number; postmaster: number | null; rounds?: number },
): Promise<EvidenceCost> {
  const pool = createPool(url, { max: 2 });
  const counts = async () =>
    (
      await pool.query<{ entries: number; chained: number }>(
        "select count(*)::int as entries, count(c.seq)::int as chained from evidence_entries e left join evidence_chain c on c.entry_id = e.id where e.kind = 'notice.sent'",
      )
    ).rows[0] ?? { entries: 0, chained: 0 };
  const result: EvidenceCost = { on: [], off: [], ratio: Number.NaN, entriesPerRun: [], chainedAtEnd: [] };
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const evidence of round % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
        const before = await counts();
        const run = await measureWorker(url, {
          processes,
          concurrency,
          notices,
          postmaster,
          kind: 'required',
          workerEnv: { EVIDENCE_FOR: evidence === 'on' ? 'required' : 'none', EVIDENCE_SIGN_EVERY: '1s' },
        });
        const after = await counts();
        const written = after.entries - before.entries;
        if (written !== (evidence === 'on' ? notices : 0))
          throw new Error(`evidence ${evidence}: ${String(written)} notice.sent entries for ${String(notices)} notices`);
        if (evidence === 'on') {
          result.on.push(run);
          result.entriesPerRun.push(written);
          result.chainedAtEnd.push(after.chained - before.chained);
        } else result.off.push(run);
        console.log(
          `round ${String(round + 1)} evidence ${evidence}: ${Math.round(run.perSecond).toString()} notices/s, CPU ms/notice worker ${run.cpu.workerMs.toFixed(2)} + postgres ${run.cpu.serverMs.toFixed(2)}, upkeep after ${run.upkeepMs.toFixed(2)}${evidence === 'on' ? `; ${String(written)} entries, ${String(after.chained - before.chained)} chained after its upkeep` : ''}`,
        );
      }
    }
  } finally {
    await pool.end();
  }
  const onRate = median(result.on.map((run) => run.perSecond));
  const offRate = median(result.off.map((run) => run.perSecond));
  result.ratio = onRate / offRate;
  printWorkerRuns([...result.off, ...result.on]);
  const cpuOf = (runs: WorkerRun[]) => ({
    worker: median(runs.map((run) => run.cpu.workerMs)),
    server: median(runs.map((run) => run.cpu.serverMs)),
    upkeep: median(runs.map((run) => run.upkeepMs)),
    allIn: median(runs.map((run) => run.cpu.workerMs + run.cpu.serverMs + run.upkeepMs)),
  });
  const onCpu = cpuOf(result.on);
  const offCpu = cpuOf(result.off);
  const loss = 1 - result.ratio;
  const target = loss <= 0.1 ? '≤ 10 % slower: ok' : '≤ 10 % slower: MISS';
  const label = `${String(processes)}×${String(concurrency)}`;
  printTable(`evidence on vs off (${label}, ${String(notices)} required notices, median of ${String(rounds)})`, [
    {
      figure: 'notices/s: off / on',
      value: `${Math.round(offRate).toString()} / ${Math.round(onRate).toString()} (on = ${(result.ratio * 100).toFixed(1)} % of off)`,
      target,
    },
    {
      figure: 'CPU ms/notice, worker + postgres: off',
      value: `${offCpu.worker.toFixed(2)} + ${Number.isNaN(offCpu.server) ? '(not local)' : offCpu.server.toFixed(2)}`,
      target: '',
    },
    {
      figure: 'CPU ms/notice, worker + postgres: on',
      value: `${onCpu.worker.toFixed(2)} + ${Number.isNaN(onCpu.server) ? '(not local)' : onCpu.server.toFixed(2)}`,
      target: '',
    },
    {
      figure: 'upkeep after a run, ms/notice: off / on',
      value: Number.isNaN(onCpu.upkeep) ? '(not local)' : `${offCpu.upkeep.toFixed(2)} / ${onCpu.upkeep.toFixed(2)}`,
      target: '',
    },
    {
      figure: 'all-in CPU ms/notice (worker + postgres + upkeep): off / on',
      value: Number.isNaN(onCpu.allIn)
        ? '(not local)'
        : `${offCpu.allIn.toFixed(2)} / ${onCpu.allIn.toFixed(2)} (on costs ${((onCpu.allIn / offCpu.allIn - 1) * 100).toFixed(1)} % more)`,
      target: '',
    },
  ]);
  await recordTargets([
    {
      figure: `evidence on / off, worker throughput (${label})`,
      value: `${(result.ratio * 100).toFixed(1)} %`,
      target: loss <= 0.1 ? '≥ 90 %: ok' : '≥ 90 %: MISS',
    },
    {
      figure: `evidence on / off, all-in CPU per notice incl. upkeep (${label})`,
      value: Number.isNaN(onCpu.allIn) ? '(not local)' : `+${((onCpu.allIn / offCpu.allIn - 1) * 100).toFixed(1)} %`,
      target: '',
    },
  ]);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.env.NOTICE_KEY_SECRET ??= 'bench-secret-0123456789abcdef0123456789abcdef';
  const database = await provisionDatabase({ prefix: 'bench_evidence', serverUrl: process.env.DATABASE_URL });
  try {
    await measureEvidenceCost(database.url, {
      processes: Number(process.env.BENCH_PROCESSES ?? 1),
      concurrency: Number(process.env.BENCH_CONCURRENCY ?? 32),
      notices: Number(process.env.BENCH_NOTICES ?? 4_000),
      postmaster: postmasterOf(database.dataDir),
      rounds: Number(process.env.BENCH_ROUNDS ?? 3),
    });
  } finally {
    await database.release();
  }
}
