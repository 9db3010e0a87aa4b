import { createHash, type Hash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { createDb, createPool } from '@/db/client';
import type { DryRunCounts } from '@/db/schema/replays';
import { canonicalNotice, noticeKey } from '@/lib/ledger/notice-key';
import type { NoticeFact } from '@/lib/windows/notice-fact';
import { textArrayLiteral } from '@/db/queries/replay-dry-run';
import { sortedDistinctChunks } from '@/lib/replay/dry-run';
import { dryRunKeys, dryRunUpload } from '@/lib/replay/service';
import { mergeDryRunCounts } from '@/lib/replay/verdict';
import { provisionDatabase } from '@/testing/database';
import { referenceNoticeKey } from '@/testing/notice-key-reference';
import { openKeptDatabase, printTable, recordTargets, type KeptDatabase } from './support';

/**
 * A replay's dry run over an uploaded list of BENCH_KEYS (1 M) upstream jobs against a ledger
 * of BENCH_LEDGER (10 M) rows, half of the uploaded keys already in it (1 % of those still
 * claimed). Not part of npm test; run it under the shared lock:
 *
 *   flock /tmp/notice-ledger-bench.lock npx tsx bench/replay-dry-run.ts
 *
 * BENCH_KEEP=dir keeps the embedded PostgreSQL (and its seeded ledger) in `dir` and reuses it
 * on the next run with the same BENCH_KEYS/BENCH_LEDGER (seeding 10 M rows takes minutes).
 * With DATABASE_URL the ledger lives in the database `nl_bench_replay` there and is reused the
 * same way. BENCH_RUNS (3) repeats each measurement, old and new alternating in this process:
 *
 * - key derivation: the frozen reference (createHmac per key over the array-built canonical
 *   form) against noticeKey(); also HMAC with the pads absorbed once and hash.copy() per key,
 *   which was measured and not taken (slower than createHmac on Node 20);
 * - the ledger lookup of the 1 M derived keys: the previous statement (JS Set + sort, lateral
 *   primary-key probe per key, 100 k per statement, two in flight) against countKeysAgainstLedger;
 * - the whole dry run from facts to verdict: both steps, old against new;
 * - what an operator's upload costs end to end: dryRunUpload() over a CSV of the same facts
 *   (BENCH_UPLOAD_ROWS, default BENCH_KEYS), which parses and validates every row first.
 *
 * BENCH_COVERING=1 measures with an extra index `(notice_key) include (state)` (built before,
 * dropped after): what an index-only lookup would gain. Not in the schema: it costs ~1 GB at
 * 10 M rows and a write on every claim.
 */

const KEYS = Number(process.env.BENCH_KEYS ?? 1_000_000);
const LEDGER = Number(process.env.BENCH_LEDGER ?? 10_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const KEEP = process.env.BENCH_KEEP;
const UPLOAD_ROWS = Number(process.env.BENCH_UPLOAD_ROWS ?? KEYS);
const COVERING = process.env.BENCH_COVERING === '1';
const secret = process.env.NOTICE_KEY_SECRET ?? 'bench-secret-0123456789abcdef0123456789abcdef';
const DATABASE = 'nl_bench_replay';

/** BENCH_KEEP or DATABASE_URL: the kept ledger (bench/support.ts); otherwise a throw-away database. */
async function openDatabase(): Promise<KeptDatabase> {
  if (KEEP || process.env.DATABASE_URL) return openKeptDatabase({ name: DATABASE, dir: KEEP ? path.join(path.resolve(KEEP), 'pg') : undefined });
  return provisionDatabase({ prefix: 'nl_bench_replay' });
}

function uploadedFact(i: number): NoticeFact {
  return { type: 'renewal_notice_t72', identity: { subscription_id: `sub_${i}`, period_start: '2026-11-01' }, revision: 0 };
}

/** What the seeded ledger was made from; a kept database is reused only when it matches. */
function seedSignature(): string {
  return createHash('sha256')
    .update(JSON.stringify({ KEYS, LEDGER, secret, version: 4 }))
    .digest('hex');
}

async function seedLedger(pool: pg.Pool, keys: readonly string[]): Promise<void> {
  await pool.query('create table if not exists bench_replay_seed (signature text primary key)');
  const found = await pool.query('select 1 from bench_replay_seed where signature = $1', [seedSignature()]);
  if (found.rowCount === 1) {
    console.log(`Reusing the seeded ledger (${LEDGER.toLocaleString('en')} rows).`);
    return;
  }
  const filler = LEDGER - Math.ceil(keys.length / 2);
  const started = performance.now();
  console.log(`Seeding ${filler.toLocaleString('en')} unrelated ledger rows and ${Math.ceil(keys.length / 2).toLocaleString('en')} of the uploaded keys …`);
  await pool.query('truncate notice_ledger, bench_replay_seed, reminder_jobs cascade');
  // Rows as wide as the worker writes them; the primary key is rebuilt after the bulk load
  // (a sorted build, minutes faster than 10 M random inserts into the index).
  await pool.query('alter table notice_ledger drop constraint notice_ledger_pkey');
  for (let from = 1; from <= filler; from += 1_000_000) {
    const to = Math.min(filler, from + 999_999);
    await pool.query(`
      insert into notice_ledger (notice_key, notice_type, identity, state, claim_token, claimed_by, claimed_at, sent_at, provider_message_id, recipient_domain, one_time_code, updated_at)
      select md5(i::text) || md5((-i)::text), 'renewal_notice_t72', jsonb_build_object('subscription_id', 'old_' || i, 'period_start', '2026-10-01'),
        'sent', gen_random_uuid(), 'w' || (i % 8), now() - (i % 400) * interval '1 day', now() - (i % 400) * interval '1 day' + interval '20 milliseconds',
        'prov-' || i, 'd' || (i % 500) || '.example', md5(i::text), now()
      from generate_series(${from}, ${to}) as i`);
    process.stdout.write('.');
  }
  for (let offset = 0; offset < keys.length; offset += 100_000) {
    // Every other uploaded key is already in the ledger; one in a hundred of them still claimed.
    const chunk = keys.slice(offset, offset + 100_000).filter((_, index) => index % 2 === 0);
    await pool.query(
      `insert into notice_ledger (notice_key, notice_type, identity, state, claim_token, claimed_by, claimed_at, sent_at, provider_message_id, recipient_domain, one_time_code, updated_at)
       select k, 'renewal_notice_t72', '{}', case when n % 100 = 0 then 'claimed' else 'sent' end, gen_random_uuid(), 'w1', now(),
         case when n % 100 = 0 then null else now() end, case when n % 100 = 0 then null else 'prov-u' || n end, 'd1.example', md5(k), now()
       from unnest($1::text[]) with ordinality as t(k, n)`,
      [chunk],
    );
  }
  await pool.query('alter table notice_ledger add constraint notice_ledger_pkey primary key (notice_key)');
  // Every uploaded key has its job (a replay's keys are upstream jobs): most pending in their
  // window, one in twenty each suppressed, cancelled or failed, one in fifty past its window
  // (even n: keys the ledger does not hold, where the job decides).
  for (let offset = 0; offset < keys.length; offset += 100_000) {
    await pool.query(
      `insert into reminder_jobs (notice_key, notice_type, identity, subject_id, recipient_email, due_at, deadline_at, state, next_attempt_at, source)
       select k, 'renewal_notice_t72', '{}', 'sub_' || n, 'u' || n || '@example.com', now() - interval '1 day',
         case when n % 50 = 2 then now() - interval '1 hour' else now() + interval '1 day' end,
         case n % 20 when 4 then 'suppressed' when 8 then 'cancelled' when 12 then 'failed' else 'pending' end, now(), 'bench'
       from unnest($1::text[]) with ordinality as t(k, n)`,
      [keys.slice(offset, offset + 100_000)],
    );
  }
  await pool.query('vacuum analyze notice_ledger');
  await pool.query('vacuum analyze reminder_jobs');
  await pool.query('insert into bench_replay_seed (signature) values ($1)', [seedSignature()]);
  console.log(`\nSeeded in ${Math.round((performance.now() - started) / 1000)} s.`);
}

/** The previous lookup statement (db/queries/replays.ts until this bench's change): a lateral primary-key probe per key. */
async function countChunkBaseline(pool: pg.Pool, keys: readonly string[]): Promise<DryRunCounts> {
  const result = await pool.query<{ state: string; count: number }>(
    `select l.state, count(*)::int as count
     from unnest($1::text[]) as k(key)
     cross join lateral (select state from notice_ledger where notice_key = k.key limit 1) l
     group by l.state`,
    [keys],
  );
  const existing: Record<string, number> = {};
  let found = 0;
  for (const row of result.rows) {
    existing[row.state] = row.count;
    found += row.count;
  }
  return { total: keys.length, newKeys: keys.length - found, existing };
}

/** The dry run's lookup as it was before: JS Set + sort, 100 k keys per lateral statement, two in flight. */
async function countKeysBaseline(pool: pg.Pool, keys: readonly string[]): Promise<DryRunCounts> {
  const distinct = [...new Set(keys)].sort();
  const chunks: string[][] = [];
  for (let offset = 0; offset < distinct.length; offset += 100_000) chunks.push(distinct.slice(offset, offset + 100_000));
  const parts: DryRunCounts[] = [];
  const worker = async () => {
    for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) parts.push(await countChunkBaseline(pool, chunk));
  };
  await Promise.all([worker(), worker()]);
  return mergeDryRunCounts(parts);
}

/**
 * The dry run's lookup before it looked at the jobs (db/queries/replay-dry-run.ts until the
 * dry run became honest): the ledger by state only, same sorted ranges, 50 k × 2.
 */
async function countKeysLedgerOnly(pool: pg.Pool, keys: readonly string[]): Promise<DryRunCounts> {
  const chunks = sortedDistinctChunks(keys);
  const parts: DryRunCounts[] = [];
  const worker = async () => {
    for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        await client.query('set local max_parallel_workers_per_gather = 0');
        const result = await client.query<{ state: string; count: number }>(
          'select state, count(*)::int as count from notice_ledger where notice_key = any($1::text[]) group by state',
          [textArrayLiteral(chunk)],
        );
        await client.query('commit');
        const existing: Record<string, number> = {};
        let found = 0;
        for (const row of result.rows) {
          existing[row.state] = row.count;
          found += row.count;
        }
        parts.push({ total: chunk.length, newKeys: chunk.length - found, existing });
      } finally {
        client.release();
      }
    }
  };
  await Promise.all([worker(), worker()]);
  return mergeDryRunCounts(parts);
}

