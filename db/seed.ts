import { randomBytes, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { noticeKey } from '@/lib/ledger/notice-key';
import { subjectOf, type NoticeFact } from '@/lib/windows/notice-fact';

/**
 * Realistic demo data for `npm run demo`: a few thousand subscriptions and accounts whose
 * reminders are spread over the next seven days, a week of history (sent, duplicates the
 * ledger suppressed, provider events, bounces), a few stuck claims for quarantine and a
 * replay waiting for a manager. Deterministic (a fixed PRNG seed), and idempotent: a second
 * run finds the marker and changes nothing.
 */

export type DemoUser = { email: string; name: string; role: 'support' | 'oncall' | 'operator' | 'manager' | 'admin'; password: string };

export const demoUsers: DemoUser[] = [
  { email: 'support@demo.local', name: 'Sam Support', role: 'support', password: 'support-demo-pass' },
  { email: 'oncall@demo.local', name: 'Olu On-call', role: 'oncall', password: 'oncall-demo-pass' },
  { email: 'operator@demo.local', name: 'Ops Operator', role: 'operator', password: 'operator-demo-pass' },
  { email: 'manager@demo.local', name: 'Mia Manager', role: 'manager', password: 'manager-demo-pass' },
  { email: 'admin@demo.local', name: 'Ada Admin', role: 'admin', password: 'admin-demo-pass' },
];

export type SeedOptions = {
  secret: string;
  messageIdDomain: string;
  hashPassword: (password: string) => Promise<string>;
  now?: Date;
  subscriptions?: number;
  accounts?: number;
};

export type SeedSummary = { seeded: boolean; jobs: number; ledger: number; stuckClaims: number };

const domains = ['gmail.example', 'outlook.example', 'yahoo.example', 'fastmail.example', 'acme-corp.example', 'proton.example'];
const timeZones = ['UTC', 'Europe/Berlin', 'America/New_York', 'America/Los_Angeles', 'Asia/Tokyo', 'Australia/Sydney'];
const plans = ['Basic box', 'Family box', 'Premium box'];
const customers = ['Ana Silva', 'Jonas Becker', 'Priya Raman', 'Léa Martin', 'Tom Walker', 'Mia Schneider', 'Kenji Sato', 'Olivia Brown'];
/** The recipient's locale: en and de have templates of their own; fr falls back to en, formatted for fr. */
const locales = ['en-US', 'en-GB', 'de-DE', 'de-AT', 'fr-FR'];
const HOUR = 3_600_000;

/** mulberry32: small, deterministic, good enough for spreading demo data. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

type JobSeed = {
  id: string;
  key: string;
  fact: NoticeFact;
  email: string;
  timeZone: string;
  dueAt: Date;
  deadlineAt: Date;
  state: 'pending' | 'claimed' | 'sent' | 'suppressed';
  suppressionReason: string | null;
  attempts: number;
  evidenceRef: string | null;
  customerId: string;
  source: string;
  /** Exactly the variables the type's template declares (config/notice-ledger.json templates). */
  payload: Record<string, unknown>;
  /** The charge (renewals) or the reconciliation (payment recovery): the date the template shows. */
  anchorAt: Date;
  locale: string;
};

type LedgerSeed = {
  key: string;
  jobId: string;
  state: 'claimed' | 'sent';
  claimedAt: Date;
  sentAt: Date | null;
  providerId: string | null;
  domain: string;
  fact: NoticeFact;
};
type AttemptSeed = { jobId: string; key: string; at: Date; outcome: string; detail: string | null; errorClass: string | null; claimToCommitMs: number | null };
type EventSeed = {
  eventId: string;
  type: string;
  rawType: string;
  key: string;
  providerId: string | null;
  recipient: string;
  at: Date;
  bounceType: string | null;
};

export async function seedDemo(pool: pg.Pool, options: SeedOptions): Promise<SeedSummary> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    // One seeder at a time, and only once: the admin user is the marker.
    await client.query('select pg_advisory_xact_lock(727275)');
    const marker = await client.query("select 1 from users where email = 'admin@demo.local'");
    if (marker.rowCount) {
      await client.query('rollback');
      return { seeded: false, jobs: 0, ledger: 0, stuckClaims: 0 };
    }
    const summary = await insertDemoData(client, options);
    await client.query('commit');
    return summary;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

