import 'server-only';
import { listNoticeEvidenceSummary } from '@/db/queries/evidence-record';
import type { DbOrTx } from '@/db/client';
import { normalisePhone } from '@/lib/sms/phone';
import { listAuditForTargets } from '@/db/queries/audit';
import { findCancellationRequest } from '@/db/queries/cancellation-requests';
import {
  findEvidence,
  findNoticeJob,
  findNoticeLedgerEntry,
  findNotices,
  findRecipientSuppression,
  listNoticeAttempts,
  listNoticeProviderEvents,
  type LookupSearch,
  type NoticeMatch,
} from '@/db/queries/lookup';
import { listPreferenceChanges } from '@/db/queries/preferences';
import { canonicalNotice, correlationFromMessageId, correlationOf, messageIdFor, noticeKey } from '@/lib/ledger/notice-key';
import { noticeTypeLabel } from '@/lib/windows/active';
import { identityFieldsOf, parseNoticeFact } from '@/lib/windows/notice-fact';
import type { KeyDerivation, LookupResult, NoticeView } from '@/lib/api/console/lookup';
import { ok, refuse, type Result } from '@/lib/http/refusal';
import { describeWindow } from './send-window';
import { buildTimeline } from './timeline';
import { explainSuppression } from './words';

export type ClassifiedQuery = { search: LookupSearch[]; describe: string } | { error: string };

/**
 * What support typed, read generously: a Message-ID becomes its correlation (a key prefix),
 * an address is an email, hex of 8+ characters is a key prefix (and also tried as an id),
 * a +number is the phone a text went to, anything else is a customer, account, subscription or
 * provider message id.
 */
export function classifyQuery(raw: string): ClassifiedQuery {
  const text = raw.trim();
  if (text.length === 0) return { error: 'Type an email, customer or subscription id, notice key or Message-ID.' };
  if (text.length > 320) return { error: 'That is too long to be an id, email or Message-ID.' };
  // The /lookup page passes ?q= straight here; PostgreSQL text cannot hold NUL, so nothing stored matches it.
  if (text.includes('\0')) return { error: 'That contains a NUL character, which no id, email or Message-ID has.' };
  const correlation = correlationFromMessageId(text.toLowerCase());
  if (correlation) return { search: [{ kind: 'key_prefix', prefix: correlation }], describe: `Message-ID → correlation ${correlation}` };
  if (/^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/.test(text)) return { search: [{ kind: 'email', email: text.toLowerCase() }], describe: `email ${text.toLowerCase()}` };
  // A number in international form (the SMS a customer got): the E.164 the job stores.
  if (/^\+[\d\s().-]{7,24}$/.test(text)) {
    const phone = normalisePhone(text);
    if (phone.ok) return { search: [{ kind: 'phone', phone: phone.value.e164 }], describe: `phone number ${phone.value.e164}` };
  }
  if (/^[0-9a-f]{8,64}$/i.test(text)) {
    return {
      search: [
        { kind: 'key_prefix', prefix: text.toLowerCase() },
        { kind: 'id', id: text },
      ],
      describe: `notice key starting ${text.toLowerCase()}`,
    };
  }
  return { search: [{ kind: 'id', id: text }], describe: `customer, account, subscription or provider id ${text}` };
}

const MAX_MATCHES = 50;
const MAX_DETAILED = 10;

export async function lookupNotices(
  db: DbOrTx,
  { query, secret, messageIdDomain }: { query: string; secret: string; messageIdDomain: string },
): Promise<Result<LookupResult>> {
  const classified = classifyQuery(query);
  if ('error' in classified) return refuse('invalid_input', classified.error);
  const found = new Map<string, NoticeMatch>();
  for (const search of classified.search) {
    for (const match of await findNotices(db, { search, limit: MAX_MATCHES + 1 })) found.set(match.noticeKey, match);
  }
  const matches = [...found.values()];
  const notices = await Promise.all(matches.slice(0, MAX_DETAILED).map((match) => loadNoticeView(db, { noticeKey: match.noticeKey, secret, messageIdDomain })));
  return ok({
    describe: classified.describe,
    matches: matches.slice(0, MAX_MATCHES).map((match) => ({ ...match, dueAt: match.dueAt?.toISOString() ?? null })),
    notices: notices.filter((view): view is NoticeView => view !== null),
    truncated: matches.length > MAX_MATCHES,
  });
}

function derive({
  type,
  identity,
  revision,
  key,
  secret,
}: {
  type: string;
  identity: Record<string, string>;
  revision: number;
  key: string;
  secret: string;
}): KeyDerivation {
  // jsonb stores keys in its own order; show them in the order the canonical encoding uses.
  const order = identityFieldsOf(type);
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  const fields = Object.entries(identity)
    .map(([name, value]) => ({ name, value: String(value) }))
    .sort((a, b) => rank(a.name) - rank(b.name));
  try {
    const fact = parseNoticeFact({ type, identity, revision });
    return { noticeType: type, fields, revision, canonical: canonicalNotice(fact), verified: noticeKey(secret, fact) === key };
  } catch {
    return { noticeType: type, fields, revision, canonical: null, verified: null };
  }
}

