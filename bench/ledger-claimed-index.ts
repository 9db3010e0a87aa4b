import pg from 'pg';
import { provisionDatabase } from '@/testing/database';
import { measureLedgerLimit } from './ledger-limit';
import { printTable } from './support';

/**
 * Is the partial index `notice_ledger_claimed_idx` (claimed_at where state = 'claimed') worth
 * its write cost? Two databases on one server, identical but for that index:
 *  - write cost: the bare ledger path (claim insert + commit, result update + commit) at
 *    BENCH_SESSIONS, interleaved over BENCH_ROUNDS, plus how many updates were HOT;
 *  - read side: the quarantine count/list over BENCH_LEDGER_ROWS `sent` rows and a few
 *    hundred `claimed` ones, as an operator's console and the worker's gauge run them.
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const sessions = Number(process.env.BENCH_SESSIONS ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const rows = Number(process.env.BENCH_LEDGER_ROWS ?? 1_000_000);

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

async function hotStats(url: string): Promise<{ updates: number; hot: number }> {
  return withClient(url, async (client) => {
    await client.query('select pg_stat_force_next_flush()').catch(() => undefined);
    const result = await client.query<{ updates: number; hot: number }>(
      "select n_tup_upd::int as updates, n_tup_hot_upd::int as hot from pg_stat_user_tables where relname = 'notice_ledger'",
    );
    return result.rows[0] ?? { updates: 0, hot: 0 };
  });
}

async function quarantineQueryMs(url: string): Promise<{ count: number; list: number }> {
  return withClient(url, async (client) => {
    const time = async (text: string) => {
      const samples: number[] = [];
      for (let i = 0; i < 5; i += 1) {
        const plan = await client.query<{ 'QUERY PLAN': Array<{ 'Execution Time': number }> }>(`explain (analyze, format json) ${text}`);
        samples.push(plan.rows[0]?.['QUERY PLAN'][0]?.['Execution Time'] ?? Number.NaN);
      }
      return samples.sort((a, b) => a - b)[2] ?? Number.NaN;
    };
    const where = "state = 'claimed' and claimed_at < now() - make_interval(secs => 900)";
    return {
      count: await time(`select count(*) from notice_ledger where ${where}`),
      list: await time(`select notice_key, claimed_at from notice_ledger where ${where} order by claimed_at limit 500`),
    };
  });
}

const database = await provisionDatabase({ prefix: 'bench_idx_with', serverUrl: process.env.DATABASE_URL });
// The second database on the same server, so both variants share its CPU and cache.
const without = await provisionDatabase({ prefix: 'bench_idx_without', serverUrl: database.serverUrl }).catch(async (error: unknown) => {
  await database.release();
  throw error;
});
try {
  const withUrl = database.url;
  const withoutUrl = without.url;
  await withClient(withoutUrl, (c) => c.query('drop index if exists notice_ledger_claimed_idx'));
  const variants = [
    { label: 'with claimed_idx', url: withUrl },
    { label: 'without', url: withoutUrl },
  ];
  const rates = new Map<string, number[]>(variants.map((v) => [v.label, []]));
  for (let round = 0; round < rounds; round += 1) {
    for (const v of variants) {
      const r = await measureLedgerLimit(v.url, sessions, seconds);
      rates.get(v.label)?.push(r.perSecond);
      console.log(`round ${String(round + 1)} ${v.label}: ${Math.round(r.perSecond).toString()} notices/s`);
    }
  }
  const hot = await Promise.all(variants.map((v) => hotStats(v.url)));
  for (const v of variants) {
    await withClient(v.url, async (client) => {
      await client.query(
        `insert into notice_ledger (notice_key, notice_type, identity, state, claimed_at, sent_at, provider_message_id, recipient_domain)
         select md5('s' || i) || md5('t' || i), 'renewal_notice_t72', '{}'::jsonb, 'sent', now() - interval '2 days' + i * interval '1 ms', now() - interval '2 days', 'p' || i, 'example.com'
         from generate_series(1, $1::int) as i on conflict do nothing`,
        [rows],
      );
      await client.query(
        `insert into notice_ledger (notice_key, notice_type, identity, state, claim_token, claimed_at, recipient_domain)
         select md5('c' || i) || md5('d' || i), 'renewal_notice_t72', '{}'::jsonb, 'claimed', gen_random_uuid(), now() - (i || ' minutes')::interval, 'example.com'
         from generate_series(1, 300) as i on conflict do nothing`,
      );
      await client.query('vacuum analyze notice_ledger');
    });
  }
  const reads = await Promise.all(variants.map((v) => quarantineQueryMs(v.url)));
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? Number.NaN;
  printTable(
    `notice_ledger_claimed_idx: write cost (${String(sessions)} sessions, median of ${String(rounds)} × ${String(seconds)} s) and quarantine reads over ${String(rows)} sent rows`,
    variants.map((v, i) => ({
      variant: v.label,
      'ledger path notices/s': Math.round(median(rates.get(v.label) ?? [])),
      runs: (rates.get(v.label) ?? []).map((x) => Math.round(x)).join(' / '),
      'HOT updates': `${String(hot[i]?.hot ?? 0)} of ${String(hot[i]?.updates ?? 0)}`,
      'quarantine count ms': (reads[i]?.count ?? Number.NaN).toFixed(2),
      'quarantine list ms': (reads[i]?.list ?? Number.NaN).toFixed(2),
    })),
  );
} finally {
  await without.release();
  await database.release();
}
