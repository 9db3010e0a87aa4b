import { createHash } from 'node:crypto';
import type { Db, Tx } from '@/db/client';
import { insertAuditEntries, type AuditEntry } from '@/db/queries/audit';
import {
  findEvent,
  insertEventUnlessExists,
  insertUnplanned,
  jobsOfEvent,
  latestRevision,
  lockEventIdentity,
  lockJobsOfOlderRevisions,
  resolveOpenGapsOfOlderRevisions,
  unplannedOfEvent,
  type BusinessEventRow,
  type NewUnplanned,
} from '@/db/queries/business-events';
import { cancelPendingJob } from '@/db/queries/scheduling';
import type { JobRow } from '@/db/schema/jobs';
import type { EventRequest } from '@/lib/api/producer';
import type { Channel } from '@/db/schema/states';
import { normalisePhone } from '@/lib/sms/phone';
import { chooseChannel } from '@/lib/windows/channel';
import { stableJson } from './schedule-notice';
import { cancelAuditEntry } from './cancel-notice';
import { enqueueNotice, type WakeupPublisher } from './enqueue-notice';
import type { ProducerSettings } from './producer-settings';
import { derivedEvidenceRef, evidenceRefProblem, fillEvidenceRef } from '@/lib/windows/evidence-ref';
import { parseEventIdentity } from '@/lib/windows/identity';
import { noticeKeyFor } from '@/lib/windows/keys';
import type { NoticeConfig } from '@/lib/windows/load-config';
import { planEvent, type PlannedNotice } from '@/lib/windows/plan';
import { noticeAttributes } from '@/lib/jobs/notice-spans';
import { traced, withSpan, type Span } from '@/lib/telemetry/tracing';
import { recordComplianceGapsOpened } from '@/lib/webhooks/outbox';
import { fieldOf, noticePayloadProblems } from '@/lib/templates/payload';

/**
 * A business event in (`POST /api/v1/events`), the notices it calls for out. In one transaction:
 * the event row, the plan (lib/windows planEvent), every planned notice scheduled through the
 * ledger's one way to make a job (enqueueNotice, as scheduleNotice does), every notice that could not be planned recorded (a required one is a
 * compliance gap), and — for a new revision — the unsent notices of older revisions cancelled.
 * The same post again answers what it answered the first time; a refused post writes nothing.
 */

export type EventAnswer = {
  eventId: string;
  type: string;
  revision: number;
  ruleSetVersion: string;
  planned: {
    noticeType: string;
    category: 'required' | 'courtesy';
    noticeKey: string;
    jobId: string;
    dueAt: Date;
    window: { earliest: Date; latest: Date };
    ruleIds: string[];
  }[];
  unplanned: { noticeType: string; category: 'required' | 'courtesy'; reason: string; ruleIds: string[] }[];
};

export type ReceiveEventResult =
  | { kind: 'created'; answer: EventAnswer }
  | { kind: 'existing'; answer: EventAnswer }
  | { kind: 'invalid'; message: string; fields: string[] }
  /** The payload lacks a variable a planned notice's template declares, or has one of the wrong type: 422. */
  | { kind: 'invalid_payload'; message: string; fields: string[] }
  | { kind: 'unprocessable'; code: 'invalid_phone'; message: string; fields: string[] }
  /** `notices`: what the received revision already scheduled, with each job's state (a nightly run posted twice: already scheduled). */
  | { kind: 'conflict'; code: 'event_conflict' | 'stale_revision'; message: string; eventId: string; revision: number; notices: ScheduledNotice[] };

export type ScheduledNotice = { noticeType: string; jobId: string; noticeKey: string; state: JobRow['state'] };

/** In configuration order, as the plan answers them. */
async function scheduledNotices(tx: Tx, eventId: string, config: NoticeConfig): Promise<ScheduledNotice[]> {
  const order = Object.keys(config.noticeTypes);
  const rank = (name: string) => (order.indexOf(name) === -1 ? order.length : order.indexOf(name));
  const jobs = (await jobsOfEvent(tx, { eventId })).sort((a, b) => rank(a.noticeType) - rank(b.noticeType));
  return jobs.map((job) => ({ noticeType: job.noticeType, jobId: job.id, noticeKey: job.noticeKey, state: job.state }));
}