async function insertDemoData(client: pg.PoolClient, options: SeedOptions): Promise<SeedSummary> {
  const now = options.now ?? new Date();
  const random = prng(20261129);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const jobs: JobSeed[] = [];
  const ledger: LedgerSeed[] = [];
  const attempts: AttemptSeed[] = [];
  const events: EventSeed[] = [];
  const suppressions: { email: string; reason: string; eventId: string }[] = [];
  const evidence: { ref: string; state: 'open' | 'resolved'; summary: string }[] = [];

  const addSent = (job: JobSeed, dueAt: Date, duplicateCause: 'queue_redelivery' | 'concurrent_worker' | 'replay' | null) => {
    const claimedAt = new Date(dueAt.getTime() + random() * 20 * 60_000);
    const claimToCommit = Math.round(8 + random() * 40 + (random() < 0.02 ? 400 : 0));
    const sentAt = new Date(claimedAt.getTime() + claimToCommit);
    const providerId = `demo-${randomBytes(6).toString('hex')}`;
    const domain = job.email.split('@')[1] ?? '';
    ledger.push({ key: job.key, jobId: job.id, state: 'sent', claimedAt, sentAt, providerId, domain, fact: job.fact });
    attempts.push({ jobId: job.id, key: job.key, at: sentAt, outcome: 'sent', detail: null, errorClass: null, claimToCommitMs: claimToCommit });
    events.push({
      eventId: `evt-acc-${job.key.slice(0, 16)}`,
      type: 'accepted',
      rawType: 'accepted',
      key: job.key,
      providerId,
      recipient: job.email,
      at: sentAt,
      bounceType: null,
    });
    if (random() < 0.93) {
      events.push({
        eventId: `evt-dlv-${job.key.slice(0, 16)}`,
        type: 'delivered',
        rawType: 'delivered',
        key: job.key,
        providerId,
        recipient: job.email,
        at: new Date(sentAt.getTime() + 2_000 + random() * 30_000),
        bounceType: null,
      });
    }
    if (duplicateCause) {
      attempts.push({
        jobId: job.id,
        key: job.key,
        at: new Date(sentAt.getTime() + 30_000 + random() * 3 * HOUR),
        outcome: 'suppressed_duplicate',
        detail: duplicateCause,
        errorClass: null,
        claimToCommitMs: null,
      });
    }
  };

  const subscriptions = options.subscriptions ?? 2400;
  for (let i = 0; i < subscriptions; i += 1) {
    const subscriptionId = `sub_${String(1000 + i)}`;
    const email = `customer${i}@${pick(domains)}`;
    const timeZone = pick(timeZones);
    // Charges spread from 5 days ago to 10 days ahead; T-72 and T-24 notices before each.
    const chargeAt = new Date(now.getTime() + (-5 * 24 + random() * 15 * 24) * HOUR);
    const periodStart = chargeAt.toISOString().slice(0, 10);
    for (const [type, before] of [
      ['renewal_notice_t72', 72],
      ['renewal_notice_t24', 24],
    ] as const) {
      const fact: NoticeFact = { type, identity: { subscription_id: subscriptionId, period_start: periodStart }, revision: 0 };
      const dueAt = new Date(chargeAt.getTime() - before * HOUR);
      const deadlineAt = new Date(chargeAt.getTime() - (before === 72 ? 24 : 2) * HOUR);
      if (dueAt.getTime() > now.getTime() + 7 * 24 * HOUR) continue;
      const job: JobSeed = {
        id: randomUUID(),
        key: noticeKey(options.secret, fact),
        fact,
        email,
        timeZone,
        dueAt,
        deadlineAt,
        state: 'pending',
        suppressionReason: null,
        attempts: 0,
        evidenceRef: null,
        customerId: `cus_${String(5000 + i)}`,
        source: 'billing-scheduler',
        payload: { customer_name: pick(customers), plan_name: pick(plans), amount: `${(9 + Math.floor(random() * 40)).toString()}.00`, currency: 'EUR' },
        anchorAt: chargeAt,
        locale: pick(locales),
      };
      if (dueAt.getTime() < now.getTime() - 2 * HOUR) {
        job.state = 'sent';
        job.attempts = 1;
        const roll = random();
        addSent(job, dueAt, roll < 0.03 ? 'queue_redelivery' : roll < 0.045 ? 'concurrent_worker' : roll < 0.055 ? 'replay' : null);
      }
      jobs.push(job);
    }
  }

  const accounts = options.accounts ?? 400;
  for (let i = 0; i < accounts; i += 1) {
    const accountId = `acct_${String(200 + i)}`;
    const reconciliationId = `recon_${new Date(now.getTime() - (1 + (i % 3)) * 24 * HOUR).toISOString().slice(0, 10)}`;
    const exceptionId = `exc_${String(i)}`;
    const fact: NoticeFact = {
      type: 'payment_recovery',
      identity: { account_id: accountId, reconciliation_id: reconciliationId, exception_id: exceptionId },
      revision: 0,
    };
    const dueAt = new Date(now.getTime() + (-3 * 24 + random() * 5 * 24) * HOUR);
    const evidenceRef = `recon-exception:${reconciliationId}:${exceptionId}`;
    const resolved = random() < 0.12;
    evidence.push({ ref: evidenceRef, state: resolved ? 'resolved' : 'open', summary: `Card payment failed at nightly reconciliation (${exceptionId})` });
    const job: JobSeed = {
      id: randomUUID(),
      key: noticeKey(options.secret, fact),
      fact,
      email: `billing${i}@${pick(domains)}`,
      timeZone: pick(timeZones),
      dueAt,
      deadlineAt: new Date(dueAt.getTime() + 5 * 24 * HOUR),
      state: 'pending',
      suppressionReason: null,
      attempts: 0,
      evidenceRef,
      customerId: `cus_b${String(i)}`,
      source: 'nightly-reconciliation',
      payload: {
        customer_name: pick(customers),
        amount: `${(50 + Math.floor(random() * 900)).toString()}.00`,
        currency: 'EUR',
        reference: `RC-${reconciliationId.slice(6)}-${String(i).padStart(4, '0')}`,
      },
      anchorAt: new Date(now.getTime() - (1 + (i % 3)) * 24 * HOUR),
      locale: pick(locales),
    };
    if (dueAt < now && resolved) {
      job.state = 'suppressed';
      job.suppressionReason = 'evidence_resolved';
      attempts.push({
        jobId: job.id,
        key: job.key,
        at: dueAt,
        outcome: 'suppressed_policy',
        detail: 'evidence_resolved',
        errorClass: null,
        claimToCommitMs: null,
      });
    } else if (dueAt.getTime() < now.getTime() - 2 * HOUR) {
      job.state = 'sent';
      job.attempts = 1;
      addSent(job, dueAt, random() < 0.04 ? 'queue_redelivery' : null);
    }
    jobs.push(job);
  }

  // Hard bounces and a complaint: the address goes on the suppression list, a later notice is suppressed.
  const bounced = jobs.filter((job) => job.state === 'sent').slice(0, 6);
  bounced.forEach((job, index) => {
    const type = index === 5 ? 'complaint' : 'bounce';
    const eventId = `evt-${type}-${job.key.slice(0, 16)}`;
    events.push({
      eventId,
      type,
      rawType: type === 'bounce' ? 'Bounce' : 'SpamComplaint',
      key: job.key,
      providerId: null,
      recipient: job.email,
      at: new Date(job.dueAt.getTime() + 60_000),
      bounceType: type === 'bounce' ? 'Permanent' : null,
    });
    suppressions.push({ email: job.email.toLowerCase(), reason: type === 'bounce' ? 'hard_bounce' : 'complaint', eventId });
  });

  // Stuck claims: workers that died mid-send 20–90 minutes ago. Three have provider evidence.
  const stuck = jobs.filter((job) => job.state === 'pending' && job.dueAt < now && job.fact.type !== 'payment_recovery').slice(0, 7);
  stuck.forEach((job, index) => {
    job.state = 'claimed';
    job.attempts = 1;
    const claimedAt = new Date(now.getTime() - (20 + index * 12) * 60_000);
    ledger.push({
      key: job.key,
      jobId: job.id,
      state: 'claimed',
      claimedAt,
      sentAt: null,
      providerId: null,
      domain: job.email.split('@')[1] ?? '',
      fact: job.fact,
    });
    attempts.push({
      jobId: job.id,
      key: job.key,
      at: claimedAt,
      outcome: 'unknown',
      detail: 'worker lost during send',
      errorClass: 'connection_lost',
      claimToCommitMs: null,
    });
    if (index < 3) {
      events.push({
        eventId: `evt-acc-stuck-${job.key.slice(0, 16)}`,
        type: 'delivered',
        rawType: 'delivered',
        key: job.key,
        providerId: null,
        recipient: job.email,
        at: new Date(claimedAt.getTime() + 4_000),
        bounceType: null,
      });
    }
  });

  // A week of retryable/permanent failures for the overview.
  for (const job of jobs.filter((j) => j.state === 'sent').slice(10, 60)) {
    attempts.push({
      jobId: job.id,
      key: job.key,
      at: new Date(job.dueAt.getTime() - 60_000),
      outcome: 'retryable_failure',
      detail: '451 4.7.1 try again later',
      errorClass: 'smtp_4xx',
      claimToCommitMs: null,
    });
  }

  await insertJobs(client, jobs, now);
  // A third of the payment recoveries still to go have a phone number: they go by SMS (the type's
  // channel, email its fallback) to the demo's Twilio peer. +1 415 555 0000 replied STOP (21610).
  await client.query(
    `update reminder_jobs
        set channel = 'sms',
            recipient_phone = case when substring(customer_id from 6)::int = 3 then '+14155550000'
                                   else '+1415555' || lpad((substring(customer_id from 6)::int % 90 + 10)::text, 4, '01') end
      where notice_type = 'payment_recovery' and state = 'pending' and substring(customer_id from 6)::int % 3 = 0`,
  );
  // The four soonest of them are due now, so a newcomer sees texts go out (and the STOP refusal) as the demo starts.
  await client.query(
    `update reminder_jobs set due_at = now() - interval '5 minutes', next_attempt_at = now() - interval '5 minutes'
      where id in (select id from reminder_jobs where channel = 'sms' and state = 'pending' order by recipient_phone = '+14155550000' desc, due_at limit 4)`,
  );
  await insertLedger(client, ledger);
  await insertAttempts(client, attempts);
  await insertEvents(client, events);
  for (const row of suppressions) {
    await client.query('insert into recipient_suppressions (email, reason, source_event_id) values ($1, $2, $3) on conflict do nothing', [
      row.email,
      row.reason,
      row.eventId,
    ]);
  }
  await client.query(
    `insert into evidence (ref, kind, state, summary, resolved_at, resolved_by)
     select ref, 'reconciliation_exception', state, summary, case when state = 'resolved' then now() end, case when state = 'resolved' then 'nightly-reconciliation' end
     from unnest($1::text[], $2::text[], $3::text[]) as t(ref, state, summary) on conflict do nothing`,
    [evidence.map((e) => e.ref), evidence.map((e) => e.state), evidence.map((e) => e.summary)],
  );

  const userIds = new Map<string, string>();
  for (const user of demoUsers) {
    const row = await client.query<{ id: string }>('insert into users (email, name, role, password_hash) values ($1, $2, $3, $4) returning id', [
      user.email,
      user.name,
      user.role,
      await options.hashPassword(user.password),
    ]);
    userIds.set(user.role, row.rows[0]?.id ?? '');
  }

  // Yesterday's morning window, all already delivered: the replay the manager should see is pointless.
  const windowStart = new Date(now.getTime() - 30 * HOUR);
  const windowEnd = new Date(now.getTime() - 24 * HOUR);
  const inWindow = jobs.filter((job) => job.dueAt >= windowStart && job.dueAt < windowEnd);
  const sentInWindow = inWindow.filter((job) => job.state === 'sent').length;
  await client.query(
    `insert into replays (batch_id, state, filter, dry_run, requested_by, request_reason, total, requested_at)
     values ($1, 'requested', $2, $3, $4, $5, $6, $7)`,
    [
      `replay-${now.toISOString().slice(0, 10)}-demo`,
      { dueFrom: windowStart.toISOString(), dueTo: windowEnd.toISOString() },
      {
        total: inWindow.length,
        newKeys: inWindow.length - sentInWindow - inWindow.filter((j) => j.state === 'claimed').length,
        existing: { sent: sentInWindow },
      },
      userIds.get('operator'),
      'Scheduler paused during the database failover yesterday morning; re-enqueue the window to be safe.',
      inWindow.length,
      new Date(now.getTime() - 40 * 60_000),
    ],
  );
  await client.query(
    `insert into audit_log (actor, action, target_type, target_id, reason, at)
     values ('operator@demo.local', 'replay.request', 'replay', $1, 'Scheduler paused during the database failover yesterday morning', $2)`,
    [`replay-${now.toISOString().slice(0, 10)}-demo`, new Date(now.getTime() - 40 * 60_000)],
  );

  return { seeded: true, jobs: jobs.length, ledger: ledger.length, stuckClaims: stuck.length };
}

