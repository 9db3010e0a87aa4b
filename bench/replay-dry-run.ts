import os from 'node:os';
import { createDb, createPool } from '../db/client';
import { noticeKey } from '../lib/ledger/notice-key';
import type { NoticeFact } from '../lib/ledger/notice-types';
import { dryRunKeys } from '../lib/replay/service';
import { printTable, startBenchDatabase } from './support';

/**
 * A replay's dry run over an uploaded list of 1 M upstream jobs (BENCH_KEYS): derive every
 * key in Node with noticeKey(), then count them against a ledger of BENCH_LEDGER rows, half
 * of the uploaded keys already in it. Prints keys/s for both steps. Not part of npm test.
 */

const KEYS = Number(process.env.BENCH_KEYS ?? 1_000_000);
const FILLER = Number(process.env.BENCH_LEDGER ?? 3_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const secret = process.env.NOTICE_KEY_SECRET ?? 'bench-secret-0123456789abcdef0123456789abcdef';

async function main(): Promise<void> {
  const database = await startBenchDatabase('nl_bench_replay');
  const pool = createPool(database.url, { max: 4, applicationName: 'bench-replay' });
  const db = createDb(pool);
  try {
    let started = performance.now();
    const keys: string[] = new Array<string>(KEYS);
    for (let i = 0; i < KEYS; i += 1) {
      const fact: NoticeFact = { type: 'renewal_notice_t72', identity: { subscription_id: `sub_${i}`, period_start: '2026-11-01' }, revision: 0 };
      keys[i] = noticeKey(secret, fact);
    }
    const deriveMs = performance.now() - started;

    console.log(`Seeding ${FILLER.toLocaleString()} unrelated ledger rows and ${(KEYS / 2).toLocaleString()} of the uploaded keys …`);
    await pool.query(`
      insert into notice_ledger (notice_key, notice_type, identity, state, claimed_at, sent_at)
      select md5(i::text) || md5((-i)::text), 'renewal_notice_t72', '{}', 'sent', now() - interval '3 days', now() - interval '3 days'
      from generate_series(1, ${FILLER}) as i`);
    for (let offset = 0; offset < KEYS; offset += 100_000) {
      // Every other uploaded key is already in the ledger; a few of them still claimed.
      const chunk = keys.slice(offset, offset + 100_000).filter((_, index) => index % 2 === 0);
      await pool.query(
        `insert into notice_ledger (notice_key, notice_type, identity, state, claimed_at, sent_at)
         select k, 'renewal_notice_t72', '{}', case when n % 100 = 0 then 'claimed' else 'sent' end, now(), case when n % 100 = 0 then null else now() end
         from unnest($1::text[]) with ordinality as t(k, n)`,
        [chunk],
      );
    }
    await pool.query('analyze notice_ledger');

    const rows: Record<string, string | number>[] = [{ step: 'derive keys (noticeKey, Node)', ms: Math.round(deriveMs), 'keys/s': Math.round(KEYS / (deriveMs / 1000)).toLocaleString() }];
    for (let run = 1; run <= RUNS; run += 1) {
      started = performance.now();
      const result = await dryRunKeys(db, { keys });
      const ms = performance.now() - started;
      if (run === 1) console.log(`dry run: ${JSON.stringify(result.counts)}; ${result.verdict.message}`);
      rows.push({ step: `dry run against the ledger, run ${run}`, ms: Math.round(ms), 'keys/s': Math.round(KEYS / (ms / 1000)).toLocaleString() });
    }
    console.log(`load average while measuring: ${(os.loadavg()[0] ?? 0).toFixed(1)} on ${os.cpus().length} cores`);
    printTable(`Replay dry run over ${KEYS.toLocaleString()} uploaded keys (ledger ${(FILLER + KEYS / 2).toLocaleString()} rows)`, rows);
  } finally {
    await pool.end();
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
