import os from 'node:os';
import path from 'node:path';
import { createDb, createPool, type Db } from '@/db/client';
import { listAuditEntries } from '@/db/queries/audit';
import { findNoticeJob, findNoticeLedgerEntry, findNotices, listNoticeAttempts, listNoticeProviderEvents } from '@/db/queries/lookup';
import { attemptSeries, countPendingByDueBucket, findOldestPending, providerEventSeries, readPendingDueSnapshot } from '@/db/queries/overview';
import { countQuarantined, listQuarantined } from '@/db/queries/ledger/read';
import { countComplianceGaps, countMissedWindows, countWindowsAtRisk, listComplianceGaps, listMissedWindows, listWindowsAtRisk } from '@/db/queries/windows';
import { countRetryableFailures, listFailures } from '@/db/queries/failures';
import { PENDING_FRESH_MS } from '@/lib/console/overview-model';
import { loadPendingCounts, recountPendingCounts } from '@/lib/console/pending-counts';
import { LIVE_REFRESH_MS } from '@/components/query/live';
import { configuredNoticeTypeNames } from '@/lib/windows/active';
import { provisionDatabase } from '@/testing/database';
import { openKeptDatabase, percentile, printTable, recordTargets, type KeptDatabase } from './support';

/**
 * The console at scale: 10 M ledger rows and 1 M pending jobs (BENCH_SCALE=0.1 for a tenth),
 * generated with generate_series in a few statements, then every page's data queries timed.
 * Target p95 ≤ 50 ms each; a miss prints its EXPLAIN so the reason is on the screen.
 *
 * BENCH_KEEP=1 keeps the seeded server in $TMPDIR/notice-ledger-console-scale-pg (or BENCH_KEEP=<dir>)
 * and reuses it on the next run at the same BENCH_SCALE, skipping the ~7 min of seeding;
 * migrations still run, so a new one is applied to the kept data. With DATABASE_URL (a local
 * server) the database `bench_console` there is kept and reused the same way. BENCH_RUNS: runs per query.
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

const SEEDED_MARK = `console-scale seeded at scale ${String(scale)} (with send windows)`;

/**
 * A kept database (BENCH_KEEP, or the database `bench_console` on DATABASE_URL's server) or a
 * throw-away one; a kept one is stopped, not deleted, at the end.
 */
async function openDatabase(): Promise<KeptDatabase> {
  const keep = process.env.BENCH_KEEP;
  if (!keep && !process.env.DATABASE_URL) return provisionDatabase({ prefix: 'bench_console' });
  const dir = !keep || keep === '1' ? path.join(os.tmpdir(), 'notice-ledger-console-scale-pg') : path.resolve(keep);
  return openKeptDatabase({ name: 'bench_console', dir });
}

/** The mark is written only after a complete seed, so an interrupted one is redone from empty. */
async function isSeeded(db: Db): Promise<boolean> {
  const found = await db.$client.query<{ mark: string | null }>(
    "select shobj_description(oid, 'pg_database') as mark from pg_database where datname = current_database()",
  );
  return found.rows[0]?.mark === SEEDED_MARK;
}

