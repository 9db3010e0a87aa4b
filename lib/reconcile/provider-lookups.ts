import { and, eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { insertProviderEvent } from '@/db/queries/events';
import {
  listReconcileCandidates,
  pruneProviderLookups,
  recordProviderLookup,
  tryLockProviderReconciler,
  type ReconcileCandidate,
} from '@/db/queries/ledger/provider-lookup';
import { providerEvents } from '@/db/schema/events';
import type { AcceptedLookup, LookupAnswer } from '@/lib/channels/types';
import { confirmClaimSentByEvidence } from '@/lib/events/ingest';
import { correlationOf } from '@/lib/ledger/notice-key';
import type { Logger } from '@/lib/log';
import { providerReconciles } from '@/lib/metrics/registry';
import { startPeriodic, type PeriodicHandle } from '@/lib/periodic';
import { recordNoticeEvent } from '@/lib/webhooks/outbox';

/**
 * The provider reconciler (issue 27 item 4): a claim whose send ended unknown (a worker killed
 * mid-send, a batch whose answer never came, a 5xx after the provider took it) is looked up at
 * the provider it went through — Postmark's Messages API, SendGrid's Email Logs (lib/channels/
 * <name>/lookup.ts) — by its recipient, our correlation and the time since the claim.
 *
 * - found accepted: the answer is stored as a provider event (`accepted`, raw type the API it came
 *   from) and the claim moves claimed → sent through the webhooks' own path
 *   (confirmClaimSentByEvidence: audited as system:reconciler, the evidence record's
 *   ledger.resolved, the producer's notice.resolved), with the provider's message id and time;
 * - not found: asked again on the next pass until RECONCILE_GIVE_UP after the claim, then left to a
 *   person with the reason shown in quarantine. Never released: absence from a search is not proof
 *   that nothing went out (DESIGN.md: a stale claim is never released automatically, and neither
 *   API can say "this was refused");
 * - the lookup failed (5xx, 429, no answer): nothing changes, asked again next pass; a 429 ends
 *   the pass (the provider asked us to slow down). Past RECONCILE_GIVE_UP it is left to a person
 *   too, with the last error in the reason (a lookup that never works must not keep a claim
 *   circling for ever); `NoticeLedgerReconcileLookupsFailing` pages no one but says so.
 *
 * One worker at a time (a transaction-scoped advisory lock held for the pass); every statement
 * that moves a claim is guarded by `state = 'claimed'`, so a webhook or a person who settled it
 * meanwhile wins. Nothing here is on the send path. SES has no lookup: its events resolve claims.
 */
export const PROVIDER_RECONCILER_LOCK = 727_278;

/** The search window opens this long before the claim: the provider's clock may be behind ours. */
const WINDOW_BEFORE_CLAIM_MS = 2 * 60_000;
/** …and closes this long after now, for the same reason. */
const WINDOW_AFTER_NOW_MS = 60_000;

export type ProviderReconcileSettings = { afterMs: number; giveUpMs: number; limit?: number };

export type ProviderReconcileResult = {
  locked: boolean;
  found: string[];
  notFound: string[];
  gaveUp: string[];
  failed: string[];
};

const providerNames: Record<string, string> = { postmark: 'Postmark', sendgrid: 'SendGrid' };

const ageOf = (ms: number) => {
  const minutes = Math.round(ms / 60_000);
  return minutes >= 1 ? `${minutes} min` : `${Math.round(ms / 1000)} s`;
};

/** Pure: what a person reads in quarantine once the reconciler gave up. */
export function gaveUpReason(provider: string, giveUpMs: number): string {
  return `${providerNames[provider] ?? provider} has no record of this message after ${ageOf(giveUpMs)}: release to resend or mark sent.`;
}

/** Pure: the same, when the provider could not be asked at all until the give-up age (its lookup kept failing). */
export function gaveUpFailingReason(provider: string, giveUpMs: number, errorClass: string): string {
  const name = providerNames[provider] ?? provider;
  return `${name} could not be asked for ${ageOf(giveUpMs)} (last: ${errorClass}): check the message at ${name}, then release to resend or mark sent.`;
}

export async function reconcileWithProvider(
  db: Db,
  {
    lookup,
    settings,
    isStopped = () => false,
    now = () => new Date(),
  }: { lookup: AcceptedLookup; settings: ProviderReconcileSettings; isStopped?: () => boolean; now?: () => Date },
): Promise<ProviderReconcileResult> {
  const result: ProviderReconcileResult = { locked: false, found: [], notFound: [], gaveUp: [], failed: [] };
  // The lock lives in a transaction of its own, held while the pass runs; the pass's own
  // statements use other connections and commit one claim at a time.
  await db.transaction(async (lockTx) => {
    if (!(await tryLockProviderReconciler(lockTx, PROVIDER_RECONCILER_LOCK))) return;
    result.locked = true;
    await pruneProviderLookups(db);
    const candidates = await listReconcileCandidates(db, { afterMs: settings.afterMs, giveUpMs: settings.giveUpMs, limit: settings.limit ?? 100 });
    for (const candidate of candidates) {
      if (isStopped()) break;
      const answer = await ask(lookup, candidate, now());
      const outcome = await apply(db, { lookup, candidate, answer, giveUpMs: settings.giveUpMs });
      result[outcome].push(candidate.noticeKey);
      providerReconciles.inc({ provider: lookup.provider, outcome: outcomeLabel[outcome] });
      // The provider is throttling us: the rest waits for the next pass.
      if (answer.kind === 'failed' && answer.errorClass.endsWith('_429')) break;
    }
  });
  return result;
}

const outcomeLabel = { found: 'found', notFound: 'not_found', gaveUp: 'gave_up', failed: 'failed' } as const;

async function ask(lookup: AcceptedLookup, candidate: ReconcileCandidate, at: Date): Promise<LookupAnswer> {
  try {
    return await lookup.find({
      recipient: candidate.recipient,
      correlation: correlationOf(candidate.noticeKey),
      since: new Date(candidate.claimedAt.getTime() - WINDOW_BEFORE_CLAIM_MS),
      until: new Date(at.getTime() + WINDOW_AFTER_NOW_MS),
    });
  } catch (error) {
    return { kind: 'failed', errorClass: `${lookup.provider}_lookup_${error instanceof Error ? error.name : 'error'}` };
  }
}

async function apply(
  db: Db,
  { lookup, candidate, answer, giveUpMs }: { lookup: AcceptedLookup; candidate: ReconcileCandidate; answer: LookupAnswer; giveUpMs: number },
): Promise<keyof Omit<ProviderReconcileResult, 'locked'>> {
  const { noticeKey, claimedAt } = candidate;
  const provider = lookup.provider;
  if (answer.kind === 'failed') {
    // Past the give-up age a lookup that keeps failing ends like an absence: left to a person, who can ask the provider's own console.
    if (candidate.pastGiveUp) {
      await recordProviderLookup(db, {
        noticeKey,
        claimedAt,
        provider,
        outcome: 'gave_up',
        detail: gaveUpFailingReason(provider, giveUpMs, answer.errorClass),
      });
      return 'gaveUp';
    }
    await recordProviderLookup(db, { noticeKey, claimedAt, provider, outcome: 'lookup_failed', detail: answer.errorClass });
    return 'failed';
  }
  if (answer.kind === 'not_found') {
    if (candidate.pastGiveUp) {
      await recordProviderLookup(db, { noticeKey, claimedAt, provider, outcome: 'gave_up', detail: gaveUpReason(provider, giveUpMs) });
      return 'gaveUp';
    }
    await recordProviderLookup(db, { noticeKey, claimedAt, provider, outcome: 'not_found', detail: null });
    return 'notFound';
  }
  await db.transaction(async (tx) => {
    const eventId = `lookup:${answer.providerMessageId}`;
    const inserted = await insertProviderEvent(tx, {
      event: {
        provider,
        eventId,
        eventType: 'accepted',
        rawType: answer.source,
        correlationId: correlationOf(noticeKey),
        providerMessageId: answer.providerMessageId,
        noticeKey,
        recipient: null,
        bounceType: null,
        occurredAt: answer.acceptedAt,
        details: { source: answer.source, lookedUpBy: 'provider_reconciler' },
      },
    });
    const rowId =
      inserted ??
      (
        await tx
          .select({ id: providerEvents.id })
          .from(providerEvents)
          .where(and(eq(providerEvents.provider, provider), eq(providerEvents.eventId, eventId)))
          .limit(1)
      )[0]?.id;
    if (rowId === undefined) throw new Error('the lookup event was neither stored nor found');
    const confirmed = await confirmClaimSentByEvidence(tx, {
      noticeKey,
      evidence: { rowId, provider, eventId, eventType: 'accepted', occurredAt: answer.acceptedAt, providerMessageId: answer.providerMessageId },
    });
    if (confirmed) await recordNoticeEvent(tx, { type: 'notice.resolved', noticeKey, extra: { outcome: 'sent', resolvedBy: 'provider_evidence' } });
    await recordProviderLookup(tx, { noticeKey, claimedAt, provider, outcome: 'found', detail: answer.source });
  });
  return 'found';
}

export function startProviderReconciler({
  db,
  lookup,
  settings,
  logger,
}: {
  db: Db;
  lookup: AcceptedLookup;
  settings: ProviderReconcileSettings & { everyMs: number };
  logger: Logger;
}): PeriodicHandle {
  return startPeriodic({
    every: settings.everyMs,
    run: async (isStopped) => {
      const result = await reconcileWithProvider(db, { lookup, settings, isStopped });
      const counts = { found: result.found.length, notFound: result.notFound.length, gaveUp: result.gaveUp.length, failed: result.failed.length };
      if (counts.found + counts.gaveUp + counts.failed > 0) logger.info({ provider: lookup.provider, ...counts }, 'provider reconciler pass');
    },
    onError: (error) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'provider reconciler pass failed'),
  });
}