async function insertJobs(client: pg.PoolClient, jobs: JobSeed[], now: Date): Promise<void> {
  for (let offset = 0; offset < jobs.length; offset += 1000) {
    const chunk = jobs.slice(offset, offset + 1000);
    await client.query(
      `insert into reminder_jobs (id, notice_key, notice_type, identity, revision, subject_id, customer_id, recipient_email, recipient_time_zone,
         due_at, deadline_at, state, suppression_reason, attempts, next_attempt_at, evidence_ref, source, payload, created_at, updated_at,
         anchor_at, recipient_locale)
       select id, key, type, identity, 0, subject, customer, email, tz, due, deadline, state, reason, attempts, due, evidence, source, payload,
              least(due - interval '3 days', $17::timestamptz), $17::timestamptz, anchor, locale
       from unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[],
                   $10::timestamptz[], $11::text[], $12::text[], $13::int[], $14::text[], $15::text[], $16::jsonb[], $18::timestamptz[], $19::text[])
         as t(id, key, type, identity, subject, customer, email, tz, due, deadline, state, reason, attempts, evidence, source, payload, anchor, locale)
       on conflict (notice_key) do nothing`,
      [
        chunk.map((j) => j.id),
        chunk.map((j) => j.key),
        chunk.map((j) => j.fact.type),
        chunk.map((j) => JSON.stringify(j.fact.identity)),
        chunk.map((j) => subjectOf(j.fact)),
        chunk.map((j) => j.customerId),
        chunk.map((j) => j.email),
        chunk.map((j) => j.timeZone),
        chunk.map((j) => j.dueAt),
        chunk.map((j) => j.deadlineAt),
        chunk.map((j) => j.state),
        chunk.map((j) => j.suppressionReason),
        chunk.map((j) => j.attempts),
        chunk.map((j) => j.evidenceRef),
        chunk.map((j) => j.source),
        chunk.map((j) => JSON.stringify(j.payload)),
        now,
        chunk.map((j) => j.anchorAt),
        chunk.map((j) => j.locale),
      ],
    );
  }
}

