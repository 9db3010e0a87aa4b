import { and, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { noticeLedger } from '@/db/schema';
import { jobEventCtes } from '@/db/queries/webhooks';
import type { StoredBody } from '@/db/queries/evidence-body';
import { hotQuery } from './hot-query';

/** The worker's result: `sent` after an accepted send, `released` after a definite rejection. Both conditional on claim_token. */

const COMMIT_SENT_SQL = `
    with ledger as (
      update notice_ledger set state = 'sent', sent_at = now(), provider_message_id = $3::text, template_version_id = $13::text, provider_status = $16::text, updated_at = now()
      where $2::uuid is not null and notice_key = $1::text and claim_token = $2::uuid and state = 'claimed'
      returning notice_key
    ), attempt as (
      insert into delivery_attempts (job_id, notice_key, worker_id, started_at, outcome, detail, queue_message_id, batch_id, correlation_id, claim_to_commit_ms, mode)
      select $4::uuid, $1::text, $5::text, $6::timestamptz, 'sent', case when exists (select 1 from ledger) then $12::text else 'claim_not_owned' end,
             $7::text, $8::text, $9::text, $10::int, $11::text
      returning id
    ), job as (
      update reminder_jobs set state = 'sent', attempts = attempts + 1, last_error_class = null, updated_at = now()
      where id = $4::uuid and state in ('pending', 'claimed')
      returning id
    ), evidence as (
      insert into evidence_entries (notice_key, job_id, kind, body, body_brotli, body_hash)
      select $1::text, $4::uuid, $14::text, $15::text, $17::bytea, $18::text where $14::text is not null
      returning id
    )
    select (select count(*) from ledger)::int as owned, (select count(*) from attempt)::int as attempts, (select count(*) from job)::int as jobs`;

// With an endpoint subscribed to notice.sent: the same statement also writes the event, so it
// commits with the job's move to `sent` (lib/webhooks/outbox.ts decides, from a cached set).
const SENT_EVENT_CTES = jobEventCtes({
  prefix: 'sent',
  type: 'notice.sent',
  jobsCte: 'job',
  extraSql: "jsonb_build_object('outcome', 'sent', 'sentAt', now())",
});
const COMMIT_SENT_OUTBOX_SQL = COMMIT_SENT_SQL.replace(/\)\n {4}select \(select count/, `), ${SENT_EVENT_CTES}\n    select (select count`);

export type CommitSentParams = {
  noticeKey: string;
  /** The token of the claim this attempt holds; null when it holds none (shadow mode). */
  claimToken: string | null;
  providerMessageId: string | null;
  jobId: string;
  workerId: string;
  startedAt: Date;
  queueMessageId: string | null;
  batchId: string | null;
  correlationId: string | null;
  claimToCommitMs: number | null;
  mode: 'shadow' | 'enforce';
  /** The attempt's detail when the claim was ours (`quiet_hours_overridden`); null for none. */
  detail?: string | null;
  /** The template version the message was rendered from (template_versions, stored before this commit); null for none known. */
  templateVersionId?: string | null;
  /** The send's evidence entry (lib/evidence/send-evidence.ts), unchained, written by this same statement; absent for a type that keeps none. */
  evidence?: { kind: string; body: StoredBody } | null;
  /** `accepted` when the provider's answer was provisional (SendGrid's 202): its events settle it (db/schema/ledger.ts providerStatus). */
  providerStatus?: 'accepted' | null;
};

/**
 * The result commit after an accepted send, as ONE statement (one transaction, one round trip):
 * ledger `sent` (only if this attempt still owns the claim), job `sent`, and the attempt row
 * (`claim_not_owned` when the ledger was not ours to move), and the send's evidence entry when it
 * has one (unchained: the chainer links it later, off this path). Returns whether the claim was ours.
 */
export async function commitSent(db: DbOrTx, params: CommitSentParams, { outbox = false }: { outbox?: boolean } = {}): Promise<boolean> {
  const stored = params.evidence?.body ?? null;
  const rows = await hotQuery<{ owned: number }>(
    db,
    outbox ? 'ledger_commit_sent_outbox' : 'ledger_commit_sent',
    outbox ? COMMIT_SENT_OUTBOX_SQL : COMMIT_SENT_SQL,
    [
      params.noticeKey,
      params.claimToken,
      params.providerMessageId,
      params.jobId,
      params.workerId,
      params.startedAt,
      params.queueMessageId,
      params.batchId,
      params.correlationId,
      params.claimToCommitMs,
      params.mode,
      params.detail ?? null,
      params.templateVersionId ?? null,
      params.evidence?.kind ?? null,
      stored?.text ?? null,
      params.providerStatus ?? null,
      stored?.brotli ?? null,
      stored?.hash ?? null,
    ],
  );
  return (rows[0]?.owned ?? 0) > 0;
}

// `owned` and `jobs`: the batch's ledger rows and jobs, locked by key in key order and judged
// on the locked row, never found through a partial index of claimed or open rows (claim.ts,
// claimManyQuery). (No comments inside the text: pg_stat_activity shows its first 1 024 bytes.)
const COMMIT_SENT_MANY_SQL = `
    with input as (
      select * from unnest($1::text[], $2::uuid[], $3::text[], $4::uuid[], $5::text[], $6::timestamptz[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[], $12::text[], $13::text[], $14::text[],
                           string_to_array($15::text, E'\\x01', ''), $16::text[], $17::int[], $18::int[], $19::text[])
        as t(notice_key, claim_token, provider_message_id, job_id, worker_id, started_at, queue_message_id, batch_id, correlation_id, claim_to_commit_ms, mode, detail, template_version_id, evidence_kind, evidence_body, provider_status, evidence_from, evidence_length, evidence_hash)
      order by notice_key
    ), owned as (
      select l.notice_key, l.claim_token, l.state from notice_ledger l where l.notice_key = any($1::text[]) order by l.notice_key for update of l
    ), ledger as (
      update notice_ledger l set state = 'sent', sent_at = now(), provider_message_id = i.provider_message_id, template_version_id = i.template_version_id, provider_status = i.provider_status, updated_at = now()
      from input i join owned o on o.notice_key = i.notice_key
      where l.notice_key = any($1::text[]) and l.notice_key = i.notice_key and i.claim_token is not null and o.claim_token = i.claim_token and o.state = 'claimed'
      returning l.notice_key
    ), attempt as (
      insert into delivery_attempts (job_id, notice_key, worker_id, started_at, outcome, detail, queue_message_id, batch_id, correlation_id, claim_to_commit_ms, mode)
      select i.job_id, i.notice_key, i.worker_id, i.started_at, 'sent',
             case when exists (select 1 from ledger where ledger.notice_key = i.notice_key) then i.detail else 'claim_not_owned' end,
             i.queue_message_id, i.batch_id, i.correlation_id, i.claim_to_commit_ms, i.mode
      from input i
      returning id
    ), jobs as (
      select j.id, j.state from reminder_jobs j where j.id = any($4::uuid[]) order by j.id for update of j
    ), job as (
      update reminder_jobs j set state = 'sent', attempts = j.attempts + 1, last_error_class = null, updated_at = now()
      from input i join jobs k on k.id = i.job_id where j.id = any($4::uuid[]) and j.id = i.job_id and k.state in ('pending', 'claimed')
      returning j.id
    ), evidence as (
      insert into evidence_entries (notice_key, job_id, kind, body, body_brotli, body_hash)
      select i.notice_key, i.job_id, i.evidence_kind, i.evidence_body, substring($20::bytea from i.evidence_from for i.evidence_length), i.evidence_hash
      from input i where i.evidence_kind is not null
      returning id
    )
    select notice_key, (select count(*) from attempt) as attempts, (select count(*) from job) as jobs from ledger`;

const COMMIT_SENT_MANY_OUTBOX_SQL = COMMIT_SENT_MANY_SQL.replace(/\)\n {4}select notice_key,/, `), ${SENT_EVENT_CTES}\n    select notice_key,`);

