import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { insertProviderEvent, linkProviderEvent } from '@/db/queries/events';
import { providerEventEvidence, recordNoticeEvidence } from '@/lib/evidence/record';
import { findLedgerLink, listClaimsWithSendEvidence, type Evidence } from '@/db/queries/ledger/evidence-match';
import { resolveClaims } from '@/db/queries/ledger/resolve';
import { settleProviderStatus } from '@/db/queries/ledger/commit';
import { advanceSmsStatus, isSmsStatus } from '@/db/queries/sms';
import { addRecipientSuppression } from '@/db/queries/suppressions';
import { correlationOf } from '@/lib/ledger/notice-key';
import { orphanEvents, providerDropped } from '@/lib/metrics/registry';
import { correlationAttribute, withSpan } from '@/lib/telemetry/tracing';
import { provesHandOver, storableEvent, suppressionFor, type NormalizedEvent } from './types';
import { recordNoticeEvent, setPreferenceReported } from '@/lib/webhooks/outbox';
import type { WebhookEventType } from '@/lib/webhooks/events';

export type IngestSummary = {
  received: number;
  stored: number;
  duplicates: number;
  linked: number;
  /** Notice keys moved claimed → sent by this batch. */
  confirmed: string[];
  /** Notice keys whose provisional hand-over (SendGrid's 202) this batch settled as dropped. */
  dropped: string[];
  suppressed: string[];
  /** Recipients whose courtesy preference this batch changed (provider unsubscribe / resubscribe events). */
  preferences: string[];
  /**
   * Hand-over events stored with a correlation that names no ledger row: after a failover, the
   * trace of a claim the new primary lacks. Stored like any event; lib/events/post-failover.ts
   * turns them into `sent` rows.
   */
  orphans: number;
};

/**
 * Stores each event once and applies what it proves, each event in its own transaction
 * (a provider retries the whole POST on a 5xx; the event ids make the retry harmless):
 *  - link it to its ledger row (correlation tag / our Message-ID, else provider message id);
 *  - accepted/delivered for a `claimed` row: claimed → sent, at any age of the claim — it
 *    only ever moves a claim to sent, so it is safe before quarantine too;
 *  - a `sent` row whose provider answered provisionally (SendGrid's 202, provider_status
 *    `accepted`): its first hand-over event settles it `processed`; a `dropped` event settles it
 *    `dropped` (never sent: reported as `notice.failed`, counted, and not retried);
 *  - hard bounce / complaint: the recipient joins the suppression list;
 *  - unsubscribe / resubscribe (SendGrid subscription tracking, Postmark SubscriptionChange, SES
 *    Subscription): the recipient's courtesy preference by email, source `provider_event`, actor
 *    the provider's event id. Always the courtesy category, whatever notice the event links to:
 *    a required notice cannot be unsubscribed from, and a recipient who unsubscribes from one
 *    asked for less mail, which is what a courtesy opt-out gives them.
 * Order does not matter: an event that arrives before its row can be linked stays stored and
 * `reconcileQuarantine` applies it later; a duplicate is stored nowhere and changes nothing.
 * Its span, `evidence.ingest`, carries one span event per event received (its normalized type and
 * correlation, the link to the notice's send), the counts, and one span event per claim confirmed;
 * never the recipient, the provider's raw payload or the full notice key.
 */
