import type { NoticeEvidenceSummary } from '@/db/queries/evidence-record';
import type { AuditRow } from '@/db/schema/audit';
import type { ProviderHandOverStatus } from '@/db/schema/states';
import type { CancellationRequestRow, RecipientPreferenceChangeRow } from '@/db/schema/recipients';
import type { EvidenceEntry, NoticeAttempt, NoticeJob, NoticeLedgerEntry, NoticeProviderEvent, RecipientSuppressionEntry } from '@/db/queries/lookup';
import type { TimelineEntry, TimelineTone } from '@/lib/api/console/lookup';
import { shortVersionId } from '@/lib/templates/versions';
import { formatShortUtc, formatUtc } from './format';
import { explainAttempt, explainSuppression, preferenceChangeText, providerEventText, recipientSuppressionText, twilioEventText } from './words';

const attemptTone: Record<string, TimelineTone> = {
  sent: 'good',
  suppressed_duplicate: 'warn',
  would_suppress: 'warn',
  suppressed_policy: 'warn',
  retryable_failure: 'warn',
  permanent_failure: 'bad',
  unknown: 'bad',
};

const eventTone: Record<string, TimelineTone> = {
  accepted: 'good',
  delivered: 'good',
  bounce: 'bad',
  complaint: 'bad',
  dropped: 'bad',
  soft_bounce: 'warn',
  deferred: 'warn',
  unsubscribe: 'warn',
};

function channelText(job: NoticeJob): string {
  if (job.smsRefusedCode === 'sms_not_configured') return 'email (planned as SMS; Twilio is not configured)';
  if (job.smsRefusedCode) return `SMS, then email (the text was refused, Twilio ${job.smsRefusedCode})`;
  return job.channel === 'sms' ? 'SMS' : 'email';
}

const evidenceKindText: Record<string, string> = {
  'notice.sent': 'the message as sent',
  'notice.outcome': 'the send attempt',
  'provider.event': 'a provider event',
  'recipient.page_view': 'the recipient opened the page',
  'recipient.cancel_request': 'the recipient asked to cancel',
  'recipient.preference': 'the recipient changed a preference',
  'ledger.resolved': 'the claim resolved',
  'replay.approved': 'the replay that woke it, who asked and who approved',
};

/** A provisional hand-over (SendGrid's 202) and what its own event later said (db/schema/states.ts providerHandOverStatuses). */
const providerStatusText: Record<ProviderHandOverStatus, string> = {
  accepted: 'accepted, not yet processed: the provider answers before it looks at the message, and its own event settles it',
  processed: 'processed: the provider took the message on',
  dropped: 'dropped by the provider: it will not deliver this message (its event says why; the producer got notice.failed)',
};

function fact(label: string, value: string | number | null | undefined): { label: string; value: string }[] {
  return value === null || value === undefined || value === '' ? [] : [{ label, value: String(value) }];
}

/**
 * One notice's story in time order, built from the rows each part of the system wrote.
 * Ties keep their causal order (scheduled, attempt, provider, operator) by a stable sort.
 */