const BODY_SEPARATOR = Buffer.from([0x01]);

/**
 * Every item's evidence body in its stored form (db/queries/evidence-body.ts), as the statement
 * takes them. A send's body (the rendered message, ~14 KB) is compressed: all of them go as ONE
 * bytea, with each one's 1-based offset and length into it (null for a text body or none) and its
 * hash. The short ones go as ONE text, joined by U+0001 ('' for an item without one, which
 * string_to_array turns back into null). A text[] the driver escapes element by element in
 * JavaScript; a JSON array the worker escapes again and the server unescapes again — measured on
 * 30-entry batches of uncompressed bodies, the JSON array cost the server 0.12 ms per entry more
 * than the joined text (bench/evidence-cost.ts). A body is canonical JSON (lib/evidence/hash.ts),
 * in which every character below U+0020 is escaped, so the separator cannot occur in one; a body
 * that holds it anyway is refused, never split.
 *
 * Both go to the driver as bytes, which it sends as the parameter's binary form (for `text`, the
 * same bytes the server reads from the text form): joining 50 strings into one and letting the
 * driver encode it cost 50–135 µs per 14 KB body in a micro-benchmark; encoding each body and
 * concatenating the bytes, 4–22 µs.
 */
export function evidenceParams(commits: readonly Pick<CommitSentParams, 'evidence'>[]): {
  texts: Buffer;
  compressed: Buffer;
  from: (number | null)[];
  length: (number | null)[];
  hash: (string | null)[];
} {
  const texts: Buffer[] = [];
  const compressed: Buffer[] = [];
  const from: (number | null)[] = [];
  const length: (number | null)[] = [];
  const hash: (string | null)[] = [];
  let offset = 1;
  commits.forEach((c, index) => {
    if (index > 0) texts.push(BODY_SEPARATOR);
    const stored = c.evidence?.body ?? null;
    if (stored?.text) {
      if (stored.text.indexOf('\u0001') !== -1) throw new Error('an evidence body holds U+0001: not canonical JSON');
      texts.push(Buffer.from(stored.text, 'utf8'));
    }
    if (stored?.brotli) {
      compressed.push(stored.brotli);
      from.push(offset);
      length.push(stored.brotli.length);
      hash.push(stored.hash);
      offset += stored.brotli.length;
    } else {
      from.push(null);
      length.push(null);
      hash.push(null);
    }
  });
  return { texts: Buffer.concat(texts), compressed: Buffer.concat(compressed), from, length, hash };
}