export async function loadNoticeView(
  db: DbOrTx,
  { noticeKey: key, secret, messageIdDomain }: { noticeKey: string; secret: string; messageIdDomain: string },
): Promise<NoticeView | null> {
  const [job, ledger, attempts] = await Promise.all([
    findNoticeJob(db, { noticeKey: key }),
    findNoticeLedgerEntry(db, { noticeKey: key }),
    listNoticeAttempts(db, { noticeKey: key }),
  ]);
  if (!job && !ledger) return null;
  const [events, suppression, evidence, audit, preferenceChanges, cancellation, evidenceRecord] = await Promise.all([
    listNoticeProviderEvents(db, { noticeKey: key, providerMessageId: ledger?.providerMessageId ?? null }),
    job?.recipientEmail ? findRecipientSuppression(db, { email: job.recipientEmail }) : Promise.resolve(null),
    job?.evidenceRef ? findEvidence(db, { ref: job.evidenceRef }) : Promise.resolve(null),
    listAuditForTargets(db, { targetIds: [key, ...(job ? [job.id] : [])] }),
    job?.recipientEmail ? listPreferenceChanges(db, { recipient: job.recipientEmail, channel: 'email', limit: 20 }) : Promise.resolve([]),
    findCancellationRequest(db, { noticeKey: key }),
    listNoticeEvidenceSummary(db, { noticeKey: key }),
  ]);
  const type = job?.noticeType ?? ledger?.noticeType ?? 'unknown';
  const duplicatesSuppressed = attempts.filter((attempt) => attempt.outcome === 'suppressed_duplicate').length;
  return {
    noticeKey: key,
    correlation: correlationOf(key),
    messageId: messageIdFor(key, messageIdDomain),
    noticeType: type,
    label: noticeTypeLabel(type),
    subjectId: job?.subjectId ?? null,
    customerId: job?.customerId ?? null,
    recipientEmail: job?.recipientEmail ?? null,
    channel: job?.channel ?? null,
    recipientPhone: job?.recipientPhone ?? null,
    dueAt: job?.dueAt.toISOString() ?? null,
    deadlineAt: job?.deadlineAt.toISOString() ?? null,
    window: job ? describeWindow({ job, attempts, ledger }) : null,
    jobState: job?.state ?? null,
    ledgerState: ledger?.state ?? null,
    attempts: job?.attempts ?? 0,
    source: job?.source ?? null,
    batchId: job?.batchId ?? null,
    sentAt: ledger?.sentAt?.toISOString() ?? null,
    providerMessageId: ledger?.providerMessageId ?? null,
    verdict: verdictOf({
      jobState: job?.state ?? null,
      ledgerState: ledger?.state ?? null,
      suppressionReason: job?.suppressionReason ?? null,
      sentAt: ledger?.sentAt ?? null,
      duplicatesSuppressed,
      revision: job?.revision ?? ledger?.revision ?? 0,
      providerStatus: ledger?.providerStatus ?? null,
    }),
    duplicatesSuppressed,
    derivation: derive({
      type,
      identity: job?.identity ?? ledger?.identity ?? {},
      revision: job?.revision ?? ledger?.revision ?? 0,
      key,
      secret,
    }),
    timeline: buildTimeline({ job, ledger, attempts, events, suppression, evidence, audit, preferenceChanges, cancellation, evidenceRecord }),
  };
}

/** One sentence answering "did it go out, and why (not)?" from the ledger, the only authority on that. */
export function verdictOf({
  jobState,
  ledgerState,
  suppressionReason,
  sentAt,
  duplicatesSuppressed,
  revision = 0,
  providerStatus = null,
}: {
  jobState: string | null;
  ledgerState: string | null;
  suppressionReason: string | null;
  sentAt: Date | null;
  duplicatesSuppressed: number;
  revision?: number;
  /** A provisional hand-over's standing (SendGrid's 202): `dropped` means it never went out. */
  providerStatus?: 'accepted' | 'processed' | 'dropped' | null;
}): string {
  const duplicates =
    duplicatesSuppressed > 0
      ? ` ${duplicatesSuppressed} duplicate attempt${duplicatesSuppressed === 1 ? ' was' : 's were'} suppressed, so it went out once.`
      : '';
  const corrected =
    revision > 0
      ? ` This is revision ${revision}: the producer corrected the notice (plan, amount or date changed), and a corrected notice is a new email by design.`
      : '';
  const at = sentAt ? ` at ${sentAt.toISOString().replace('T', ' ').slice(0, 16)} UTC` : '';
  if (ledgerState === 'sent' && providerStatus === 'dropped')
    return `Handed over once${at}, but the provider dropped it: it was not delivered and will not be retried (the producer was told: notice.failed).${corrected}`;
  if (ledgerState === 'sent' && providerStatus === 'accepted')
    return `Handed over once${at}; the provider has not yet said it processed the message.${duplicates}${corrected}`;
  if (ledgerState === 'sent') return `Sent once${at}.${duplicates}${corrected}`;
  if (ledgerState === 'claimed')
    return 'Being sent, or stuck: a worker claimed it and has not recorded the result. If it is older than the quarantine threshold, on-call resolves it in Quarantine.';
  if (jobState === 'suppressed' || ledgerState === 'suppressed') return `Not sent: ${explainSuppression(suppressionReason) ?? 'it was suppressed'}.`;
  if (ledgerState === 'released') return 'Released for resend after a failed or unresolved attempt; it will be sent again with the same one-time code.';
  if (jobState === 'pending') return 'Not sent yet: waiting for its due time or a retry.';
  if (jobState === 'failed') return 'Not sent: the provider refused it permanently or it ran out of retries.';
  if (jobState === 'cancelled') return 'Not sent: the producer cancelled it.';
  return 'No decision recorded yet.';
}
