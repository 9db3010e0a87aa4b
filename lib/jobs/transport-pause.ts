import type { Db } from '@/db/client';
import { recordAttempt, type AttemptRecord } from '@/db/queries/attempts';
import { releaseJobUncounted } from '@/db/queries/jobs';
import { releaseClaim } from '@/db/queries/ledger/commit';
import { sendOutcomes } from '@/lib/metrics/registry';
import type { HandlerResult } from '@/lib/queue/types';
import type { ChannelOutcome } from '@/lib/channels/types';
import type { TransportBreakers } from '@/lib/transport/breaker';
import type { TransportName } from '@/lib/transport/phases';
import type { JobRow } from '@/db/schema';
import { insertEvidenceEntries, type NewEvidenceEntry } from '@/db/queries/evidence-record';

/** What releasing needs of the send path (handle-wakeup's SendPathDeps and commit parameters have these). */
export type ReleaseUncountedParams = {
  deps: { db: Db; now?: () => Date; breakers?: Pick<TransportBreakers, 'pausedUntil'>; settings: { retryBaseMs: number } };
  job: JobRow;
  /** The job's channel's transport (lib/channels/): the breaker whose next probe wakes the job. */
  transport: TransportName;
  ownedToken: string | null;
  attempt: (outcome: AttemptRecord['outcome'], extra?: Partial<AttemptRecord>) => AttemptRecord;
  outcome: Extract<ChannelOutcome, { kind: 'rejected' }>;
  /** The send's evidence entry, written in the same transaction (lib/evidence/send-evidence.ts). */
  evidence?: NewEvidenceEntry | null;
};

/**
 * *Our configuration is broken* (lib/transport/phases.ts): the relay refused our login or our
 * sender. The claim is released (nothing left), the job waits for the breaker's next probe, and
 * no attempt is counted: never `failed`, whatever the count, since the recipient did nothing.
 */
export async function releaseUncounted({
  deps,
  job,
  transport,
  outcome,
  ownedToken,
  attempt,
  evidence = null,
}: ReleaseUncountedParams): Promise<HandlerResult> {
  const now = (deps.now ?? (() => new Date()))();
  const nextAttemptAt = deps.breakers?.pausedUntil(transport) ?? new Date(now.getTime() + deps.settings.retryBaseMs);
  const ours = await deps.db.transaction(async (tx) => {
    // A claim no longer ours (released by on-call, taken by another delivery) leaves the job to its holder.
    const owned = ownedToken ? await releaseClaim(tx, { noticeKey: job.noticeKey, claimToken: ownedToken }) : true;
    if (owned) await releaseJobUncounted(tx, { jobId: job.id, nextAttemptAt, errorClass: outcome.errorClass });
    await recordAttempt(tx, attempt('retryable_failure', { errorClass: outcome.errorClass, detail: owned ? 'config_broken' : 'claim_not_owned' }));
    if (evidence) await insertEvidenceEntries(tx, [evidence]);
    return owned;
  });
  sendOutcomes.inc({ notice_type: job.noticeType, outcome: 'retryable' });
  return ours ? { ack: true, wakeAt: nextAttemptAt } : { ack: true };
}
