import type { Db } from '@/db/client';
import { insertAuditEntries, type AuditEntry } from '@/db/queries/audit';
import { findJobByNoticeKey } from '@/db/queries/scheduling';
import type { JobRow } from '@/db/schema/jobs';
import type { ScheduleRequest } from '@/lib/api/producer';
import { parseIdentity } from '@/lib/windows/identity';
import type { Channel } from '@/db/schema/states';
import { normalisePhone } from '@/lib/sms/phone';
import { chooseChannel } from '@/lib/windows/channel';
import { derivedEvidenceRef, evidenceRefProblem } from '@/lib/windows/evidence-ref';
import { noticeKeyFor } from '@/lib/windows/keys';
import type { NoticeConfig, NoticeType, RuleSet } from '@/lib/windows/load-config';
import { windowForNotice } from '@/lib/windows/notice-window';
import { traced, type Span } from '@/lib/telemetry/tracing';
import { enqueueNotice, type Notice } from './enqueue-notice';
import type { ProducerSettings } from './producer-settings';
import { fieldOf, noticePayloadProblems } from '@/lib/templates/payload';
import { noticeAttributes } from '@/lib/jobs/notice-spans';

/**
 * Scheduling is idempotent on the notice key: a producer that retries (timeout, redeploy,
 * nightly run twice) gets the job it already has. The same key with a different body is a
 * conflict, not an update — a corrected notice is a new notice with a bumped revision.
 */

/** A request whose deadline is known: given, or the computed window's latest. */
export type ResolvedScheduleRequest = Omit<ScheduleRequest, 'deadlineAt'> & { deadlineAt: Date };

/** The window computed for a request with `anchorAt`, as it is stored on the job and answered. */
export type ComputedWindow = { earliest: Date; latest: Date; ruleIds: string[]; ruleSetVersion: string; category: 'required' | 'courtesy' };

export type ScheduleResult =
  | { kind: 'created'; job: JobRow }
  | { kind: 'existing'; job: JobRow }
  | { kind: 'conflict'; job: JobRow; message: string; fields: string[] }
  | { kind: 'invalid'; message: string; fields: string[] }
  /** The payload lacks a variable its template declares, or has one of the wrong type: 422 naming the field. */
  | { kind: 'invalid_payload'; message: string; fields: string[] }
  /** A well-formed field whose value cannot be used (a phone number that is no number): 422 naming it. */
  | { kind: 'unprocessable'; code: 'invalid_phone' | 'no_channel'; message: string; fields: string[] }
  /** The request is well-formed but its dueAt (or deadlineAt) falls outside the computed window: 422 naming the rules. */
  | { kind: 'outside_window'; message: string; fields: string[]; ruleIds: string[]; window: { earliest: Date; latest: Date } | null };

