import type pg from 'pg';
import { subjectOf } from '@/lib/windows/notice-fact';
import type { AttemptSeed, EventSeed, JobSeed, LedgerSeed, Story } from './story';

/** The demo's rows written in bulk (unnest, a thousand or two a statement), each skipped when it is already there. */

export async function insertJobs(client: pg.PoolClient, jobs: JobSeed[], now: Date): Promise<void> {
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

export async function insertLedger(client: pg.PoolClient, rows: LedgerSeed[]): Promise<void> {
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

export async function insertAttempts(client: pg.PoolClient, rows: AttemptSeed[]): Promise<void> {
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

export async function insertEvents(client: pg.PoolClient, rows: EventSeed[]): Promise<void> {
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

/** The suppression list and the reconciliation exceptions the scenarios named. */
export async function insertSuppressionsAndEvidence(
  client: pg.PoolClient,
  { suppressions, evidence }: Pick<Story, 'suppressions' | 'evidence'>,
): Promise<void> {
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
}