async function seed(db: Db): Promise<void> {
  const pool = db.$client;
  await pool.query('truncate notice_ledger, reminder_jobs, delivery_attempts, provider_events, audit_log, unplanned_notices, business_events cascade');
  const step = async (label: string, text: string) => {
    const started = performance.now();
    await pool.query(text);
    console.log(`  ${label.padEnd(40)} ${((performance.now() - started) / 1000).toFixed(1)} s`);
  };
  console.log(`Seeding ${LEDGER.toLocaleString()} ledger rows, ${PENDING.toLocaleString()} pending jobs …`);
  await step(
    'notice_ledger',
    `
    insert into notice_ledger (notice_key, notice_type, identity, state, claim_token, claimed_by, claimed_at, sent_at, provider_message_id, recipient_domain, one_time_code, updated_at)
    select ${KEY('i')}, (array['renewal_notice_t72','renewal_notice_t24','payment_recovery'])[1 + i % 3],
      jsonb_build_object('subscription_id', 'sub_' || i), case when i % 50000 = 0 then 'claimed' else 'sent' end,
      gen_random_uuid(), 'w' || (i % 8), now() - (i % 400) * interval '1 day' - (i % 86400) * interval '1 second',
      case when i % 50000 = 0 then null else now() - (i % 400) * interval '1 day' - (i % 86400) * interval '1 second' + interval '20 milliseconds' end,
      case when i % 50000 = 0 then null else 'prov-' || i end, 'd' || (i % 500) || '.example', md5(i::text), now()
    from generate_series(1, ${LEDGER}) as i`,
  );
  await step(
    'reminder_jobs (sent)',
    `
    insert into reminder_jobs (notice_key, notice_type, identity, subject_id, customer_id, recipient_email, due_at, deadline_at, state, suppression_reason, attempts, next_attempt_at, source, payload, region, updated_at)
    select ${KEY('i')}, (array['renewal_notice_t72','renewal_notice_t24','payment_recovery'])[1 + i % 3],
      jsonb_build_object('subscription_id', 'sub_' || i), 'sub_' || i, 'cus_' || (i / 3), 'customer' || i || '@d' || (i % 500) || '.example',
      now() - (i % 400) * interval '1 day', now() - (i % 400) * interval '1 day' + interval '2 days',
      case when i % 50000 = 0 then 'claimed' when i % 200 = 7 then 'suppressed' else 'sent' end, case when i % 200 = 7 then 'window_missed' end, 1,
      now() - (i % 400) * interval '1 day', 'bench', '{}', (array['US-CA','US-NY','FR','IN',null])[1 + i % 5],
      now() - (i % 400) * interval '1 day' + interval '2 days'
    from generate_series(1, ${SENT_JOBS}) as i`,
  );
  await step(
    'reminder_jobs (pending)',
    `
    insert into reminder_jobs (notice_key, notice_type, identity, subject_id, customer_id, recipient_email, due_at, deadline_at, state, next_attempt_at, source, payload, region)
    select md5('p' || i) || md5('q' || i), (array['renewal_notice_t72','renewal_notice_t24','payment_recovery'])[1 + i % 3],
      jsonb_build_object('subscription_id', 'psub_' || i), 'psub_' || i, 'pcus_' || i, 'pending' || i || '@d' || (i % 500) || '.example',
      now() + ((i % 10000) - 500) * interval '1 minute',
      -- One in ten has a tighter window (1000 min after due), so some due notices are at risk.
      now() + ((i % 10000) + case when abs(hashtext(md5('p' || i) || md5('q' || i))) % 10 = 3 then 500 else 1500 end) * interval '1 minute', 'pending',
      now() + ((i % 10000) - 500) * interval '1 minute', 'bench', '{}', (array['US-CA','US-NY','FR','IN',null])[1 + i % 5]
    from generate_series(1, ${PENDING}) as i`,
  );
  await step(
    'business_events + unplanned_notices',
    `
    with events as (
      insert into business_events (type, identity, revision, body_sha256, anchor_at, region, time_zone, recipient, rule_set_version, source)
      select 'subscription.renewal', jsonb_build_object('subscription_id', 'esub_' || i, 'period_start', '2026-12-01'), 0, md5(i::text),
        now() + (i % 30) * interval '1 day', (array['US-CA','US-NY','FR','IN'])[1 + i % 4], 'UTC', jsonb_build_object('email', 'e' || i || '@example'), 'rules-bench', 'bench'
      from generate_series(1, ${Math.round(100_000 * scale)}) as i
      returning id, region, anchor_at
    )
    insert into unplanned_notices (event_id, notice_type, category, reason, rule_ids, rule_set_version, region, created_at, resolved_at, resolved_by, resolution)
    select id, 'auto_renewal_notice', case when row_number() over () % 3 = 0 then 'courtesy' else 'required' end, 'window_passed', '{US-CA/arl-annual@1}', 'rules-bench', region,
      anchor_at - interval '40 days', case when row_number() over () % 20 <> 0 then anchor_at end, case when row_number() over () % 20 <> 0 then 'bench' end,
      case when row_number() over () % 20 <> 0 then 'sent by post' end
    from events`,
  );
  await step(
    'delivery_attempts',
    `
    insert into delivery_attempts (job_id, notice_key, worker_id, started_at, finished_at, outcome, correlation_id, claim_to_commit_ms)
    select null, ${KEY('i')}, 'w' || (i % 8), now() - (i % 400) * interval '1 day' - (i % 86400) * interval '1 second',
      now() - (i % 400) * interval '1 day' - (i % 86400) * interval '1 second',
      case when i % 40 = 0 then 'suppressed_duplicate' when i % 97 = 0 then 'retryable_failure' else 'sent' end,
      left(${KEY('i')}, 32), case when i % 40 = 0 or i % 97 = 0 then null else 5 + (i % 37) end
    from generate_series(1, ${ATTEMPTS}) as i`,
  );
  await step(
    'provider_events',
    `
    insert into provider_events (provider, event_id, event_type, raw_type, correlation_id, provider_message_id, notice_key, recipient, occurred_at, received_at)
    select 'generic', 'evt-' || i, case when i % 2 = 0 then 'accepted' else 'delivered' end, 'x', left(${KEY('(i / 2)')}, 32), 'prov-' || (i / 2),
      ${KEY('(i / 2)')}, 'customer' || (i / 2) || '@example', now() - ((i / 2) % 400) * interval '1 day', now() - ((i / 2) % 400) * interval '1 day'
    from generate_series(2, ${EVENTS + 1}) as i`,
  );
  await step(
    'audit_log',
    `
    insert into audit_log (actor, action, target_type, target_id, reason, at)
    select 'user' || (i % 20) || '@demo.local', (array['quarantine.confirm_sent','quarantine.release','replay.request'])[1 + i % 3], 'notice',
      ${KEY('i')}, 'bench', now() - (i % 400) * interval '1 day'
    from generate_series(1, ${AUDIT}) as i`,
  );
  await step('vacuum analyze', 'vacuum analyze');
  await pool.query(`comment on database bench_console is '${SEEDED_MARK}'`);
}

