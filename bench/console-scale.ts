import { createDb, createPool, type Db } from '../db/client';
import { listAuditEntries } from '../db/queries/audit';
import { findNoticeJob, findNoticeLedgerEntry, findNotices, listNoticeAttempts, listNoticeProviderEvents } from '../db/queries/lookup';
import { attemptSeries, countPendingByDueBucket, findOldestPending, providerEventSeries } from '../db/queries/overview';
import { countQuarantined, listQuarantined } from '../db/queries/quarantine';
import { noticeTypeNames } from '../lib/ledger/notice-types';
import { percentile, printTable, startBenchDatabase } from './support';

/**
 * The console at scale: 10 M ledger rows and 1 M pending jobs (BENCH_SCALE=0.1 for a tenth),
 * generated with generate_series in a few statements, then every page's data queries timed.
 * Target p95 ≤ 50 ms each; a miss prints its EXPLAIN so the reason is on the screen.
 */

const scale = Number(process.env.BENCH_SCALE ?? 1);
const LEDGER = Math.round(10_000_000 * scale);
const PENDING = Math.round(1_000_000 * scale);
const SENT_JOBS = Math.round(2_000_000 * scale);
const ATTEMPTS = Math.round(4_000_000 * scale);
const EVENTS = Math.round(3_000_000 * scale);
const AUDIT = Math.round(200_000 * scale);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);

// The first key of row i: md5(i) || md5(-i), 64 hex characters, like a real HMAC.
const KEY = (i: string) => `md5(${i}::text) || md5((-${i})::text)`;

async function seed(db: Db): Promise<void> {
  const pool = db.$client;
  const step = async (label: string, text: string) => {
    const started = performance.now();
    await pool.query(text);
    console.log(`  ${label.padEnd(40)} ${((performance.now() - started) / 1000).toFixed(1)} s`);
  };
  console.log(`Seeding ${LEDGER.toLocaleString()} ledger rows, ${PENDING.toLocaleString()} pending jobs …`);
  await step('notice_ledger', `
    insert into notice_ledger (notice_key, notice_type, identity, state, claim_token, claimed_by, claimed_at, sent_at, provider_message_id, recipient_domain, one_time_code, updated_at)
    select ${KEY('i')}, (array['renewal_notice_t72','renewal_notice_t24','payment_recovery'])[1 + i % 3],
      jsonb_build_object('subscription_id', 'sub_' || i), case when i % 50000 = 0 then 'claimed' else 'sent' end,
      gen_random_uuid(), 'w' || (i % 8), now() - (i % 400) * interval '1 day' - (i % 86400) * interval '1 second',
      case when i % 50000 = 0 then null else now() - (i % 400) * interval '1 day' - (i % 86400) * interval '1 second' + interval '20 milliseconds' end,
      case when i % 50000 = 0 then null else 'prov-' || i end, 'd' || (i % 500) || '.example', md5(i::text), now()
    from generate_series(1, ${LEDGER}) as i`);
  await step('reminder_jobs (sent)', `
    insert into reminder_jobs (notice_key, notice_type, identity, subject_id, customer_id, recipient_email, due_at, deadline_at, state, attempts, next_attempt_at, source, payload)
    select ${KEY('i')}, (array['renewal_notice_t72','renewal_notice_t24','payment_recovery'])[1 + i % 3],
      jsonb_build_object('subscription_id', 'sub_' || i), 'sub_' || i, 'cus_' || (i / 3), 'customer' || i || '@d' || (i % 500) || '.example',
      now() - (i % 400) * interval '1 day', now() - (i % 400) * interval '1 day' + interval '2 days', case when i % 50000 = 0 then 'claimed' else 'sent' end, 1,
      now() - (i % 400) * interval '1 day', 'bench', '{}'
    from generate_series(1, ${SENT_JOBS}) as i`);
  await step('reminder_jobs (pending)', `
    insert into reminder_jobs (notice_key, notice_type, identity, subject_id, customer_id, recipient_email, due_at, deadline_at, state, next_attempt_at, source, payload)
    select md5('p' || i) || md5('q' || i), (array['renewal_notice_t72','renewal_notice_t24','payment_recovery'])[1 + i % 3],
      jsonb_build_object('subscription_id', 'psub_' || i), 'psub_' || i, 'pcus_' || i, 'pending' || i || '@d' || (i % 500) || '.example',
      now() + ((i % 10000) - 500) * interval '1 minute', now() + ((i % 10000) + 1500) * interval '1 minute', 'pending',
      now() + ((i % 10000) - 500) * interval '1 minute', 'bench', '{}'
    from generate_series(1, ${PENDING}) as i`);
  await step('delivery_attempts', `
    insert into delivery_attempts (job_id, notice_key, worker_id, started_at, finished_at, outcome, correlation_id, claim_to_commit_ms)
    select null, ${KEY('i')}, 'w' || (i % 8), now() - (i % 400) * interval '1 day' - (i % 86400) * interval '1 second',
      now() - (i % 400) * interval '1 day' - (i % 86400) * interval '1 second',
      case when i % 40 = 0 then 'suppressed_duplicate' when i % 97 = 0 then 'retryable_failure' else 'sent' end,
      left(${KEY('i')}, 32), case when i % 40 = 0 or i % 97 = 0 then null else 5 + (i % 37) end
    from generate_series(1, ${ATTEMPTS}) as i`);
  await step('provider_events', `
    insert into provider_events (provider, event_id, event_type, raw_type, correlation_id, provider_message_id, notice_key, recipient, occurred_at, received_at)
    select 'generic', 'evt-' || i, case when i % 2 = 0 then 'accepted' else 'delivered' end, 'x', left(${KEY('(i / 2)')}, 32), 'prov-' || (i / 2),
      ${KEY('(i / 2)')}, 'customer' || (i / 2) || '@example', now() - ((i / 2) % 400) * interval '1 day', now() - ((i / 2) % 400) * interval '1 day'
    from generate_series(2, ${EVENTS + 1}) as i`);
  await step('audit_log', `
    insert into audit_log (actor, action, target_type, target_id, reason, at)
    select 'user' || (i % 20) || '@demo.local', (array['quarantine.confirm_sent','quarantine.release','replay.request'])[1 + i % 3], 'notice',
      ${KEY('i')}, 'bench', now() - (i % 400) * interval '1 day'
    from generate_series(1, ${AUDIT}) as i`);
  await step('vacuum analyze', 'vacuum analyze');
}