export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${stableJson(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Which fields of a retried request differ from the job already scheduled under its key.
 * Provenance (source, batchId) is not compared: a replay of the same notice is the same notice.
 */
export function differingFields(job: JobRow, request: ResolvedScheduleRequest): string[] {
  const fields: string[] = [];
  if ((job.recipientEmail?.toLowerCase() ?? null) !== (request.recipient.email ?? null)) fields.push('recipient.email');
  if (job.recipientTimeZone !== request.recipient.timeZone) fields.push('recipient.timeZone');
  if ((job.recipientLocale ?? null) !== (request.recipient.locale ?? null)) fields.push('recipient.locale');
  if ((job.recipientPhone ?? null) !== (request.recipient.phone ?? null)) fields.push('recipient.phone');
  if (job.dueAt.getTime() !== request.dueAt.getTime()) fields.push('dueAt');
  if (job.deadlineAt.getTime() !== request.deadlineAt.getTime()) fields.push('deadlineAt');
  if (stableJson(job.payload) !== stableJson(request.payload)) fields.push('payload');
  // A request without one took the type's formed reference (or none, before the type declared it): not a difference.
  if (request.evidenceRef !== undefined && job.evidenceRef !== request.evidenceRef) fields.push('evidenceRef');
  if ((job.customerId ?? null) !== (request.customerId ?? null)) fields.push('customerId');
  return fields;
}

function compareWithExisting(job: JobRow, request: ResolvedScheduleRequest): ScheduleResult {
  const fields = differingFields(job, request);
  if (fields.length === 0) return { kind: 'existing', job };
  return {
    kind: 'conflict',
    job,
    fields,
    message: `notice already scheduled as job ${job.id} with different ${fields.join(', ')}; a corrected notice needs a higher revision`,
  };
}

/** Checks that only apply to a new job, against the injected clock. */
export function timingProblems(request: ResolvedScheduleRequest, { now, maxDelayMs }: { now: Date; maxDelayMs: number }): string[] {
  const problems: string[] = [];
  if (request.deadlineAt.getTime() <= now.getTime()) problems.push('deadlineAt: is in the past; the notice could only be suppressed');
  if (request.dueAt.getTime() > now.getTime() + maxDelayMs) {
    problems.push(`dueAt: is more than ${Math.round(maxDelayMs / 86_400_000)} days ahead (MAX_DELAY); the ledger only promises to remember that far`);
  }
  return problems;
}

export type ScheduleParams = ProducerSettings & { db: Db; request: ScheduleRequest; actor: string };

const rangeText = (window: { earliest: Date; latest: Date }) => `${window.earliest.toISOString()} – ${window.latest.toISOString()}`;

/**
 * With `anchorAt`, the notice's window (merchant window ∩ the rules for `region`) bounds the
 * request: `deadlineAt` defaults to its latest instant and may not pass it, and `dueAt` must lie
 * inside it — except that a `dueAt` already past is fine while the window is open (it is sent at
 * once). Without `anchorAt` nothing changes.
 */
export function windowOfRequest(
  request: ScheduleRequest,
  { config, ruleSet, now }: { config: NoticeConfig; ruleSet: RuleSet; now: Date },
): { ok: true; request: ResolvedScheduleRequest; window: ComputedWindow | null } | { ok: false; result: ScheduleResult } {
  if (request.anchorAt === undefined) {
    if (request.deadlineAt === undefined) throw new Error('deadlineAt is checked by the schema');
    return { ok: true, request: { ...request, deadlineAt: request.deadlineAt }, window: null };
  }
  const computed = windowForNotice({
    config,
    ruleSet,
    noticeType: request.type,
    anchorAt: request.anchorAt,
    region: request.region ?? null,
    timeZone: request.recipient.timeZone,
    contract: request.contract ?? {},
  });
  const refuse = (
    message: string,
    fields: string[],
    ruleIds: string[],
    window: { earliest: Date; latest: Date } | null,
  ): { ok: false; result: ScheduleResult } => ({
    ok: false,
    result: { kind: 'outside_window', message, fields, ruleIds, window },
  });
  if (!computed.ok)
    return refuse(`no window for ${request.type} at this anchor: ${computed.detail} (${computed.reason})`, ['anchorAt'], computed.ruleIds, null);
  const { window, ruleIds } = computed;
  const named = ruleIds.length > 0 ? ruleIds.join(', ') : `the merchant window of ${request.type}`;
  const deadlineAt = request.deadlineAt ?? window.latest;
  if (deadlineAt.getTime() > window.latest.getTime())
    return refuse(`deadlineAt: is after the window's latest instant ${window.latest.toISOString()} set by ${named}`, ['deadlineAt'], ruleIds, window);
  if (request.dueAt.getTime() > window.latest.getTime())
    return refuse(`dueAt: is after the allowed window ${rangeText(window)} set by ${named}`, ['dueAt'], ruleIds, window);
  if (request.dueAt.getTime() < window.earliest.getTime() && window.earliest.getTime() > now.getTime())
    return refuse(`dueAt: is before the allowed window ${rangeText(window)} set by ${named}`, ['dueAt'], ruleIds, window);
  return {
    ok: true,
    request: { ...request, deadlineAt },
    window: { earliest: window.earliest, latest: deadlineAt, ruleIds, ruleSetVersion: computed.ruleSetVersion, category: computed.category },
  };
}

/**
 * The recipient's phone in E.164 and the channel the notice will go by (its type's channels, the
 * first the recipient has an address on). Both are stored on the job, neither is a key input.
 */
export function recipientChannel(
  type: NoticeType | undefined,
  recipient: { email?: string | undefined; phone?: string | undefined },
  region: string | null,
): { ok: true; phone: string | null; channel: Channel } | { ok: false; result: ScheduleResult } {
  let phone: string | null = null;
  if (recipient.phone !== undefined) {
    const normalised = normalisePhone(recipient.phone, region);
    if (!normalised.ok)
      return {
        ok: false,
        result: { kind: 'unprocessable', code: 'invalid_phone', message: `recipient.phone: ${normalised.problems.join('; ')}`, fields: ['recipient.phone'] },
      };
    phone = normalised.value.e164;
  }
  const email = recipient.email ?? null;
  const channel = type ? chooseChannel(type, { email, phone }) : email ? 'email' : null;
  if (!channel) {
    const channels = type?.channels ?? ['email'];
    const wanted = channels.join(' or ');
    const field = channels.includes('sms') ? 'recipient.phone' : 'recipient.email';
    return {
      ok: false,
      result: {
        kind: 'unprocessable',
        code: 'no_channel',
        message: `${field}: ${type?.name ?? 'the notice'} goes by ${wanted}; give ${channels.map((channel) => (channel === 'sms' ? 'recipient.phone' : 'recipient.email')).join(' or ')}`,
        fields: [field],
      },
    };
  }
  return { ok: true, phone, channel };
}

/** What `notice.schedule` records: the outcome and, when there is one, the job (id, correlation, type). */
function annotateScheduled(span: Span, result: ScheduleResult): void {
  span.setAttribute('notice.schedule.result', result.kind);
  if ('job' in result) span.setAttributes(noticeAttributes(result.job));
}

/** A request that passed every check that needs no row: its key, its resolved times and the job it would make. */
export type PreparedSchedule = { key: string; request: ResolvedScheduleRequest; notice: Notice };

/**
 * Everything scheduling decides before it reads a row: the identity, the recipient's channel,
 * the payload against its template, the evidence reference, the window; then the key and the
 * job it would make. The single request and the batch (schedule-batch.ts) both start here.
 */
export function prepareSchedule(
  raw: ScheduleRequest,
  { now, secret, notices }: Pick<ScheduleParams, 'now' | 'secret' | 'notices'>,
): { ok: true; prepared: PreparedSchedule } | { ok: false; result: ScheduleResult } {
  const parsed = parseIdentity(notices.config, raw.type, raw.identity);
  if (!parsed.ok) return { ok: false, result: { kind: 'invalid', message: parsed.problems.join('; '), fields: ['type', 'identity'] } };
  const fact = { type: raw.type, identity: parsed.identity, revision: raw.revision };
  const type = notices.config.noticeTypes[fact.type];
  const addressed = recipientChannel(type, raw.recipient, raw.region ?? null);
  if (!addressed.ok) return addressed;
  const input: ScheduleRequest = { ...raw, recipient: { ...raw.recipient, ...(addressed.phone ? { phone: addressed.phone } : {}) } };
  const subjectField = type ? notices.config.eventTypes[type.event]?.subjectField : undefined;
  const subjectId = (subjectField && fact.identity[subjectField]) || '';
  const payloadIssues = noticePayloadProblems(notices.config, fact.type, input.payload, { hasAnchor: input.anchorAt !== undefined });
  if (payloadIssues.length > 0)
    return { ok: false, result: { kind: 'invalid_payload', message: payloadIssues.join('; '), fields: payloadIssues.map(fieldOf) } };
  const evidence = evidenceRefProblem(input.evidenceRef ?? derivedEvidenceRef(notices.config, fact.type, fact.identity));
  if (evidence) return { ok: false, result: { kind: 'invalid', message: evidence, fields: ['evidenceRef'] } };
  const resolved = windowOfRequest(input, { ...notices, now });
  if (!resolved.ok) return resolved;
  const { request, window } = resolved;
  const key = noticeKeyFor(secret, notices.config, { noticeType: fact.type, identity: fact.identity, revision: fact.revision });
  const notice: Notice = {
    key,
    type: fact.type,
    identity: fact.identity,
    revision: fact.revision,
    subjectId,
    customerId: request.customerId ?? null,
    recipient: {
      email: request.recipient.email ?? null,
      phone: addressed.phone,
      timeZone: request.recipient.timeZone,
      locale: request.recipient.locale ?? null,
    },
    channel: addressed.channel,
    category: window ? window.category : (type?.category ?? 'courtesy'),
    anchorAt: request.anchorAt ?? null,
    dueAt: request.dueAt,
    deadlineAt: request.deadlineAt,
    // The producer's, else the one its event type forms from the identity (recon:{exception_id}).
    evidenceRef: request.evidenceRef ?? derivedEvidenceRef(notices.config, fact.type, fact.identity),
    source: request.source,
    batchId: request.batchId ?? null,
    payload: request.payload,
    window: window ? { earliest: window.earliest, region: request.region ?? null, ruleIds: window.ruleIds, ruleSetVersion: window.ruleSetVersion } : null,
    eventId: null,
  };
  return { ok: true, prepared: { key, request, notice } };
}

/** A job the key already has: the same notice answers as a retry (200), a different one as a conflict (409). */
export function answerExisting(job: JobRow, prepared: PreparedSchedule): ScheduleResult {
  return compareWithExisting(job, prepared.request);
}

/** A new job's answer for a key nobody holds yet: a refusal of its times, or null when it may be made. */
export function refuseNewJob(prepared: PreparedSchedule, { now, maxDelayMs }: { now: Date; maxDelayMs: number }): ScheduleResult | null {
  const problems = timingProblems(prepared.request, { now, maxDelayMs });
  if (problems.length === 0) return null;
  return { kind: 'invalid', message: problems.join('; '), fields: problems.map((problem) => problem.split(':')[0] ?? '') };
}

/** The audit row of a job the producer's request made. */
export function scheduleAuditEntry(actor: string, { key, request, notice }: PreparedSchedule, job: JobRow): AuditEntry {
  return {
    actor,
    action: 'reminder.schedule',
    targetType: 'reminder_job',
    targetId: job.id,
    reason: `scheduled by producer ${request.source}`,
    after: {
      noticeKey: key,
      noticeType: notice.type,
      revision: notice.revision,
      dueAt: request.dueAt.toISOString(),
      deadlineAt: request.deadlineAt.toISOString(),
      source: request.source,
      batchId: request.batchId ?? null,
    },
  };
}

/** Schedules one producer notice, in its span (`notice.schedule`). */
export const scheduleNotice = traced('notice.schedule', annotateScheduled, async (params: ScheduleParams): Promise<ScheduleResult> => {
  const { db, publisher, request: raw, actor, now, maxDelayMs } = params;
  const ready = prepareSchedule(raw, params);
  if (!ready.ok) return ready.result;
  const { prepared } = ready;
  const existing = await findJobByNoticeKey(db, { noticeKey: prepared.key });
  if (existing) return answerExisting(existing, prepared);
  const refused = refuseNewJob(prepared, { now, maxDelayMs });
  if (refused) return refused;

  return db.transaction(async (tx) => {
    const { job, created } = await enqueueNotice(tx, prepared.notice, publisher, { now });
    // Lost a race with a concurrent retry of the same notice: answer as a retry.
    if (!created) return answerExisting(job, prepared);
    await insertAuditEntries(tx, { entries: [scheduleAuditEntry(actor, prepared, job)] });
    return { kind: 'created', job };
  });
});

/** What the reminders route answers beside the job: the computed window, when anchorAt was given. */
export function windowOfJob(job: JobRow): { earliest: Date; latest: Date; ruleIds: string[]; ruleSetVersion: string | null } | null {
  if (job.windowEarliest === null) return null;
  return { earliest: job.windowEarliest, latest: job.deadlineAt, ruleIds: job.ruleIds, ruleSetVersion: job.ruleSetVersion };
}
