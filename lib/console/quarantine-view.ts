import 'server-only';
import type { DbOrTx } from '@/db/client';
import type { QuarantinePage, QuarantineRowView } from '@/lib/api/console/quarantine';
import { countQuarantined, listQuarantined, type EvidenceEvent, type ProviderLookupView, type QuarantineFilter } from '@/db/queries/ledger/read';

export const QUARANTINE_PAGE_SIZE = 50;

/**
 * Evidence of acceptance or delivery means the message is out: confirm. A bounce or drop means
 * it never arrived: resend is pointless, suppress — except a Twilio `failed`, which never left
 * Twilio: release. No evidence: past the deadline suppress,
 * otherwise release so the resend (with the same one-time code) can still arrive in time.
 */
export function suggestResolution({
  evidence,
  deadlineInMs,
  providerLookup = null,
}: {
  evidence: EvidenceEvent[];
  deadlineInMs: number | null;
  providerLookup?: ProviderLookupView | null;
}): Pick<QuarantineRowView, 'suggestion' | 'suggestionWhy'> {
  if (evidence.some((event) => event.eventType === 'accepted' || event.eventType === 'delivered')) {
    return { suggestion: 'confirm_sent', suggestionWhy: 'The provider reports this message: it went out.' };
  }
  // Twilio `failed`: the text never left Twilio (queue overflow, account limits), so a resend is no duplicate.
  const twilioFailed = evidence.some((event) => event.provider === 'twilio' && event.rawType === 'failed');
  if (twilioFailed && (deadlineInMs === null || deadlineInMs > 0)) {
    return { suggestion: 'release', suggestionWhy: 'Twilio reports the text failed before it left Twilio: a resend is no duplicate.' };
  }
  if (evidence.some((event) => ['bounce', 'dropped', 'complaint'].includes(event.eventType))) {
    return { suggestion: 'suppress', suggestionWhy: 'The provider bounced or dropped it: sending again will not reach the recipient.' };
  }
  if (deadlineInMs !== null && deadlineInMs <= 0) return { suggestion: 'suppress', suggestionWhy: 'No provider evidence and the deadline has passed.' };
  // The provider reconciler asked until RECONCILE_GIVE_UP and heard nothing: its reason, for the person deciding.
  if (providerLookup?.outcome === 'gave_up' && providerLookup.detail) return { suggestion: 'release', suggestionWhy: providerLookup.detail };
  return { suggestion: 'release', suggestionWhy: 'No provider evidence: it most likely never left; a resend reuses the same code.' };
}

export async function loadQuarantinePage(
  db: DbOrTx,
  {
    query,
    quarantineAfterMs,
    now = new Date(),
  }: { query: QuarantineFilter & { afterClaimedAt?: string; afterKey?: string }; quarantineAfterMs: number; now?: Date },
): Promise<QuarantinePage> {
  const filter: QuarantineFilter = {
    olderThanMinutes: query.olderThanMinutes,
    recipientDomain: query.recipientDomain || undefined,
    noticeType: query.noticeType,
  };
  const after = query.afterClaimedAt && query.afterKey ? { claimedAt: query.afterClaimedAt, noticeKey: query.afterKey } : undefined;
  const [rows, total] = await Promise.all([
    listQuarantined(db, { quarantineAfterMs, filter, after, limit: QUARANTINE_PAGE_SIZE + 1 }),
    countQuarantined(db, { quarantineAfterMs, selection: { filter } }),
  ]);
  const page = rows.slice(0, QUARANTINE_PAGE_SIZE);
  const last = page[page.length - 1];
  return {
    generatedAt: now.toISOString(),
    quarantineAfterMs,
    total,
    rows: page.map((row) => {
      const deadlineInMs = row.deadlineAt ? row.deadlineAt.getTime() - now.getTime() : null;
      return {
        noticeKey: row.noticeKey,
        noticeType: row.noticeType,
        claimedAt: row.claimedAt.toISOString(),
        claimedBy: row.claimedBy,
        ageMs: now.getTime() - row.claimedAt.getTime(),
        recipientDomain: row.recipientDomain,
        subjectId: row.subjectId,
        dueAt: row.dueAt?.toISOString() ?? null,
        deadlineAt: row.deadlineAt?.toISOString() ?? null,
        deadlineInMs,
        providerMessageId: row.providerMessageId,
        evidence: row.evidence,
        providerLookup: row.providerLookup,
        ...suggestResolution({ evidence: row.evidence, deadlineInMs, providerLookup: row.providerLookup }),
      };
    }),
    next: rows.length > QUARANTINE_PAGE_SIZE && last ? { afterClaimedAt: last.cursorAt, afterKey: last.noticeKey } : null,
  };
}
