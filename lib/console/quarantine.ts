import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { recordNoticeEvidence } from '@/lib/evidence/record';
import { recordNoticeEvents } from '@/lib/webhooks/outbox';
import type { ResolveOutcome } from '@/lib/api/console/quarantine';
import type { QuarantineSelection } from '@/db/queries/ledger/read';
import { lockQuarantined, resolveClaims, type QuarantineAction } from '@/db/queries/ledger/resolve';

/** One bulk action touches at most this many claims; a bigger incident is done in several passes. */
export const MAX_BULK = 5_000;

/**
 * Resolves quarantined claims in ONE transaction: lock the rows, move the ledger and the jobs
 * (resolveClaims, guarded by state = 'claimed', so a claim the evidence matcher or another
 * on-call resolved meanwhile is skipped, not overwritten), and write one audit row per notice
 * with before and after. Release keeps one_time_code untouched so the resend carries the same code.
 */
export async function resolveQuarantine(
  db: DbOrTx,
  params: { action: QuarantineAction; selection: QuarantineSelection; actor: string; reason: string; quarantineAfterMs: number },
): Promise<ResolveOutcome> {
  return db.transaction(async (tx) => {
    const locked = await lockQuarantined(tx, { quarantineAfterMs: params.quarantineAfterMs, selection: params.selection, limit: MAX_BULK });
    const keys = locked.map((row) => row.noticeKey);
    const resolved = await resolveClaims(tx, { keys, resolution: { by: 'operator', action: params.action } });
    const resolvedKeys = resolved.map((row) => row.noticeKey);
    const ledgerByKey = new Map(resolved.map((row) => [row.noticeKey, row]));
    await insertAuditEntries(tx, {
      entries: locked
        .filter((row) => ledgerByKey.has(row.noticeKey))
        .map((row) => ({
          actor: params.actor,
          action: `quarantine.${params.action}`,
          targetType: 'notice',
          targetId: row.noticeKey,
          reason: params.reason,
          before: {
            ledgerState: row.state,
            claimedAt: row.claimedAt,
            claimedBy: row.claimedBy,
            providerMessageId: row.providerMessageId,
            jobState: row.jobState,
            evidenceProviderMessageId: row.evidenceProviderMessageId,
          },
          after: {
            ledgerState: ledgerByKey.get(row.noticeKey)?.state ?? null,
            providerMessageId: ledgerByKey.get(row.noticeKey)?.providerMessageId ?? null,
            jobState: ledgerByKey.get(row.noticeKey)?.jobState ?? row.jobState,
          },
        })),
    });
    // The notice's evidence record: the resolution, who made it, why, and the evidence the page showed them.
    for (const row of locked.filter((candidate) => ledgerByKey.has(candidate.noticeKey))) {
      await recordNoticeEvidence(tx, {
        noticeKey: row.noticeKey,
        kind: 'ledger.resolved',
        body: {
          at: new Date().toISOString(),
          by: 'operator',
          actor: params.actor,
          action: params.action,
          reason: params.reason,
          before: { ledgerState: row.state, jobState: row.jobState, evidenceProviderMessageId: row.evidenceProviderMessageId },
          after: { ledgerState: ledgerByKey.get(row.noticeKey)?.state ?? null, jobState: ledgerByKey.get(row.noticeKey)?.jobState ?? row.jobState },
        },
      });
    }
    // notice.resolved for the producer, in this transaction: what the operator decided, not who or why.
    await recordNoticeEvents(tx, {
      type: 'notice.resolved',
      noticeKeys: resolvedKeys,
      extra: {
        outcome: params.action === 'confirm_sent' ? 'sent' : params.action === 'release' ? 'released' : 'suppressed',
        resolvedBy: 'operator',
        action: params.action,
      },
    });
    const requested = 'keys' in params.selection ? new Set(params.selection.keys).size : keys.length;
    return { action: params.action, resolved: resolvedKeys, skipped: requested - resolvedKeys.length };
  });
}