async function insertLedger(client: pg.PoolClient, rows: LedgerSeed[]): Promise<void> {
  for (let offset = 0; offset < rows.length; offset += 1000) {
    const chunk = rows.slice(offset, offset + 1000);
    await client.query(
      `insert into notice_ledger (notice_key, notice_type, identity, revision, job_id, state, claim_token, claimed_by, claimed_at, sent_at,
         provider_message_id, recipient_domain, one_time_code, source, updated_at)
       select key, type, identity, 0, job, state, gen_random_uuid(), 'demo-worker-' || (abs(hashtext(key)) % 3)::text, claimed, sent, provider, domain,
              md5(random()::text), 'worker', coalesce(sent, claimed)
       from unnest($1::text[], $2::text[], $3::jsonb[], $4::uuid[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::text[], $9::text[])
         as t(key, type, identity, job, state, claimed, sent, provider, domain)
       on conflict (notice_key) do nothing`,
      [
        chunk.map((r) => r.key),
        chunk.map((r) => r.fact.type),
        chunk.map((r) => JSON.stringify(r.fact.identity)),
        chunk.map((r) => r.jobId),
        chunk.map((r) => r.state),
        chunk.map((r) => r.claimedAt),
        chunk.map((r) => r.sentAt),
        chunk.map((r) => r.providerId),
        chunk.map((r) => r.domain),
      ],
    );
  }
}

