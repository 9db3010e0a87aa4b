import type { Db } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { listOrphanedSends, resolveOrphanedSends, type OrphanedSend } from '@/db/queries/ledger/post-failover';
import { correlationOf } from '@/lib/ledger/notice-key';
import { orphansResolved } from '@/lib/metrics/registry';
import { withSpan } from '@/lib/telemetry/tracing';

/**
 * The post-failover check (`npm run ledger -- post-failover --since <instant>`, and a pass in
 * every worker): notices the provider says it took since `since` for which the new primary has
 * no claim (db/queries/ledger/post-failover.ts says why that is the signal). Each is recorded
 * `sent` from its event, with an audit row, so the next wake-up of its job finds it final and
 * sends nothing. A dry run only reports. Claims the new primary does hold but never saw
 * committed (their commit's answer was lost) are not this check's: they are `claimed`, reach
 * quarantine, and `reconcileQuarantine` confirms them from the same events.
 */

export type PostFailoverReport = { since: Date; dryRun: boolean; found: OrphanedSend[]; resolved: OrphanedSend[] };

export function checkAfterFailover(
  db: Db,
  { since, dryRun = false, actor, limit = 1_000 }: { since: Date; dryRun?: boolean; actor: string; limit?: number },
): Promise<PostFailoverReport> {
  return withSpan('evidence.post_failover', { 'evidence.dry_run': dryRun }, async (span) => {
    if (dryRun) {
      const found = await listOrphanedSends(db, { since, limit });
      span.setAttribute('evidence.orphans', found.length);
      return { since, dryRun, found, resolved: [] };
    }
    const resolved: OrphanedSend[] = [];
    // Batches until none is left: each batch's rows are no longer orphans.
    for (;;) {
      const batch = await db.transaction(async (tx) => {
        const rows = await resolveOrphanedSends(tx, { since, limit });
        await insertAuditEntries(tx, {
          entries: rows.map((row) => ({
            actor,
            action: 'ledger.post_failover_sent',
            targetType: 'notice',
            targetId: correlationOf(row.noticeKey),
            reason: `the provider reported ${row.eventType} (${row.provider} ${row.eventId}) for a notice the database had no claim for`,
            before: { ledger: null, job: row.jobState },
            after: { ledger: 'sent', job: row.jobState === 'sent' || row.jobState === 'suppressed' || row.jobState === 'cancelled' ? row.jobState : 'sent' },
          })),
        });
        return rows;
      });
      resolved.push(...batch);
      if (batch.length < limit) break;
    }
    orphansResolved.inc(resolved.length);
    span.setAttribute('evidence.orphans', resolved.length);
    return { since, dryRun, found: resolved, resolved };
  });
}