export type ReceiveEventParams = ProducerSettings & { db: Db; request: EventRequest; actor: string };

/** The body as it is compared: everything but the provenance (`source`), keys sorted. */
export function eventBodySha256(request: EventRequest, identity: Record<string, string>): string {
  const canonical = stableJson({
    type: request.type,
    identity,
    revision: request.revision,
    anchorAt: request.anchorAt.toISOString(),
    recipient: request.recipient,
    contract: request.contract,
    payload: request.payload,
    // Only when given, so the bodies of events posted before the field existed compare as they did.
    ...(request.evidenceRef === undefined ? {} : { evidenceRef: request.evidenceRef }),
  });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** What `event.receive` records: the outcome and, for an event taken, its id, type and how many notices it planned. */
function annotateEventReceived(span: Span, result: ReceiveEventResult): void {
  span.setAttribute('event.receive.result', result.kind);
  if (result.kind === 'created' || result.kind === 'existing') {
    span.setAttributes({
      'event.id': result.answer.eventId,
      'event.type': result.answer.type,
      'event.planned': result.answer.planned.length,
      'event.unplanned': result.answer.unplanned.length,
    });
  }
}

/** What a planned notice's `notice.schedule` span records: its job, and whether this event created it. */
function annotatePlannedJob<R extends { job: JobRow; created: boolean }>(span: Span, result: R): R {
  span.setAttributes({ ...noticeAttributes(result.job), 'notice.schedule.result': result.created ? 'created' : 'existing' });
  return result;
}

/** An event that passed every check that needs no row: its request (phone in E.164), identity and body digest. */
export type CheckedEvent = { params: ReceiveEventParams; identity: Record<string, string>; bodySha256: string };

/** Everything receiving decides before it reads a row; the single post and the batch (receive-events.ts) both start here. */
export function checkEvent(input: ReceiveEventParams): { ok: true; checked: CheckedEvent } | { ok: false; result: ReceiveEventResult } {
  // The phone is normalised first, so the body compared on a repeat is the E.164 one.
  let phone: string | undefined;
  if (input.request.recipient.phone !== undefined) {
    const normalised = normalisePhone(input.request.recipient.phone, input.request.recipient.region);
    if (!normalised.ok)
      return {
        ok: false,
        result: { kind: 'unprocessable', code: 'invalid_phone', message: `recipient.phone: ${normalised.problems.join('; ')}`, fields: ['recipient.phone'] },
      };
    phone = normalised.value.e164;
  }
  const params: ReceiveEventParams = phone ? { ...input, request: { ...input.request, recipient: { ...input.request.recipient, phone } } } : input;
  const { request, notices } = params;
  const parsed = parseEventIdentity(notices.config, request.type, request.identity);
  if (!parsed.ok)
    return {
      ok: false,
      result: { kind: 'invalid', message: parsed.problems.join('; '), fields: parsed.problems.map((problem) => problem.split(':')[0] ?? '') },
    };
  const identity = parsed.identity;
  const evidence = evidenceRefProblem(request.evidenceRef ?? fillEvidenceRefOf(notices.config, request.type, identity));
  if (evidence) return { ok: false, result: { kind: 'invalid', message: evidence, fields: ['evidenceRef'] } };
  const payloadIssues = eventPayloadProblems(params);
  if (payloadIssues.length > 0)
    return { ok: false, result: { kind: 'invalid_payload', message: payloadIssues.join('; '), fields: payloadIssues.map(fieldOf) } };
  return { ok: true, checked: { params, identity, bodySha256: eventBodySha256(request, identity) } };
}

/** Receives one business event, in its span (`event.receive`), each planned notice in a `notice.schedule` child. */
export const receiveEvent = traced('event.receive', annotateEventReceived, async (input: ReceiveEventParams): Promise<ReceiveEventResult> => {
  const ready = checkEvent(input);
  if (!ready.ok) return ready.result;
  return input.db.transaction((tx) => receiveCheckedEvent(tx, ready.checked));
});

/**
 * The event's rows in `tx`: under its identity's lock, a repeat answers as the first post did, an
 * older revision is refused, a new one is stored, planned and scheduled. A batch runs several in
 * one transaction, one after the other, as separate posts would.
 */
export async function receiveCheckedEvent(tx: Tx, { params, identity, bodySha256 }: CheckedEvent): Promise<ReceiveEventResult> {
  const { request, notices } = params;
  await lockEventIdentity(tx, { type: request.type, identity });
  const seen = await findEvent(tx, { type: request.type, identity, revision: request.revision });
  if (seen) return answerSeen(tx, seen, bodySha256, notices.config);
  const latest = await latestRevision(tx, { type: request.type, identity });
  if (latest && latest.revision > request.revision) {
    return {
      kind: 'conflict',
      code: 'stale_revision',
      eventId: latest.id,
      revision: latest.revision,
      notices: await scheduledNotices(tx, latest.id, notices.config),
      message: `revision ${request.revision} is older than revision ${latest.revision} already received for this ${request.type}; it changes nothing`,
    };
  }
  const { event, created } = await insertEventUnlessExists(tx, {
    type: request.type,
    identity,
    revision: request.revision,
    bodySha256,
    anchorAt: request.anchorAt,
    region: request.recipient.region,
    timeZone: request.recipient.timeZone,
    recipient: Object.fromEntries(
      Object.entries({ email: request.recipient.email, phone: request.recipient.phone, locale: request.recipient.locale }).filter(([, v]) => v !== undefined),
    ) as Record<string, string>,
    contract: request.contract,
    payload: request.payload,
    ruleSetVersion: notices.ruleSet.version,
    source: request.source,
  });
  // The identity lock makes this unreachable, but a constraint conflict still answers as a repeat.
  if (!created) return answerSeen(tx, event, bodySha256, notices.config);
  await planAndSchedule(tx, params, event, identity);
  return { kind: 'created', answer: await answerOf(tx, event, notices.config) };
}

function fillEvidenceRefOf(config: NoticeConfig, eventType: string, identity: Record<string, string>): string | null {
  const template = Object.hasOwn(config.eventTypes, eventType) ? config.eventTypes[eventType]?.evidenceRef : undefined;
  return template ? fillEvidenceRef(template, identity) : null;
}

/**
 * Every notice type the event calls for reads the same payload: it must satisfy each enabled
 * type's template (the union of their declarations), checked before anything is written.
 */
function eventPayloadProblems({ request, notices }: ReceiveEventParams): string[] {
  const types = Object.values(notices.config.noticeTypes).filter((type) => type.enabled && type.event === request.type);
  const problems = types.flatMap((type) => noticePayloadProblems(notices.config, type.name, request.payload, { hasAnchor: true }));
  return [...new Set(problems)];
}

async function answerSeen(tx: Tx, seen: BusinessEventRow, bodySha256: string, config: NoticeConfig): Promise<ReceiveEventResult> {
  if (seen.bodySha256 === bodySha256) return { kind: 'existing', answer: await answerOf(tx, seen, config) };
  return {
    kind: 'conflict',
    code: 'event_conflict',
    eventId: seen.id,
    revision: seen.revision,
    notices: await scheduledNotices(tx, seen.id, config),
    message: `revision ${seen.revision} of this ${seen.type} was already received with a different body; its notices are scheduled (see notices); a corrected event needs a higher revision`,
  };
}

async function planAndSchedule(tx: Tx, params: ReceiveEventParams, event: BusinessEventRow, identity: Record<string, string>): Promise<void> {
  const { publisher, request, actor, now, secret, maxDelayMs, notices } = params;
  const { config, ruleSet } = notices;
  const plan = planEvent({
    config,
    ruleSet,
    event: {
      type: request.type,
      anchorAt: request.anchorAt,
      recipient: { region: request.recipient.region, timeZone: request.recipient.timeZone },
      contract: request.contract,
    },
    now,
  });
  const audits: AuditEntry[] = [];
  const supersededBy = `superseded by revision ${request.revision} of ${request.type} (event ${event.id})`;

  // Older revisions: unsent notices are cancelled (audited as a cancel is), sent ones stay.
  const older = await lockJobsOfOlderRevisions(tx, { type: request.type, identity, revision: request.revision });
  for (const job of older.filter((candidate) => candidate.state === 'pending')) {
    const cancelled = await cancelPendingJob(tx, { id: job.id, now });
    if (!cancelled) continue;
    audits.push(cancelAuditEntry({ actor, reason: supersededBy, before: job, after: cancelled }));
  }
  await resolveOpenGapsOfOlderRevisions(tx, { type: request.type, identity, revision: request.revision, at: now, by: actor, resolution: supersededBy });

  const base = { eventId: event.id, ruleSetVersion: ruleSet.version, region: request.recipient.region };
  const unplanned: NewUnplanned[] = plan.unplanned.map((notice) => ({
    ...base,
    noticeType: notice.noticeType,
    category: notice.category,
    reason: notice.reason,
    detail: notice.detail,
    ruleIds: notice.ruleIds,
  }));

  for (const notice of plan.planned) {
    const type = config.noticeTypes[notice.noticeType];
    if (!type) continue;
    const earlier = older.filter((job) => job.noticeType === notice.noticeType);
    // Claimed counts as sent: a worker holds it and the message may already be out.
    const earlierSent = earlier.some((job) => job.state === 'sent' || job.state === 'claimed');
    if (earlier.length > 0 && (type.correction === 'never' || (type.correction === 'if_not_sent' && earlierSent))) {
      // Not a gap: the type's declared policy says no corrected notice. Recorded, resolved at once.
      unplanned.push({
        ...base,
        noticeType: notice.noticeType,
        category: notice.category,
        reason: type.correction === 'never' ? 'correction_policy_never' : 'earlier_revision_sent',
        detail: `correction policy ${type.correction}: ${earlierSent ? 'an earlier revision was sent' : 'an earlier revision existed'}`,
        ruleIds: notice.ruleIds,
        resolvedAt: now,
        resolvedBy: 'correction-policy',
        resolution: `the type's correction policy is ${type.correction}`,
      });
      continue;
    }
    if (notice.dueAt.getTime() > now.getTime() + maxDelayMs) {
      unplanned.push({
        ...base,
        noticeType: notice.noticeType,
        category: notice.category,
        reason: 'beyond_max_delay',
        detail: `due ${notice.dueAt.toISOString()} is more than MAX_DELAY (${Math.round(maxDelayMs / 86_400_000)} days) ahead`,
        ruleIds: notice.ruleIds,
      });
      continue;
    }
    const channel = chooseChannel(type, { email: request.recipient.email ?? null, phone: request.recipient.phone ?? null });
    if (!channel) {
      unplanned.push({
        ...base,
        noticeType: notice.noticeType,
        category: notice.category,
        reason: 'no_address_for_channel',
        detail: `${type.name} goes by ${type.channels.join(' or ')} and the recipient has no address there`,
        ruleIds: notice.ruleIds,
      });
      continue;
    }
    const job = await withSpan('notice.schedule', {}, async (span) =>
      annotatePlannedJob(
        span,
        await scheduleOne(tx, { publisher, notice, type: type.name, identity, fields: type.identity, request, event, now, secret, config, channel }),
      ),
    );
    if (job.created) {
      audits.push({
        actor,
        action: 'reminder.schedule',
        targetType: 'reminder_job',
        targetId: job.job.id,
        reason: `planned from ${request.type} revision ${request.revision} (event ${event.id})`,
        after: {
          noticeKey: job.job.noticeKey,
          noticeType: notice.noticeType,
          revision: request.revision,
          dueAt: notice.dueAt.toISOString(),
          windowEarliest: notice.window.earliest.toISOString(),
          deadlineAt: notice.window.latest.toISOString(),
          ruleIds: notice.ruleIds,
          ruleSetVersion: ruleSet.version,
          source: request.source,
        },
      });
    } else {
      // The key already had a job (scheduled through POST /api/v1/reminders): that job is the notice.
      unplanned.push({
        ...base,
        noticeType: notice.noticeType,
        category: notice.category,
        reason: 'already_scheduled',
        detail: `job ${job.job.id} already holds this notice key`,
        ruleIds: notice.ruleIds,
        resolvedAt: now,
        resolvedBy: 'ledger',
        resolution: `scheduled as job ${job.job.id}`,
      });
    }
  }
  const gaps = await insertUnplanned(tx, unplanned);
  await recordComplianceGapsOpened(tx, { event: { id: event.id, type: request.type, identity, revision: request.revision }, gaps });
  await insertAuditEntries(tx, { entries: audits });
}

async function scheduleOne(
  tx: Tx,
  {
    publisher,
    notice,
    type,
    identity,
    fields,
    request,
    event,
    now,
    secret,
    config,
    channel,
  }: {
    channel: Channel;
    publisher: WakeupPublisher;
    notice: PlannedNotice;
    type: string;
    identity: Record<string, string>;
    fields: string[];
    request: EventRequest;
    event: BusinessEventRow;
    now: Date;
    secret: string;
    config: NoticeConfig;
  },
): Promise<{ job: JobRow; created: boolean }> {
  const noticeIdentity = Object.fromEntries(fields.map((field) => [field, identity[field] ?? '']));
  const subjectField = config.eventTypes[request.type]?.subjectField ?? '';
  const { job, created } = await enqueueNotice(
    tx,
    {
      key: noticeKeyFor(secret, config, { noticeType: type, identity: noticeIdentity, revision: request.revision }),
      type,
      identity: noticeIdentity,
      revision: request.revision,
      subjectId: identity[subjectField] ?? '',
      customerId: request.customerId ?? customerOf(config, request.type, identity),
      recipient: {
        email: request.recipient.email ?? null,
        phone: request.recipient.phone ?? null,
        timeZone: request.recipient.timeZone,
        locale: request.recipient.locale,
      },
      channel,
      category: notice.category,
      anchorAt: request.anchorAt,
      dueAt: notice.dueAt,
      deadlineAt: notice.window.latest,
      evidenceRef: request.evidenceRef ?? derivedEvidenceRef(config, type, noticeIdentity),
      source: request.source,
      batchId: null,
      payload: request.payload,
      window: { earliest: notice.window.earliest, region: request.recipient.region, ruleIds: notice.ruleIds, ruleSetVersion: notice.ruleSetVersion },
      eventId: event.id,
    },
    publisher,
    { now },
  );
  return { job, created };
}

/** Read back from the rows, so a repeat of the post answers exactly what the first one did. */
async function answerOf(tx: Tx, event: BusinessEventRow, config: NoticeConfig): Promise<EventAnswer> {
  const order = Object.keys(config.noticeTypes);
  const rank = (name: string) => (order.indexOf(name) === -1 ? order.length : order.indexOf(name));
  const jobs = (await jobsOfEvent(tx, { eventId: event.id })).sort((a, b) => rank(a.noticeType) - rank(b.noticeType));
  const unplanned = await unplannedOfEvent(tx, { eventId: event.id });
  return {
    eventId: event.id,
    type: event.type,
    revision: event.revision,
    ruleSetVersion: event.ruleSetVersion,
    planned: jobs.map((job) => ({
      noticeType: job.noticeType,
      category: job.category,
      noticeKey: job.noticeKey,
      jobId: job.id,
      dueAt: job.dueAt,
      window: { earliest: job.windowEarliest ?? job.dueAt, latest: job.deadlineAt },
      ruleIds: job.ruleIds,
    })),
    unplanned: unplanned.map((row) => ({ noticeType: row.noticeType, category: row.category, reason: row.reason, ruleIds: row.ruleIds })),
  };
}

/** The customer id an event's notices carry: its type's declared identity field (eventTypes.<type>.customerField), else none. */
function customerOf(config: NoticeConfig, eventType: string, identity: Record<string, string>): string | null {
  const field = config.eventTypes[eventType]?.customerField;
  return field ? (identity[field] ?? null) : null;
}