export function buildTimeline({
  job,
  ledger,
  attempts,
  events,
  suppression,
  evidence,
  audit,
  preferenceChanges = [],
  cancellation = null,
  evidenceRecord = [],
}: {
  job: NoticeJob | null;
  ledger: NoticeLedgerEntry | null;
  attempts: NoticeAttempt[];
  events: NoticeProviderEvent[];
  suppression: RecipientSuppressionEntry | null;
  evidence: EvidenceEntry | null;
  audit: AuditRow[];
  /** The recipient's preference changes (newest first, bounded): their own opt-outs, in words. */
  preferenceChanges?: RecipientPreferenceChangeRow[];
  /** The customer's own request from the notice's link (lib/recipient/actions.ts). */
  cancellation?: CancellationRequestRow | null;
  /** The notice's evidence record (lib/evidence/): each entry, and when the head that covers it was signed. */
  evidenceRecord?: NoticeEvidenceSummary[];
}): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  for (const recorded of evidenceRecord) {
    entries.push({
      at: recorded.recordedAt.toISOString(),
      kind: 'evidence',
      title: `Evidence recorded: ${evidenceKindText[recorded.kind] ?? recorded.kind}`,
      facts: [...fact('chain entry', recorded.seq), ...fact('signed head', recorded.signedAt ? formatUtc(recorded.signedAt.toISOString()) : 'not signed yet')],
      tone: recorded.signedAt ? 'good' : 'neutral',
    });
  }
  if (job) {
    entries.push({
      at: job.createdAt.toISOString(),
      kind: 'scheduled',
      title: `Scheduled by ${job.source}${job.batchId ? ` (replay batch ${job.batchId})` : ''}`,
      facts: [
        ...fact('channel', channelText(job)),
        ...fact('due', formatUtc(job.dueAt.toISOString())),
        ...fact('window', `${formatUtc((job.windowEarliest ?? job.dueAt).toISOString())} – ${formatUtc(job.deadlineAt.toISOString())}`),
        ...fact('rules', job.ruleIds.length > 0 ? job.ruleIds.join(', ') : null),
        ...fact('rule set', job.ruleSetVersion),
        ...fact('event', job.event ? `${job.event.type} revision ${job.event.revision}` : null),
        ...fact('revision', job.revision),
        ...fact('evidence', job.evidenceRef),
      ],
      tone: 'neutral',
    });
  }
  if (evidence) {
    entries.push({
      at: evidence.openedAt.toISOString(),
      kind: 'evidence',
      title: `Evidence ${evidence.ref} opened (${evidence.kind})`,
      facts: [...fact('summary', evidence.summary)],
      tone: 'neutral',
    });
    if (evidence.resolvedAt) {
      entries.push({
        at: evidence.resolvedAt.toISOString(),
        kind: 'evidence',
        title: `Evidence ${evidence.ref} resolved${evidence.resolvedBy ? ` by ${evidence.resolvedBy}` : ''}`,
        facts: [],
        tone: 'neutral',
      });
    }
  }
  for (const attempt of attempts) {
    entries.push({
      at: attempt.startedAt.toISOString(),
      kind: 'attempt',
      title: explainAttempt(attempt.outcome, attempt.detail),
      facts: [
        ...fact('worker', attempt.workerId),
        ...fact('outcome', attempt.outcome),
        ...fact('error class', attempt.errorClass),
        ...fact('correlation', attempt.correlationId),
        ...fact('queue message', attempt.queueMessageId),
        ...fact('batch', attempt.batchId),
        ...fact('claim→commit', attempt.claimToCommitMs === null ? null : `${attempt.claimToCommitMs} ms`),
        ...(attempt.mode === 'shadow' ? fact('mode', 'shadow') : []),
      ],
      // A refused text that went on by email is a detour, not a lost notice.
      tone: attempt.detail?.startsWith('email_fallback:') ? 'warn' : (attemptTone[attempt.outcome] ?? 'neutral'),
    });
  }
  if (ledger) {
    entries.push({
      at: ledger.claimedAt.toISOString(),
      kind: 'claim',
      title: `Ledger claim ${ledger.source === 'backfill' ? 'backfilled' : 'written'}${ledger.claimedBy ? ` by ${ledger.claimedBy}` : ''}`,
      facts: [
        ...fact('state now', ledger.state),
        ...fact('recipient domain', ledger.recipientDomain),
        ...fact('one-time code', ledger.hasOneTimeCode ? 'stored (kept for resends, never shown)' : null),
      ],
      tone: ledger.state === 'claimed' ? 'warn' : 'neutral',
    });
    if (ledger.sentAt) {
      entries.push({
        at: ledger.sentAt.toISOString(),
        kind: 'ledger',
        title: 'Ledger recorded the notice as sent',
        facts: [
          ...fact('provider id', ledger.providerMessageId),
          ...fact('provider answer', ledger.providerStatus ? providerStatusText[ledger.providerStatus] : null),
          ...fact('resolution', ledger.resolution),
        ],
        tone: ledger.providerStatus === 'dropped' ? 'bad' : ledger.providerStatus === 'accepted' ? 'warn' : 'good',
      });
    }
    // What the customer received: the page re-renders it on demand from the version its send recorded.
    if (ledger.state === 'sent' && ledger.sentAt) {
      entries.push({
        at: ledger.sentAt.toISOString(),
        kind: 'message',
        title: 'What the customer received',
        facts: [
          ...fact(
            'template version',
            ledger.templateVersionId ? shortVersionId(ledger.templateVersionId) : 'unknown (sent before template versions were recorded, or backfilled)',
          ),
        ],
        tone: 'neutral',
      });
    }
  }
  for (const event of events) {
    entries.push({
      at: event.occurredAt.toISOString(),
      kind: 'provider',
      title:
        event.provider === 'twilio'
          ? `${twilioEventText[event.rawType] ?? `Twilio reported ${event.rawType}`} (twilio)`
          : `${providerEventText[event.eventType] ?? event.eventType} (${event.provider})`,
      facts: [
        ...fact('provider id', event.providerMessageId),
        ...fact('correlation', event.correlationId),
        ...fact('bounce type', event.bounceType),
        ...fact('raw type', event.rawType),
      ],
      tone: eventTone[event.eventType] ?? 'neutral',
    });
  }
  if (job?.state === 'suppressed') {
    entries.push({
      at: job.updatedAt.toISOString(),
      kind: 'suppression',
      title: `Not sent: ${explainSuppression(job.suppressionReason) ?? 'suppressed'}`,
      facts: [
        ...fact('reason code', job.suppressionReason),
        ...(job.suppressionReason === 'window_missed' ? fact('window closed', formatUtc(job.deadlineAt.toISOString())) : []),
      ],
      tone: 'warn',
    });
  }
  if (suppression) {
    entries.push({
      at: suppression.createdAt.toISOString(),
      kind: 'suppression',
      title: `Recipient on the suppression list: ${recipientSuppressionText[suppression.reason] ?? suppression.reason}`,
      facts: [...fact('note', suppression.note)],
      tone: 'warn',
    });
  }
  for (const change of preferenceChanges) {
    entries.push({
      at: change.changedAt.toISOString(),
      kind: 'recipient',
      title: `The recipient ${preferenceChangeText({ to: change.toState, source: change.source, category: change.category }).replace(/^O/, 'o')}`,
      facts: [...fact('source', change.source), ...fact('by', change.actor), ...fact('reason', change.reason)],
      tone: change.toState === 'opted_out' ? 'warn' : 'neutral',
    });
  }
  if (cancellation) {
    entries.push({
      at: cancellation.requestedAt.toISOString(),
      kind: 'customer',
      title: `Customer asked to cancel from the notice link, ${formatShortUtc(cancellation.requestedAt)}`,
      facts: [
        ...fact('what happens next', 'recorded for the producer (GET /api/v1/cancellation-requests); the notice itself is unchanged'),
        ...fact('confirmation code', cancellation.codeVerified ? 'typed and matched' : 'not asked for this type'),
      ],
      tone: 'neutral',
    });
  }
  for (const row of audit) {
    entries.push({
      at: row.at.toISOString(),
      kind: 'operator',
      title: `${row.actor}: ${row.action}`,
      facts: [
        ...fact('reason', row.reason),
        ...fact('before', row.before ? summarize(row.before) : null),
        ...fact('after', row.after ? summarize(row.after) : null),
      ],
      tone: 'neutral',
    });
  }
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => a.entry.at.localeCompare(b.entry.at) || a.index - b.index)
    .map(({ entry }) => entry);
}

function summarize(state: Record<string, unknown>): string {
  return Object.entries(state)
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(', ');
}
