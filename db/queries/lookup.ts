import { asc, eq, or, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { deliveryAttempts, reminderJobs } from '@/db/schema/jobs';
import { evidence, providerEvents, recipientSuppressions } from '@/db/schema/events';
import { noticeLedger } from '@/db/schema/ledger';
import { businessEvents } from '@/db/schema/planning';
import type { Channel, JobState, LedgerState, NoticeCategory, ProviderHandOverStatus } from '@/db/schema/states';
import { toDateOrNull } from './console-dates';

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
  jobState: JobState | null;
  ledgerState: LedgerState | null;
};

export type LookupSearch =
  { kind: 'email'; email: string } | { kind: 'phone'; phone: string } | { kind: 'key_prefix'; prefix: string } | { kind: 'id'; id: string };

/** `[prefix, prefix + 'g')` covers every lower-case hex key starting with prefix, in any collation. */
function keyRange(column: SQL, prefix: string | SQL): SQL {
  return typeof prefix === 'string'
    ? sql`${column} >= ${prefix} and ${column} < ${`${prefix}g`}`
    : sql`${column} >= ${prefix} and ${column} < ${prefix} || 'g'`;
}

function keysFor(search: LookupSearch, limit: number): SQL {
  switch (search.kind) {
    case 'email':
      return sql`select notice_key from reminder_jobs where lower(recipient_email) = ${search.email.toLowerCase()} limit ${limit}`;
    case 'phone':
      return sql`select notice_key from reminder_jobs where recipient_phone = ${search.phone} limit ${limit}`;
    case 'key_prefix':
      return sql`(select notice_key from reminder_jobs where ${keyRange(sql`notice_key`, search.prefix)} limit ${limit})
        union (select notice_key from notice_ledger where ${keyRange(sql`notice_key`, search.prefix)} limit ${limit})`;
    case 'id':
      return sql`(select notice_key from reminder_jobs where subject_id = ${search.id} limit ${limit})
        union (select notice_key from reminder_jobs where customer_id = ${search.id} limit ${limit})
        union (select notice_key from notice_ledger where provider_message_id = ${search.id} limit ${limit})
        union (select coalesce(pe.notice_key, (
                 -- An unlinked event: its correlation is the key's first 32 hex. A scalar
                 -- subquery with limit 1 (not a join) keeps the planner on the provider-id
                 -- index: at 10 M ledger rows the join's range estimate (~1 M rows) made it
                 -- seq-scan provider_events instead (274 ms → see bench/console-scale.ts).
                 select l.notice_key from notice_ledger l
                 where pe.correlation_id is not null and ${keyRange(sql`l.notice_key`, sql`pe.correlation_id`)}
                 order by l.notice_key limit 1))
               from provider_events pe
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
  return result.rows.map((row) => ({ ...row, dueAt: toDateOrNull(row.dueAt) }));
}

export type NoticeJob = {
  id: string;
  noticeKey: string;
  noticeType: string;
  identity: Record<string, string>;
  revision: number;
  subjectId: string;
  customerId: string | null;
  recipientEmail: string | null;
  channel: Channel;
  recipientPhone: string | null;
  /** The Twilio code that refused the text when the notice fell back to email (lib/jobs/sms-fallback.ts). */
  smsRefusedCode: string | null;
  dueAt: Date;
  deadlineAt: Date;
  /** The window is [windowEarliest ?? dueAt, deadlineAt]. */
  windowEarliest: Date | null;
  recipientTimeZone: string;
  category: NoticeCategory;
  region: string | null;
  ruleIds: string[];
  ruleSetVersion: string | null;
  /** The business event that planned it, when one did. */
  event: NoticeBusinessEvent | null;
  state: JobState;
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

export type NoticeBusinessEvent = { id: string; type: string; revision: number; anchorAt: Date; source: string; ruleSetVersion: string };

export type NoticeLedgerEntry = {
  noticeKey: string;
  noticeType: string;
  identity: Record<string, string>;
  revision: number;
  state: LedgerState;
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
  /** The template version its send recorded (template_versions); null before versions were recorded. */
  templateVersionId: string | null;
  /** Where a provisional hand-over stands (SendGrid: accepted → processed / dropped); null for a final answer. */
  providerStatus: ProviderHandOverStatus | null;
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
  const [row] = await db
    .select({
      id: reminderJobs.id,
      noticeKey: reminderJobs.noticeKey,
      noticeType: reminderJobs.noticeType,
      identity: reminderJobs.identity,
      revision: reminderJobs.revision,
      subjectId: reminderJobs.subjectId,
      customerId: reminderJobs.customerId,
      recipientEmail: reminderJobs.recipientEmail,
      channel: reminderJobs.channel,
      recipientPhone: reminderJobs.recipientPhone,
      smsRefusedCode: reminderJobs.smsRefusedCode,
      dueAt: reminderJobs.dueAt,
      deadlineAt: reminderJobs.deadlineAt,
      windowEarliest: reminderJobs.windowEarliest,
      recipientTimeZone: reminderJobs.recipientTimeZone,
      category: reminderJobs.category,
      region: reminderJobs.region,
      ruleIds: reminderJobs.ruleIds,
      ruleSetVersion: reminderJobs.ruleSetVersion,
      eventId: businessEvents.id,
      eventType: businessEvents.type,
      eventRevision: businessEvents.revision,
      eventAnchorAt: businessEvents.anchorAt,
      eventSource: businessEvents.source,
      eventRuleSetVersion: businessEvents.ruleSetVersion,
      state: reminderJobs.state,
      suppressionReason: reminderJobs.suppressionReason,
      attempts: reminderJobs.attempts,
      nextAttemptAt: reminderJobs.nextAttemptAt,
      lastErrorClass: reminderJobs.lastErrorClass,
      evidenceRef: reminderJobs.evidenceRef,
      source: reminderJobs.source,
      batchId: reminderJobs.batchId,
      createdAt: reminderJobs.createdAt,
      updatedAt: reminderJobs.updatedAt,
    })
    .from(reminderJobs)
    .leftJoin(businessEvents, eq(businessEvents.id, reminderJobs.eventId))
    .where(eq(reminderJobs.noticeKey, noticeKey))
    .limit(1);
  if (!row) return null;
  const { eventId, eventType, eventRevision, eventAnchorAt, eventSource, eventRuleSetVersion, ...job } = row;
  const event =
    eventId && eventType !== null && eventRevision !== null && eventAnchorAt && eventSource !== null && eventRuleSetVersion !== null
      ? { id: eventId, type: eventType, revision: eventRevision, anchorAt: eventAnchorAt, source: eventSource, ruleSetVersion: eventRuleSetVersion }
      : null;
  return { ...job, event };
}

export async function findNoticeLedgerEntry(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<NoticeLedgerEntry | null> {
  const [row] = await db
    .select({
      noticeKey: noticeLedger.noticeKey,
      noticeType: noticeLedger.noticeType,
      identity: noticeLedger.identity,
      revision: noticeLedger.revision,
      state: noticeLedger.state,
      claimedBy: noticeLedger.claimedBy,
      claimedAt: noticeLedger.claimedAt,
      sentAt: noticeLedger.sentAt,
      providerMessageId: noticeLedger.providerMessageId,
      recipientDomain: noticeLedger.recipientDomain,
      source: noticeLedger.source,
      resolution: noticeLedger.resolution,
      resolvedAt: noticeLedger.resolvedAt,
      hasOneTimeCode: sql<boolean>`${noticeLedger.oneTimeCode} is not null`,
      templateVersionId: noticeLedger.templateVersionId,
      providerStatus: noticeLedger.providerStatus,
    })
    .from(noticeLedger)
    .where(eq(noticeLedger.noticeKey, noticeKey))
    .limit(1);
  return row ?? null;
}

export async function listNoticeAttempts(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<NoticeAttempt[]> {
  return db
    .select({
      id: deliveryAttempts.id,
      workerId: deliveryAttempts.workerId,
      startedAt: deliveryAttempts.startedAt,
      finishedAt: deliveryAttempts.finishedAt,
      outcome: deliveryAttempts.outcome,
      detail: deliveryAttempts.detail,
      errorClass: deliveryAttempts.errorClass,
      queueMessageId: deliveryAttempts.queueMessageId,
      batchId: deliveryAttempts.batchId,
      correlationId: deliveryAttempts.correlationId,
      claimToCommitMs: deliveryAttempts.claimToCommitMs,
      mode: deliveryAttempts.mode,
    })
    .from(deliveryAttempts)
    .where(eq(deliveryAttempts.noticeKey, noticeKey))
    .orderBy(asc(deliveryAttempts.startedAt), asc(deliveryAttempts.id))
    .limit(500);
}

export async function listNoticeProviderEvents(
  db: DbOrTx,
  { noticeKey, providerMessageId }: { noticeKey: string; providerMessageId: string | null },
): Promise<NoticeProviderEvent[]> {
  const matches = [eq(providerEvents.noticeKey, noticeKey), eq(providerEvents.correlationId, noticeKey.slice(0, 32))];
  if (providerMessageId) matches.push(eq(providerEvents.providerMessageId, providerMessageId));
  return db
    .select({
      id: providerEvents.id,
      provider: providerEvents.provider,
      eventId: providerEvents.eventId,
      eventType: providerEvents.eventType,
      rawType: providerEvents.rawType,
      correlationId: providerEvents.correlationId,
      providerMessageId: providerEvents.providerMessageId,
      recipient: providerEvents.recipient,
      bounceType: providerEvents.bounceType,
      occurredAt: providerEvents.occurredAt,
      receivedAt: providerEvents.receivedAt,
    })
    .from(providerEvents)
    .where(or(...matches))
    .orderBy(asc(providerEvents.occurredAt), asc(providerEvents.id))
    .limit(200);
}

export type RecipientSuppressionEntry = { email: string; reason: string; note: string | null; createdAt: Date };

export async function findRecipientSuppression(db: DbOrTx, { email }: { email: string }): Promise<RecipientSuppressionEntry | null> {
  const [row] = await db
    .select({
      email: recipientSuppressions.email,
      reason: recipientSuppressions.reason,
      note: recipientSuppressions.note,
      createdAt: recipientSuppressions.createdAt,
    })
    .from(recipientSuppressions)
    .where(eq(recipientSuppressions.email, email.toLowerCase()))
    .limit(1);
  return row ?? null;
}

export type EvidenceEntry = {
  ref: string;
  kind: string;
  state: string;
  summary: string | null;
  openedAt: Date;
  resolvedAt: Date | null;
  resolvedBy: string | null;
};

export async function findEvidence(db: DbOrTx, { ref }: { ref: string }): Promise<EvidenceEntry | null> {
  const [row] = await db
    .select({
      ref: evidence.ref,
      kind: evidence.kind,
      state: evidence.state,
      summary: evidence.summary,
      openedAt: evidence.openedAt,
      resolvedAt: evidence.resolvedAt,
      resolvedBy: evidence.resolvedBy,
    })
    .from(evidence)
    .where(eq(evidence.ref, ref))
    .limit(1);
  return row ?? null;
}
