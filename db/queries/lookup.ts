import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client';

/**
 * Support lookup. Every search goes through an index: lower(recipient_email), subject_id,
 * customer_id, the primary keys (a key or Message-ID prefix is a range on them) and the
 * provider message id indexes. Columns are named one by one: one_time_code and payload
 * never leave the database through this file.
 */

export type NoticeMatch = {
  noticeKey: string;
  noticeType: string;
  subjectId: string | null;
  customerId: string | null;
  recipientEmail: string | null;
  dueAt: Date | null;
  jobState: string | null;
  ledgerState: string | null;
};

export type LookupSearch =
  | { kind: 'email'; email: string }
  | { kind: 'key_prefix'; prefix: string }
  | { kind: 'id'; id: string };

/** `[prefix, prefix + 'g')` covers every lower-case hex key starting with prefix, in any collation. */
function keyRange(column: SQL, prefix: string): SQL {
  return sql`${column} >= ${prefix} and ${column} < ${`${prefix}g`}`;
}

function keysFor(search: LookupSearch, limit: number): SQL {
  switch (search.kind) {
    case 'email':
      return sql`select notice_key from reminder_jobs where lower(recipient_email) = ${search.email.toLowerCase()} limit ${limit}`;
    case 'key_prefix':
      return sql`(select notice_key from reminder_jobs where ${keyRange(sql`notice_key`, search.prefix)} limit ${limit})
        union (select notice_key from notice_ledger where ${keyRange(sql`notice_key`, search.prefix)} limit ${limit})`;
    case 'id':
      return sql`(select notice_key from reminder_jobs where subject_id = ${search.id} limit ${limit})
        union (select notice_key from reminder_jobs where customer_id = ${search.id} limit ${limit})
        union (select notice_key from notice_ledger where provider_message_id = ${search.id} limit ${limit})
        union (select coalesce(pe.notice_key, l.notice_key) from provider_events pe
               left join notice_ledger l on pe.notice_key is null and pe.correlation_id is not null
                 and l.notice_key >= pe.correlation_id and l.notice_key < pe.correlation_id || 'g'
               where pe.provider_message_id = ${search.id} limit ${limit})`;
  }
}

export async function findNotices(db: DbOrTx, { search, limit }: { search: LookupSearch; limit: number }): Promise<NoticeMatch[]> {
  const result = await db.execute<NoticeMatch>(sql`
    with keys as (${keysFor(search, limit)})
    select k.notice_key as "noticeKey", coalesce(j.notice_type, l.notice_type) as "noticeType",
      j.subject_id as "subjectId", j.customer_id as "customerId", j.recipient_email as "recipientEmail",
      j.due_at as "dueAt", j.state as "jobState", l.state as "ledgerState"
    from (select distinct notice_key from keys where notice_key is not null) k
    left join reminder_jobs j on j.notice_key = k.notice_key
    left join notice_ledger l on l.notice_key = k.notice_key
    order by j.due_at desc nulls last, k.notice_key
    limit ${limit}`);
  return result.rows.map((row) => ({ ...row, dueAt: row.dueAt ? new Date(row.dueAt) : null }));
}