/** `background`: not on a viewer's path (the recount runs after the response), so no p95 target. */
type Case = { page: string; query: string; run: (db?: Db) => Promise<unknown>; background?: boolean };

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

/**
 * Viewers refreshing every 15 s, on a simulated clock (the recount instants are parameters, so
 * no waiting): what each refresh waits for when a stale snapshot is recounted before answering,
 * against serving it and recounting after the response (what the console does). Deferred
 * recounts run between refreshes, untimed, as Next's after() runs them.
 */
async function printViewerSimulation(db: Db, now: Date): Promise<void> {
  const rows: Record<string, string | number>[] = [];
  // Each simulation starts an hour after the previous one, so it finds no usable snapshot.
  let start = now.getTime() + 2 * 3_600_000;
  for (const viewers of [1, 5]) {
    for (const design of ['recount before answering', 'serve, recount after (console)'] as const) {
      start += 3_600_000;
      const times: number[] = [];
      const ages: number[] = [];
      let recounts = 0;
      for (let refresh = 0; refresh < 24; refresh += 1) {
        for (let viewer = 0; viewer < viewers; viewer += 1) {
          const at = new Date(start + refresh * LIVE_REFRESH_MS + viewer * Math.floor(LIVE_REFRESH_MS / viewers) + 40);
          const deferred: (() => Promise<string>)[] = [];
          const started = performance.now();
          let countedAt: Date;
          if (design === 'recount before answering') {
            const current = await readPendingDueSnapshot(db);
            if (current && at.getTime() - current.countedAt.getTime() < PENDING_FRESH_MS) countedAt = current.countedAt;
            else {
              const result = await recountPendingCounts(db, { now: at });
              countedAt = result.outcome === 'busy' ? at : result.snapshot.countedAt;
              recounts += 1;
            }
          } else {
            countedAt = (await loadPendingCounts(db, { now: at, recountLater: (task) => void deferred.push(task), clock: () => at })).countedAt;
            if (countedAt.getTime() === at.getTime()) recounts += 1;
          }
          times.push(performance.now() - started);
          ages.push((at.getTime() - countedAt.getTime()) / 1000);
          for (const task of deferred) if ((await task()) === 'recounted') recounts += 1;
        }
      }
      times.sort((a, b) => a - b);
      rows.push({
        viewers,
        design,
        refreshes: times.length,
        recounts,
        'p50 ms': percentile(times, 50).toFixed(1),
        'p95 ms': percentile(times, 95).toFixed(1),
        'max ms': (times[times.length - 1] ?? 0).toFixed(1),
        'shown age, max s': Math.max(...ages).toFixed(0),
      });
    }
  }
  printTable(
    `Pending by due bucket, viewers refreshing every ${String(LIVE_REFRESH_MS / 1000)} s (simulated clock; the first refresh finds no usable snapshot)`,
    rows,
  );
}