type Case = { page: string; query: string; run: (db?: Db) => Promise<unknown> };

/**
 * Runs a case once on a connection with auto_explain logging to the client, so a miss comes
 * with the plans that caused it.
 */
async function explain(url: string, item: Case): Promise<string[]> {
  const pool = createPool(url, { max: 1 });
  const plans: string[] = [];
  pool.on('connect', (client) => {
    client.on('notice', (notice) => plans.push(notice.message ?? ''));
  });
  const client = await pool.connect();
  await client.query("load 'auto_explain'");
  await client.query('set auto_explain.log_min_duration = 5');
  await client.query('set auto_explain.log_analyze = on');
  await client.query('set client_min_messages = log');
  client.release();
  try {
    await item.run(createDb(pool));
  } finally {
    await pool.end();
  }
  return plans;
}

async function main(): Promise<void> {
  const database = await startBenchDatabase('bench_console');
  const pool = createPool(database.url, { max: 4 });
  const db = createDb(pool);
  try {
    await seed(db);
    const now = new Date();
    const day = 86_400_000;
    const sampleKey = (await pool.query<{ k: string }>(`select ${KEY('123457')} as k`)).rows[0]?.k ?? '';
    const cases: Case[] = [
      { page: 'overview', query: 'pending by due bucket', run: (d = db) => countPendingByDueBucket(d, { now, noticeTypes: noticeTypeNames }) },
      { page: 'overview', query: 'oldest pending per type', run: (d = db) => findOldestPending(d, { now, noticeTypes: noticeTypeNames, nearMs: 6 * 3_600_000 }) },
      { page: 'overview', query: 'attempt series 24 h', run: (d = db) => attemptSeries(d, { from: new Date(now.getTime() - day), to: now, bucketMs: 3_600_000, claimOutcomes: ['sent'] }) },
      { page: 'overview', query: 'attempt series 7 d', run: (d = db) => attemptSeries(d, { from: new Date(now.getTime() - 7 * day), to: now, bucketMs: 6 * 3_600_000, claimOutcomes: ['sent'] }) },
      { page: 'overview', query: 'accepted vs delivered 7 d', run: (d = db) => providerEventSeries(d, { from: new Date(now.getTime() - 7 * day), to: now, bucketMs: 6 * 3_600_000 }) },
      { page: 'overview', query: 'quarantine count', run: (d = db) => countQuarantined(d, { quarantineAfterMs: 15 * 60_000 }) },
      { page: 'quarantine', query: 'first page, oldest first', run: (d = db) => listQuarantined(d, { quarantineAfterMs: 15 * 60_000, limit: 50 }) },
      { page: 'lookup', query: 'by email', run: (d = db) => findNotices(d, { search: { kind: 'email', email: 'customer123457@d457.example' }, limit: 50 }) },
      { page: 'lookup', query: 'by key prefix', run: (d = db) => findNotices(d, { search: { kind: 'key_prefix', prefix: sampleKey.slice(0, 12) }, limit: 50 }) },
      { page: 'lookup', query: 'by subscription / provider id', run: (d = db) => findNotices(d, { search: { kind: 'id', id: 'sub_123457' }, limit: 50 }) },
      {
        page: 'lookup',
        query: 'one notice timeline',
        run: (d = db) =>
          Promise.all([
            findNoticeJob(d, { noticeKey: sampleKey }),
            findNoticeLedgerEntry(d, { noticeKey: sampleKey }),
            listNoticeAttempts(d, { noticeKey: sampleKey }),
            listNoticeProviderEvents(d, { noticeKey: sampleKey, providerMessageId: 'prov-123457' }),
          ]),
      },
      { page: 'audit', query: 'newest page', run: (d = db) => listAuditEntries(d, { filter: {}, limit: 50 }) },
      { page: 'audit', query: 'by actor', run: (d = db) => listAuditEntries(d, { filter: { actor: 'user7@demo.local' }, limit: 50 }) },
    ];
    const rows: Record<string, string | number>[] = [];
    const misses: Case[] = [];
    for (const item of cases) {
      await item.run(); // warm the cache once; the console runs hot
      const times: number[] = [];
      for (let i = 0; i < RUNS; i += 1) {
        const started = performance.now();
        await item.run();
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      const p95 = percentile(times, 95);
      if (p95 > 50) misses.push(item);
      rows.push({ page: item.page, query: item.query, 'p50 ms': percentile(times, 50).toFixed(1), 'p95 ms': p95.toFixed(1), target: p95 <= 50 ? 'ok' : 'MISS' });
    }
    printTable(`Console queries at ${LEDGER.toLocaleString()} ledger rows / ${PENDING.toLocaleString()} pending jobs (${String(RUNS)} runs each, target p95 ≤ 50 ms)`, rows);
    for (const miss of misses) {
      console.log(`\nMISS: ${miss.page} / ${miss.query} — its plans (EXPLAIN ANALYZE via auto_explain):`);
      for (const plan of await explain(database.url, miss)) console.log(plan);
    }
  } finally {
    await pool.end();
    await database.stop();
  }
}

await main();