export function ingestEvents(db: DbOrTx, { events }: { events: NormalizedEvent[] }): Promise<IngestSummary> {
  return withSpan('evidence.ingest', { 'evidence.received': events.length }, async (span) => {
    if (span.isRecording()) {
      for (const event of events) span.addEvent('evidence.event', { 'evidence.type': event.type, ...correlationAttribute(event.correlationId) });
    }
    const summary: IngestSummary = {
      received: events.length,
      stored: 0,
      duplicates: 0,
      linked: 0,
      confirmed: [],
      dropped: [],
      suppressed: [],
      preferences: [],
      orphans: 0,
    };
    for (const event of events.map(storableEvent)) {
      await db.transaction(async (tx) => {
        const link = await findLedgerLink(tx, { correlationId: event.correlationId, providerMessageId: event.providerMessageId });
        const rowId = await insertProviderEvent(tx, {
          event: {
            provider: event.provider,
            eventId: event.eventId,
            eventType: event.type,
            rawType: event.rawType,
            correlationId: event.correlationId,
            providerMessageId: event.providerMessageId,
            noticeKey: link?.noticeKey ?? null,
            recipient: event.recipient,
            bounceType: event.bounceType,
            occurredAt: event.occurredAt,
            details: event.messageId ? { ...event.details, messageId: event.messageId } : event.details,
          },
        });
        if (rowId === null) {
          summary.duplicates += 1;
          return;
        }
        summary.stored += 1;
        if (link) summary.linked += 1;
        else if (event.correlationId && provesHandOver(event.type)) {
          summary.orphans += 1;
          orphanEvents.inc({ provider: event.provider });
        }
        if (link && link.state === 'claimed' && provesHandOver(event.type)) {
          const confirmed = await confirmClaimSentByEvidence(tx, {
            noticeKey: link.noticeKey,
            evidence: {
              rowId,
              provider: event.provider,
              eventId: event.eventId,
              eventType: event.type,
              occurredAt: event.occurredAt,
              providerMessageId: event.providerMessageId,
            },
          });
          if (confirmed) summary.confirmed.push(link.noticeKey);
          if (confirmed)
            await recordNoticeEvent(tx, { type: 'notice.resolved', noticeKey: link.noticeKey, extra: { outcome: 'sent', resolvedBy: 'provider_evidence' } });
        }
        // A provisional hand-over (SendGrid's 202, provider_status `accepted`) settled by the message's own event.
        if (link && link.state === 'sent' && (provesHandOver(event.type) || event.type === 'dropped')) {
          const dropped = event.type === 'dropped';
          const settled = await settleProviderStatus(tx, { noticeKey: link.noticeKey, status: dropped ? 'dropped' : 'processed' });
          if (settled && dropped) {
            summary.dropped.push(link.noticeKey);
            providerDropped.inc({ provider: event.provider });
            await recordNoticeEvent(tx, {
              type: 'notice.failed',
              noticeKey: link.noticeKey,
              extra: { outcome: 'dropped', errorClass: `${event.provider}_dropped`, occurredAt: event.occurredAt.toISOString() },
            });
          }
        }
        if (event.provider === 'twilio') await applyTwilioEvent(tx, event, link?.noticeKey ?? null);
        // The notice's evidence record (lib/evidence/): delivery, bounce, complaint, Twilio status, with the provider's own time.
        if (link) await recordNoticeEvidence(tx, { noticeKey: link.noticeKey, kind: 'provider.event', body: providerEventEvidence(event) });
        const outboundType = link ? outboundEventOf(event) : null;
        if (link && outboundType)
          await recordNoticeEvent(tx, {
            type: outboundType,
            noticeKey: link.noticeKey,
            extra: { outcome: event.type, bounceType: event.bounceType, occurredAt: event.occurredAt.toISOString() },
          });
        const reason = suppressionFor(event);
        if (reason && event.recipient) {
          const added = await addRecipientSuppression(tx, {
            email: event.recipient,
            reason,
            sourceEventId: `${event.provider}:${event.eventId}`,
            note: `${event.provider} ${event.rawType}${event.bounceType ? ` (${event.bounceType})` : ''}`,
          });
          if (added) summary.suppressed.push(event.recipient);
        }
        if ((event.type === 'unsubscribe' || event.type === 'resubscribe') && event.recipient) {
          const written = await setPreferenceReported(tx, {
            recipient: event.recipient,
            category: 'courtesy',
            channel: 'email',
            state: event.type === 'unsubscribe' ? 'opted_out' : 'opted_in',
            source: 'provider_event',
            actor: `${event.provider}:${event.eventId}`,
            reason: `${event.provider} ${event.rawType}`,
          });
          if (written.changed) summary.preferences.push(event.recipient);
        }
      });
    }
    span.setAttributes({
      'evidence.stored': summary.stored,
      'evidence.duplicates': summary.duplicates,
      'evidence.linked': summary.linked,
      'evidence.orphans': summary.orphans,
      'evidence.confirmed': summary.confirmed.length,
      'evidence.suppressions_added': summary.suppressed.length,
    });
    if (span.isRecording()) {
      for (const key of summary.confirmed) span.addEvent('evidence.claim_confirmed', { 'notice.correlation': correlationOf(key) });
    }
    return summary;
  });
}

/** The producer's event for a provider event about one of our notices. */
function outboundEventOf(event: NormalizedEvent): WebhookEventType | null {
  if (event.type === 'delivered') return 'notice.delivered';
  if (event.type === 'bounce') return 'notice.bounced';
  if (event.type === 'complaint') return 'notice.complained';
  return null;
}

