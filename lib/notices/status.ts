import type { DbOrTx } from '@/db/client';
import { findCancellationRequest } from '@/db/queries/cancellation-requests';
import {
  findNoticeJob,
  findNoticeLedgerEntry,
  listNoticeAttempts,
  listNoticeProviderEvents,
  type NoticeAttempt,
  type NoticeJob,
  type NoticeLedgerEntry,
} from '@/db/queries/lookup';
import { findNoticeRef, listNoticeRefs, type NoticeFilter } from '@/db/queries/notice-status';
import { listPreferenceChanges } from '@/db/queries/preferences';
import type { NoticeStatusView, noticeOutcomes } from '@/lib/api/notices';

/**
 * A notice as its producer sees it: read from the same rows support's lookup reads
 * (db/queries/lookup.ts), so the two agree, minus what the producer did not send us or is ours
 * alone: the one-time code, attempt details and worker ids, queue and batch ids, audit rows.
 */

const MISSED_DETAILS = new Set(['window_missed', 'deadline_passed', 'quiet_hours_cover_window', 'quiet_hours_past_deadline']);

function outcomeOf(job: NoticeJob, ledger: NoticeLedgerEntry | null): (typeof noticeOutcomes)[number] {
  // A provisional hand-over (SendGrid's 202) until the provider's own event for the message settles it.
  if (ledger?.state === 'sent' && ledger.providerStatus === 'accepted') return 'accepted';
  if (ledger?.state === 'sent' && ledger.providerStatus === 'dropped') return 'dropped';
  if (ledger?.state === 'sent') return 'sent';
  // Claimed and not recorded: the send may or may not have left. Only the provider's evidence or an operator settles it.
  if (ledger?.state === 'claimed') return 'outcome_unknown';
  if (job.state === 'suppressed' && (job.suppressionReason === 'window_missed' || job.suppressionReason === 'deadline_passed')) return 'window_missed';
  if (job.state === 'suppressed') return 'suppressed';
  if (job.state === 'sent') return 'sent';
  if (job.state === 'claimed') return 'outcome_unknown';
  return job.state;
}

function resolutionText(resolution: string): string {
  if (resolution === 'provider_evidence') return 'resolved by provider evidence';
  if (resolution.startsWith('operator:')) return `resolved by an operator: ${resolution.slice('operator:'.length)}`;
  return resolution;
}

function missedOf(attempts: NoticeAttempt[], job: NoticeJob): { at: string; rule: string } | null {
  const attempt = attempts.find((entry) => entry.outcome === 'suppressed_policy' && entry.detail !== null && MISSED_DETAILS.has(entry.detail));
  if (attempt?.detail) return { at: attempt.startedAt.toISOString(), rule: attempt.detail };
  if (job.state === 'suppressed' && job.suppressionReason === 'window_missed') return { at: job.updatedAt.toISOString(), rule: 'window_missed' };
  return null;
}

export async function loadNoticeStatus(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<NoticeStatusView | null> {
  const [job, ledger, attempts] = await Promise.all([
    findNoticeJob(db, { noticeKey }),
    findNoticeLedgerEntry(db, { noticeKey }),
    listNoticeAttempts(db, { noticeKey }),
  ]);
  if (!job) return null;
  const [events, cancellation, preferences] = await Promise.all([
    listNoticeProviderEvents(db, { noticeKey, providerMessageId: ledger?.providerMessageId ?? null }),
    findCancellationRequest(db, { noticeKey }),
    job.recipientEmail ? listPreferenceChanges(db, { recipient: job.recipientEmail, channel: 'email', limit: 20 }) : Promise.resolve([]),
  ]);
  const providerMessageIds = [
    ...new Set([ledger?.providerMessageId, ...events.map((event) => event.providerMessageId)].filter((id): id is string => typeof id === 'string')),
  ];
  return {
    id: job.id,
    noticeKey: job.noticeKey,
    type: job.noticeType,
    identity: job.identity,
    revision: job.revision,
    subjectId: job.subjectId,
    customerId: job.customerId,
    recipient: { channel: job.channel, email: job.recipientEmail, phone: job.recipientPhone },
    state: job.state,
    ledgerState: ledger?.state ?? null,
    outcome: outcomeOf(job, ledger),
    suppressionReason: job.suppressionReason,
    resolution: ledger?.resolution ? { text: resolutionText(ledger.resolution), at: ledger.resolvedAt?.toISOString() ?? null } : null,
    sentAt: ledger?.sentAt?.toISOString() ?? null,
    window: {
      earliest: (job.windowEarliest ?? job.dueAt).toISOString(),
      latest: job.deadlineAt.toISOString(),
      category: job.category,
      region: job.region,
      ruleIds: job.ruleIds,
      ruleSetVersion: job.ruleSetVersion,
      missed: missedOf(attempts, job),
    },
    attempts: attempts.map((attempt) => ({ at: attempt.startedAt.toISOString(), outcome: attempt.outcome, errorClass: attempt.errorClass })),
    providerMessageIds,
    deliveryEvents: events.map((event) => ({
      provider: event.provider,
      type: event.eventType,
      bounceType: event.bounceType,
      occurredAt: event.occurredAt.toISOString(),
    })),
    cancellationRequests: cancellation
      ? [{ source: cancellation.source, codeVerified: cancellation.codeVerified, requestedAt: cancellation.requestedAt.toISOString() }]
      : [],
    // The recipient's changes for the notice's category (an opt-out of courtesy notices does not touch a required one).
    preferenceChanges: preferences
      .filter((change) => change.category === job.category)
      .map((change) => ({ category: change.category, from: change.fromState, to: change.toState, source: change.source, at: change.changedAt.toISOString() })),
    event: job.event ? { id: job.event.id, type: job.event.type, revision: job.event.revision, anchorAt: job.event.anchorAt.toISOString() } : null,
  };
}

/** `{id}` is a job id (uuid) or a notice key (64 hex). */
export async function findNoticeStatus(db: DbOrTx, { id }: { id: string }): Promise<NoticeStatusView | null> {
  const found = await findNoticeRef(db, /^[0-9a-f]{64}$/.test(id) ? { noticeKey: id } : { id });
  return found ? loadNoticeStatus(db, { noticeKey: found.noticeKey }) : null;
}

export function noticeCursor(ref: { id: string }): string {
  return `n1.${ref.id}`;
}

export function afterIdOf(cursor: string | undefined): string | undefined {
  return cursor?.startsWith('n1.') ? cursor.slice(3) : undefined;
}

export async function listNoticeStatuses(db: DbOrTx, filter: NoticeFilter): Promise<{ notices: NoticeStatusView[]; nextCursor: string | null }> {
  const refs = await listNoticeRefs(db, filter);
  const notices = await Promise.all(refs.map((ref) => loadNoticeStatus(db, { noticeKey: ref.noticeKey })));
  const last = refs.at(-1);
  return {
    notices: notices.filter((notice): notice is NoticeStatusView => notice !== null),
    nextCursor: last && refs.length === filter.limit ? noticeCursor(last) : null,
  };
}