/** The statement commitSentMany runs, as node-postgres takes it; by key on every table, as claimManyQuery (claim.ts) says why. */
export function commitSentManyQuery(
  commits: readonly CommitSentParams[],
  { outbox = false }: { outbox?: boolean } = {},
): { name: string; text: string; values: unknown[] } {
  const evidence = evidenceParams(commits);
  return {
    name: outbox ? 'ledger_commit_sent_many_outbox' : 'ledger_commit_sent_many',
    text: outbox ? COMMIT_SENT_MANY_OUTBOX_SQL : COMMIT_SENT_MANY_SQL,
    values: [
      commits.map((c) => c.noticeKey),
      commits.map((c) => c.claimToken),
      commits.map((c) => c.providerMessageId),
      commits.map((c) => c.jobId),
      commits.map((c) => c.workerId),
      commits.map((c) => c.startedAt),
      commits.map((c) => c.queueMessageId),
      commits.map((c) => c.batchId),
      commits.map((c) => c.correlationId),
      commits.map((c) => c.claimToCommitMs),
      commits.map((c) => c.mode),
      commits.map((c) => c.detail ?? null),
      commits.map((c) => c.templateVersionId ?? null),
      commits.map((c) => c.evidence?.kind ?? null),
      evidence.texts,
      commits.map((c) => c.providerStatus ?? null),
      evidence.from,
      evidence.length,
      evidence.hash,
      evidence.compressed,
    ],
  };
}

/**
 * Many result commits in ONE statement (one transaction): for each item exactly what
 * commitSent does for one, its evidence entry included. Keys must be distinct. Returns, per item, whether the claim was ours.
 */
export async function commitSentMany(db: Db, commits: readonly CommitSentParams[], { outbox = false }: { outbox?: boolean } = {}): Promise<boolean[]> {
  if (commits.length === 0) return [];
  const { rows } = await db.$client.query<{ notice_key: string }>(commitSentManyQuery(commits, { outbox }));
  const owned = new Set(rows.map((row) => row.notice_key));
  return commits.map((c) => owned.has(c.noticeKey));
}

/**
 * Only after a definite rejection (the relay answered 4xx/5xx): the mail is known not to be
 * out. Nothing else in the worker releases a claim.
 */
export async function releaseClaim(db: DbOrTx, { noticeKey, claimToken }: { noticeKey: string; claimToken: string }): Promise<boolean> {
  const rows = await db
    .update(noticeLedger)
    .set({ state: 'released', claimToken: null, updatedAt: sql`now()` })
    .where(and(eq(noticeLedger.noticeKey, noticeKey), eq(noticeLedger.claimToken, claimToken), eq(noticeLedger.state, 'claimed')))
    .returning({ noticeKey: noticeLedger.noticeKey });
  return rows.length > 0;
}

/**
 * A provisional hand-over settled by the provider's own event for the message (SendGrid):
 * `accepted` → `processed` on any hand-over event, → `dropped` when it dropped the message.
 * Only from `accepted`, so a late or repeated event changes nothing, and a row whose answer was
 * final (every other transport: provider_status null) is never touched. Returns whether it moved.
 */
export async function settleProviderStatus(db: DbOrTx, { noticeKey, status }: { noticeKey: string; status: 'processed' | 'dropped' }): Promise<boolean> {
  const rows = await db
    .update(noticeLedger)
    .set({ providerStatus: status, updatedAt: sql`now()` })
    .where(and(eq(noticeLedger.noticeKey, noticeKey), eq(noticeLedger.providerStatus, 'accepted')))
    .returning({ noticeKey: noticeLedger.noticeKey });
  return rows.length > 0;
}