export type NoticeJob = {
  id: string;
  noticeKey: string;
  noticeType: string;
  identity: Record<string, string>;
  revision: number;
  subjectId: string;
  customerId: string | null;
  recipientEmail: string;
  dueAt: Date;
  deadlineAt: Date;
  state: string;
  suppressionReason: string | null;
  attempts: number;
  nextAttemptAt: Date;
  lastErrorClass: string | null;
  evidenceRef: string | null;
  source: string;
  batchId: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export type NoticeLedgerEntry = {
  noticeKey: string;
  noticeType: string;
  identity: Record<string, string>;
  revision: number;
  state: string;
  claimedBy: string | null;
  claimedAt: Date;
  sentAt: Date | null;
  providerMessageId: string | null;
  recipientDomain: string | null;
  source: string;
  resolution: string | null;
  resolvedAt: Date | null;
  /** Whether a one-time code is stored; the code itself is never read here. */
  hasOneTimeCode: boolean;
};

export type NoticeAttempt = {
  id: number;
  workerId: string;
  startedAt: Date;
  finishedAt: Date;
  outcome: string;
  detail: string | null;
  errorClass: string | null;
  queueMessageId: string | null;
  batchId: string | null;
  correlationId: string | null;
  claimToCommitMs: number | null;
  mode: string;
};

export type NoticeProviderEvent = {
  id: number;
  provider: string;
  eventId: string;
  eventType: string;
  rawType: string;
  correlationId: string | null;
  providerMessageId: string | null;
  recipient: string | null;
  bounceType: string | null;
  occurredAt: Date;
  receivedAt: Date;
};

export async function findNoticeJob(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<NoticeJob | null> {
  const result = await db.execute<NoticeJob>(sql`
    select id, notice_key as "noticeKey", notice_type as "noticeType", identity, revision, subject_id as "subjectId",
      customer_id as "customerId", recipient_email as "recipientEmail", due_at as "dueAt", deadline_at as "deadlineAt",
      state, suppression_reason as "suppressionReason", attempts, next_attempt_at as "nextAttemptAt",
      last_error_class as "lastErrorClass", evidence_ref as "evidenceRef", source, batch_id as "batchId",
      created_at as "createdAt", updated_at as "updatedAt"
    from reminder_jobs where notice_key = ${noticeKey}`);
  return result.rows[0] ?? null;
}

export async function findNoticeLedgerEntry(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<NoticeLedgerEntry | null> {
  const result = await db.execute<NoticeLedgerEntry>(sql`
    select notice_key as "noticeKey", notice_type as "noticeType", identity, revision, state, claimed_by as "claimedBy",
      claimed_at as "claimedAt", sent_at as "sentAt", provider_message_id as "providerMessageId",
      recipient_domain as "recipientDomain", source, resolution, resolved_at as "resolvedAt",
      one_time_code is not null as "hasOneTimeCode"
    from notice_ledger where notice_key = ${noticeKey}`);
  return result.rows[0] ?? null;
}

export async function listNoticeAttempts(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<NoticeAttempt[]> {
  const result = await db.execute<NoticeAttempt>(sql`
    select id, worker_id as "workerId", started_at as "startedAt", finished_at as "finishedAt", outcome, detail,
      error_class as "errorClass", queue_message_id as "queueMessageId", batch_id as "batchId",
      correlation_id as "correlationId", claim_to_commit_ms as "claimToCommitMs", mode
    from delivery_attempts where notice_key = ${noticeKey}
    order by started_at, id limit 500`);
  return result.rows;
}

export async function listNoticeProviderEvents(
  db: DbOrTx,
  { noticeKey, providerMessageId }: { noticeKey: string; providerMessageId: string | null },
): Promise<NoticeProviderEvent[]> {
  const byProviderId = providerMessageId ? sql`or provider_message_id = ${providerMessageId}` : sql``;
  const result = await db.execute<NoticeProviderEvent>(sql`
    select id, provider, event_id as "eventId", event_type as "eventType", raw_type as "rawType",
      correlation_id as "correlationId", provider_message_id as "providerMessageId", recipient,
      bounce_type as "bounceType", occurred_at as "occurredAt", received_at as "receivedAt"
    from provider_events
    where notice_key = ${noticeKey} or correlation_id = ${noticeKey.slice(0, 32)} ${byProviderId}
    order by occurred_at, id limit 200`);
  return result.rows;
}

export type RecipientSuppressionEntry = { email: string; reason: string; note: string | null; createdAt: Date };

export async function findRecipientSuppression(db: DbOrTx, { email }: { email: string }): Promise<RecipientSuppressionEntry | null> {
  const result = await db.execute<RecipientSuppressionEntry>(sql`
    select email, reason, note, created_at as "createdAt" from recipient_suppressions where email = ${email.toLowerCase()}`);
  return result.rows[0] ?? null;
}

export type EvidenceEntry = { ref: string; kind: string; state: string; summary: string | null; openedAt: Date; resolvedAt: Date | null; resolvedBy: string | null };

export async function findEvidence(db: DbOrTx, { ref }: { ref: string }): Promise<EvidenceEntry | null> {
  const result = await db.execute<EvidenceEntry>(sql`
    select ref, kind, state, summary, opened_at as "openedAt", resolved_at as "resolvedAt", resolved_by as "resolvedBy"
    from evidence where ref = ${ref}`);
  return result.rows[0] ?? null;
}