async function insertAttempts(client: pg.PoolClient, rows: AttemptSeed[]): Promise<void> {
  for (let offset = 0; offset < rows.length; offset += 2000) {
    const chunk = rows.slice(offset, offset + 2000);
    await client.query(
      `insert into delivery_attempts (job_id, notice_key, worker_id, started_at, finished_at, outcome, detail, error_class, correlation_id, claim_to_commit_ms)
       select job, key, 'demo-worker-' || (abs(hashtext(key)) % 3)::text, at - interval '40 milliseconds', at, outcome, detail, error_class, left(key, 32), ms
       from unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::int[])
         as t(job, key, at, outcome, detail, error_class, ms)`,
      [
        chunk.map((r) => r.jobId),
        chunk.map((r) => r.key),
        chunk.map((r) => r.at),
        chunk.map((r) => r.outcome),
        chunk.map((r) => r.detail),
        chunk.map((r) => r.errorClass),
        chunk.map((r) => r.claimToCommitMs),
      ],
    );
  }
}

async function insertEvents(client: pg.PoolClient, rows: EventSeed[]): Promise<void> {
  for (let offset = 0; offset < rows.length; offset += 2000) {
    const chunk = rows.slice(offset, offset + 2000);
    await client.query(
      `insert into provider_events (provider, event_id, event_type, raw_type, correlation_id, provider_message_id, notice_key, recipient, bounce_type, occurred_at, received_at)
       select 'generic', id, type, raw, left(key, 32), provider, key, recipient, bounce, at, at + interval '2 seconds'
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::text[])
         as t(id, type, raw, key, provider, recipient, at, bounce)
       on conflict do nothing`,
      [
        chunk.map((r) => r.eventId),
        chunk.map((r) => r.type),
        chunk.map((r) => r.rawType),
        chunk.map((r) => r.key),
        chunk.map((r) => r.providerId),
        chunk.map((r) => r.recipient),
        chunk.map((r) => r.at),
        chunk.map((r) => r.bounceType),
      ],
    );
  }
}
