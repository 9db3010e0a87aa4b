import { startEmbeddedPostgres } from '@/db/embedded';
import pg from 'pg';
const server = await startEmbeddedPostgres({ dir: '/tmp/notice-ledger-console-scale-pg', database: 'bench_console' });
const client = new pg.Client(server.url);
await client.connect();
const q = async (text: string) => (await client.query(text)).rows;
if (process.argv[2] === 'tighten') {
  await q(`update reminder_jobs set deadline_at = due_at + interval '1000 minutes' where state = 'pending' and abs(hashtext(notice_key)) % 10 = 3`);
  await q('vacuum analyze reminder_jobs');
}
console.log(await q(`select indexname from pg_indexes where tablename = 'reminder_jobs' and indexname in ('reminder_jobs_open_deadline_idx','reminder_jobs_missed_idx')`));
const offset = Number(process.argv[3] ?? 0);
const stat = async () => (await q(`select n_tup_upd::int as upd, n_tup_hot_upd::int as hot from pg_stat_user_tables where relname = 'reminder_jobs'`))[0] as { upd: number; hot: number };
for (const [label, set] of [
  ['wake-up published (sweeper)', `wakeup_published_at = now()`],
  ['deferral (next attempt, updated_at)', `next_attempt_at = next_attempt_at + interval '1 minute', updated_at = now()`],
  ['attempts += 1 only', `attempts = attempts + 1`],
] as const) {
  await q('select pg_stat_force_next_flush()');
  const before = await stat();
  await q(`update reminder_jobs set ${set} where id in (select id from reminder_jobs where state = 'pending' order by id offset ${offset} limit 5000)`);
  await q('select pg_stat_force_next_flush()');
  await new Promise((r) => setTimeout(r, 600));
  const after = await stat();
  console.log(`${label}: ${after.upd - before.upd} updated, ${after.hot - before.hot} HOT`);
}
await client.end();
await server.stop();