/**
 * What a stored Twilio event means besides the ledger: a status callback moves its message's
 * status forward (db/queries/sms.ts); an incoming STOP / START sets the sender's SMS preference
 * for courtesy notices (a required notice has no opt-out). Only for an event stored just now, so
 * a replayed callback or keyword changes nothing.
 */
async function applyTwilioEvent(tx: DbOrTx, event: NormalizedEvent, noticeKey: string | null): Promise<void> {
  if (event.rawType === 'inbound_stop' || event.rawType === 'inbound_start') {
    if (!event.recipient) return;
    await setPreferenceReported(tx, {
      recipient: event.recipient,
      category: 'courtesy',
      channel: 'sms',
      state: event.rawType === 'inbound_stop' ? 'opted_out' : 'opted_in',
      source: 'sms_keyword',
      actor: 'twilio:inbound',
      reason: `replied ${String(event.details.keyword ?? event.rawType).toUpperCase()}`,
    });
    return;
  }
  if (event.providerMessageId && isSmsStatus(event.rawType)) {
    const errorCode = typeof event.details.ErrorCode === 'string' ? event.details.ErrorCode : null;
    await advanceSmsStatus(tx, { messageSid: event.providerMessageId, status: event.rawType, errorCode, correlationId: event.correlationId, noticeKey });
  }
}

/**
 * Re-checks stored events against claims still `claimed` and confirms those with
 * accepted/delivered evidence. For the worker to call periodically (and after a restart):
 * it catches events that arrived before their row could be linked. Never releases a claim.
 * Its span, `evidence.reconcile`, is a trace of its own, with one span event per claim confirmed.
 */
export function reconcileQuarantine(db: DbOrTx, { limit = 500 }: { limit?: number } = {}): Promise<{ confirmed: string[] }> {
  return withSpan(
    'evidence.reconcile',
    {},
    async (span) => {
      const candidates = await listClaimsWithSendEvidence(db, { limit });
      const confirmed: string[] = [];
      for (const candidate of candidates) {
        const done = await db.transaction(async (tx) => {
          await linkProviderEvent(tx, { id: candidate.evidence.rowId, noticeKey: candidate.noticeKey });
          return confirmClaimSentByEvidence(tx, candidate);
        });
        if (done) confirmed.push(candidate.noticeKey);
      }
      span.setAttribute('evidence.confirmed', confirmed.length);
      if (span.isRecording()) {
        for (const key of confirmed) span.addEvent('evidence.claim_confirmed', { 'notice.correlation': correlationOf(key) });
      }
      return { confirmed };
    },
    { root: true },
  );
}

export const RECONCILER_ACTOR = 'system:reconciler';
export const RECONCILER_REASON = 'resolved by provider evidence';

/**
 * claimed → sent on provider evidence, and nothing else: resolveClaims' `state = 'claimed'`
 * guard makes it a no-op for rows already sent, released or suppressed, and it never makes a
 * row sendable. The ledger, the job and the audit row commit together (call inside a tx).
 */
export async function confirmClaimSentByEvidence(db: DbOrTx, { noticeKey, evidence }: { noticeKey: string; evidence: Evidence }): Promise<boolean> {
  const [row] = await resolveClaims(db, {
    keys: [noticeKey],
    resolution: { by: 'provider_evidence', occurredAt: evidence.occurredAt, providerMessageId: evidence.providerMessageId },
  });
  if (!row) return false;
  await recordNoticeEvidence(db, {
    noticeKey,
    kind: 'ledger.resolved',
    body: {
      at: new Date().toISOString(),
      by: 'provider_evidence',
      actor: RECONCILER_ACTOR,
      evidenceEventId: `${evidence.provider}:${evidence.eventId}`,
      evidenceType: evidence.eventType,
    },
  });
  await insertAuditEntries(db, {
    entries: [
      {
        actor: RECONCILER_ACTOR,
        action: 'ledger.confirm_sent',
        targetType: 'notice',
        targetId: noticeKey,
        reason: RECONCILER_REASON,
        before: { state: 'claimed', claimedAt: row.claimedAt.toISOString(), claimedBy: row.claimedBy },
        after: {
          state: 'sent',
          sentAt: row.sentAt?.toISOString() ?? null,
          evidenceEventId: `${evidence.provider}:${evidence.eventId}`,
          evidenceEventRowId: evidence.rowId,
          evidenceType: evidence.eventType,
        },
      },
    ],
  });
  return true;
}