async function main(): Promise<void> {
  const database = await openDatabase();
  const pool = createPool(database.url, { max: 4 });
  const db = createDb(pool);
  try {
    if (await isSeeded(db)) console.log(`Reusing the kept seed (${SEEDED_MARK}).`);
    else await seed(db);
    const now = new Date();
    const day = 86_400_000;
    // Each forced recount is stamped 16 s after the last one, so none finds a fresh snapshot.
    let recountAt = now.getTime() + 3_600_000;
    const nextRecountAt = () => new Date((recountAt += 16_000));
    let unexpectedRecounts = 0;
    const refuseRecount = () => {
      unexpectedRecounts += 1;
    };
    const sampleKey = (await pool.query<{ k: string }>(`select ${KEY('123457')} as k`)).rows[0]?.k ?? '';
    const cases: Case[] = [
      // What the page waits for: the snapshot (counted once by the warm-up run, then fresh for 15 s).
      { page: 'overview', query: 'pending by due bucket (snapshot)', run: (d = db) => loadPendingCounts(d, { now: new Date(), recountLater: refuseRecount }) },
      // What a recount costs, once per 15 s across all viewers, after a response: the exact count and the store.
      { page: 'overview', query: 'pending by due bucket: recount', run: (d = db) => recountPendingCounts(d, { now: nextRecountAt() }), background: true },
      {
        page: 'overview',
        query: 'pending by due bucket: bare count',
        run: (d = db) => countPendingByDueBucket(d, { now, noticeTypes: configuredNoticeTypeNames() }),
        background: true,
      },
      {
        page: 'overview',
        query: 'oldest pending per type',
        run: (d = db) => findOldestPending(d, { now, noticeTypes: configuredNoticeTypeNames(), nearMs: 6 * 3_600_000 }),
      },
      {
        page: 'overview',
        query: 'attempt series 24 h',
        run: (d = db) => attemptSeries(d, { from: new Date(now.getTime() - day), to: now, bucketMs: 3_600_000, claimOutcomes: ['sent'] }),
      },
      {
        page: 'overview',
        query: 'attempt series 7 d',
        run: (d = db) => attemptSeries(d, { from: new Date(now.getTime() - 7 * day), to: now, bucketMs: 6 * 3_600_000, claimOutcomes: ['sent'] }),
      },
      {
        page: 'overview',
        query: 'accepted vs delivered 7 d',
        run: (d = db) => providerEventSeries(d, { from: new Date(now.getTime() - 7 * day), to: now, bucketMs: 6 * 3_600_000 }),
      },
      { page: 'overview', query: 'quarantine count', run: (d = db) => countQuarantined(d, { quarantineAfterMs: 15 * 60_000 }) },
      { page: 'quarantine', query: 'first page, oldest first', run: (d = db) => listQuarantined(d, { quarantineAfterMs: 15 * 60_000, limit: 50 }) },
      { page: 'lookup', query: 'by email', run: (d = db) => findNotices(d, { search: { kind: 'email', email: 'customer123457@d457.example' }, limit: 50 }) },
      {
        page: 'lookup',
        query: 'by key prefix',
        run: (d = db) => findNotices(d, { search: { kind: 'key_prefix', prefix: sampleKey.slice(0, 12) }, limit: 50 }),
      },
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
      { page: 'overview', query: 'windows at risk by type × region', run: (d = db) => countWindowsAtRisk(d, { now, withinMs: day }) },
      { page: 'overview', query: 'missed windows 24 h / 7 d by type × region', run: (d = db) => countMissedWindows(d, { now }) },
      { page: 'overview', query: 'open compliance gaps by type × region', run: (d = db) => countComplianceGaps(d) },
      { page: 'windows', query: 'at risk, first page', run: (d = db) => listWindowsAtRisk(d, { now, withinMs: day, limit: 50 }) },
      {
        page: 'windows',
        query: 'at risk, a later page',
        run: async (d = db) => {
          const first = await listWindowsAtRisk(d, { now, withinMs: day, limit: 50 });
          const last = first[first.length - 1];
          return last ? listWindowsAtRisk(d, { now, withinMs: day, limit: 50, after: { at: last.cursorAt, id: last.id } }) : [];
        },
      },
      { page: 'windows', query: 'missed, first page', run: (d = db) => listMissedWindows(d, { now, limit: 50 }) },
      { page: 'windows', query: 'open gaps, first page', run: (d = db) => listComplianceGaps(d, { limit: 50 }) },
      { page: 'failures', query: 'first page, every kind', run: (d = db) => listFailures(d, { filter: {}, limit: 50 }) },
      {
        page: 'failures',
        query: 'failed smtp_451, last 7 d',
        run: (d = db) => listFailures(d, { filter: { kind: 'failed', errorClass: 'smtp_451', from: new Date(now.getTime() - 7 * day), to: now }, limit: 50 }),
      },
      {
        page: 'failures',
        query: 'bulk retry count, last 7 d',
        run: (d = db) => countRetryableFailures(d, { filter: { errorClass: 'smtp_451', from: new Date(now.getTime() - 7 * day), to: now }, now }),
      },
      { page: 'audit', query: 'newest page', run: (d = db) => listAuditEntries(d, { filter: {}, limit: 50 }) },
      { page: 'audit', query: 'by actor', run: (d = db) => listAuditEntries(d, { filter: { actor: 'user7@demo.local' }, limit: 50 }) },
    ];
    const rows: Record<string, string | number>[] = [];
    const misses: Case[] = [];
    let worst = { p95: 0, label: '' };
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
      if (p95 > 50 && !item.background) misses.push(item);
      if (!item.background && p95 > worst.p95) worst = { p95, label: `${item.page} / ${item.query}` };
      const target = item.background ? 'background' : p95 <= 50 ? 'ok' : 'MISS';
      rows.push({ page: item.page, query: item.query, 'p50 ms': percentile(times, 50).toFixed(1), 'p95 ms': p95.toFixed(1), target });
    }
    printTable(
      `Console queries at ${LEDGER.toLocaleString()} ledger rows / ${PENDING.toLocaleString()} pending jobs (${String(RUNS)} runs each, target p95 ≤ 50 ms)`,
      rows,
    );
    await recordTargets([
      {
        figure: `console page queries at ${LEDGER.toLocaleString('en')} ledger rows / ${PENDING.toLocaleString('en')} pending jobs, slowest p95 of ${String(cases.filter((c) => !c.background).length)}`,
        value: `${worst.p95.toFixed(1)} ms (${worst.label})`,
        target: misses.length === 0 ? 'p95 ≤ 50 ms each: ok' : `p95 ≤ 50 ms each: MISS (${String(misses.length)})`,
      },
    ]);
    if (unexpectedRecounts > 0) console.log(`\nNOTE: the snapshot went stale during its timing runs (${String(unexpectedRecounts)} deferred recounts).`);
    await printViewerSimulation(db, now);
    for (const miss of misses) {
      console.log(`\nMISS: ${miss.page} / ${miss.query} — its plans (EXPLAIN ANALYZE via auto_explain):`);
      for (const plan of await explain(database.url, miss)) console.log(plan);
    }
  } finally {
    await pool.end();
    await database.release();
  }
}

await main();