/** HMAC-SHA256 with the key's inner and outer pads absorbed once, hash.copy() per message (RFC 2104, key ≤ 64 bytes). */
function copyingHmac(key: string): (message: string) => string {
  const block = Buffer.alloc(64);
  Buffer.from(key, 'utf8').copy(block);
  const inner: Hash = createHash('sha256').update(block.map((byte) => byte ^ 0x36));
  const outer: Hash = createHash('sha256').update(block.map((byte) => byte ^ 0x5c));
  return (message) => outer.copy().update(inner.copy().update(message, 'utf8').digest()).digest('hex');
}

function uploadCsv(rows: number): string {
  // Every row carries what its template declares (lib/templates/payload.ts) and the anchor it shows.
  const lines = [
    'notice_type,subscription_id,period_start,revision,recipient_email,recipient_time_zone,recipient_locale,customer_id,due_at,deadline_at,anchor_at,payload',
  ];
  for (let i = 0; i < rows; i += 1) {
    const payload = `"{""customer_name"":""Customer ${i}"",""plan_name"":""Pro annual"",""amount"":""${49 + (i % 50)}.00"",""currency"":""${i % 2 === 0 ? 'EUR' : 'USD'}""}"`;
    lines.push(
      `renewal_notice_t72,sub_${i},2026-11-01,0,user${i}@example.com,${i % 3 === 0 ? 'Europe/Berlin' : 'UTC'},${i % 4 === 0 ? 'de-DE' : 'en'},cus_${i},2026-11-29T08:00:00Z,2026-11-30T08:00:00Z,2026-12-01T08:00:00Z,${payload}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function timed<T>(work: () => T): [T, number] {
  const started = performance.now();
  const result = work();
  return [result, performance.now() - started];
}

async function timedAsync<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
}

function same(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((key, index) => key === right[index]);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const format = (value: number) => Math.round(value).toLocaleString('en');

async function main(): Promise<void> {
  const database = await openDatabase();
  const pool = createPool(database.url, { max: 4, applicationName: 'bench-replay' });
  const db = createDb(pool);
  try {
    const facts = Array.from({ length: KEYS }, (_, i) => uploadedFact(i));
    const keys = facts.map((fact) => referenceNoticeKey(secret, fact));
    await seedLedger(pool, keys);
    const jobs = await pool.query<{ n: number }>('select count(*)::int as n from reminder_jobs');
    console.log(`jobs for the uploaded keys: ${jobs.rows[0]?.n ?? 0}`);
    if (COVERING) {
      await pool.query('create index if not exists bench_notice_ledger_key_state on notice_ledger (notice_key) include (state)');
      await pool.query('vacuum analyze notice_ledger');
    }
    const load = [os.loadavg()[0] ?? 0];
    const copying = secret.length <= 64 ? copyingHmac(secret) : null;
    const figures: Record<string, number[]> = {};
    const record = (name: string, ms: number) => (figures[name] ??= []).push(KEYS / (ms / 1000));
    for (let run = 1; run <= RUNS; run += 1) {
      const [reference, referenceMs] = timed(() => facts.map((fact) => referenceNoticeKey(secret, fact)));
      const [derived, deriveMs] = timed(() => facts.map((fact) => noticeKey(secret, fact)));
      if (!same(reference, derived) || !same(reference, keys)) throw new Error('noticeKey() differs from the reference derivation');
      record('derive: reference (createHmac, array-built canonical form)', referenceMs);
      record('derive: noticeKey()', deriveMs);
      if (copying) {
        const [copied, copyMs] = timed(() => facts.map((fact) => copying(canonicalNotice(fact))));
        if (!same(reference, copied)) throw new Error('the copy()-based HMAC differs from createHmac');
        record('derive: pads absorbed once + hash.copy() (not taken)', copyMs);
      }
      const [oldCounts, oldLookupMs] = await timedAsync(() => countKeysBaseline(pool, derived));
      const [ledgerOnly, ledgerOnlyMs] = await timedAsync(() => countKeysLedgerOnly(pool, derived));
      const [newDryRun, newLookupMs] = await timedAsync(() => dryRunKeys(db, { keys: derived }));
      const ledgerPart = (counts: DryRunCounts) => JSON.stringify({ total: counts.total, newKeys: counts.newKeys, existing: counts.existing });
      if (ledgerPart(oldCounts) !== ledgerPart(newDryRun.counts) || ledgerPart(ledgerOnly) !== ledgerPart(newDryRun.counts))
        throw new Error(`counts differ: ${JSON.stringify(oldCounts)} vs ${JSON.stringify(ledgerOnly)} vs ${JSON.stringify(newDryRun.counts)}`);
      record('lookup: ledger only (before the dry run looked at jobs)', ledgerOnlyMs);
      record('dry run: ledger only (noticeKey + ledger-only lookup)', deriveMs + ledgerOnlyMs);
      if (run === 1) console.log(`dry run: ${JSON.stringify(newDryRun.counts)}; ${newDryRun.verdict.message}`);
      record('lookup: before (Set + sort, lateral probe per key, 100 k × 2)', oldLookupMs);
      record('lookup: dryRunKeys() (sorted ranges, = any($1), 50 k × 2, ledger + jobs)', newLookupMs);
      record('dry run: before (reference derive + lookup before)', referenceMs + oldLookupMs);
      record('dry run: now (noticeKey + dryRunKeys)', deriveMs + newLookupMs);
      load.push(os.loadavg()[0] ?? 0);
    }
    if (UPLOAD_ROWS > 0) {
      const csv = uploadCsv(UPLOAD_ROWS);
      for (let run = 1; run <= RUNS; run += 1) {
        const [check, ms] = await timedAsync(() => dryRunUpload(db, { csv, secret }));
        if (!check.ok || check.data.dryRun.accepted !== UPLOAD_ROWS)
          throw new Error(`upload dry run refused rows: ${JSON.stringify(check.ok ? check.data.dryRun.rejections.slice(0, 3) : check.refusal.message)}`);
        (figures['upload: dryRunUpload() (parse + validate + derive + lookup), rows/s'] ??= []).push(UPLOAD_ROWS / (ms / 1000));
        (figures['upload: of which the ledger lookup, rows/s'] ??= []).push(UPLOAD_ROWS / (check.data.dryRun.elapsedMs / 1000));
        load.push(os.loadavg()[0] ?? 0);
      }
    }
    const rows = Object.entries(figures).map(([step, rates]) => ({
      step,
      'keys/s (median)': format(median(rates)),
      'keys/s (min–max)': `${format(Math.min(...rates))}–${format(Math.max(...rates))}`,
    }));
    printTable(
      `Replay dry run, ${KEYS.toLocaleString('en')} keys vs a ${LEDGER.toLocaleString('en')}-row ledger, ${RUNS} runs${COVERING ? ', with the covering index' : ''}`,
      rows,
    );
    const dryRun = median(figures['dry run: now (noticeKey + dryRunKeys)'] ?? []);
    const upload = figures['upload: dryRunUpload() (parse + validate + derive + lookup), rows/s'];
    await recordTargets([
      {
        figure: `replay dry run, ${KEYS.toLocaleString('en')} keys vs ${LEDGER.toLocaleString('en')} ledger rows (derive + lookup)`,
        value: `${format(dryRun)} keys/s`,
        target: dryRun >= 200_000 ? '≥ 200 k keys/s: ok' : '≥ 200 k keys/s: MISS',
      },
      ...(upload
        ? [{ figure: '  the same from a CSV upload (parse + validate + derive + lookup)', value: `${format(median(upload))} rows/s`, target: '' }]
        : []),
    ]);
    const ratio = (now: string, before: string) => (median(figures[now] ?? []) / median(figures[before] ?? [])).toFixed(2);
    console.log(
      `\nratios (medians): derive ${ratio('derive: noticeKey()', 'derive: reference (createHmac, array-built canonical form)')}×, ` +
        `lookup ${ratio('lookup: dryRunKeys() (sorted ranges, = any($1), 50 k × 2, ledger + jobs)', 'lookup: before (Set + sort, lateral probe per key, 100 k × 2)')}×, ` +
        `whole dry run ${ratio('dry run: now (noticeKey + dryRunKeys)', 'dry run: before (reference derive + lookup before)')}×, ` +
        `honest (ledger + jobs) vs ledger only ${ratio('dry run: now (noticeKey + dryRunKeys)', 'dry run: ledger only (noticeKey + ledger-only lookup)')}×`,
    );
    console.log(`load average (1 min) while measuring: ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)} on ${os.cpus().length} cores`);
  } finally {
    if (COVERING) await pool.query('drop index if exists bench_notice_ledger_key_state');
    await pool.end();
    await database.release();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
