import type { Db, DbOrTx } from '@/db/client';
import { startPeriodic } from './periodic';
import { insertAuditEntries } from '@/db/queries/audit';
import {
  deleteAttemptsBefore,
  deleteBusinessEventsBefore,
  deleteCancellationRequestsBefore,
  deleteFinishedJobsBefore,
  deleteFinishedReplayItemsBefore,
  deleteOpenEvidenceBefore,
  deleteProviderEventsBefore,
  deleteSmsMessagesBefore,
  deleteResolvedEvidenceBefore,
  deleteSupersededPreferenceChangesBefore,
  deleteUnplannedNoticesBefore,
  redactFinishedReplayRejectionsBefore,
  redactProviderEventDetailsBefore,
} from '@/db/queries/retention';
import { deleteSettledLedgerBefore } from '@/db/queries/ledger/retention';
import type { Config } from './config';

/**
 * Retention is policy, per class (DESIGN.md): the attempt log, provider events (and, sooner,
 * their payloads), evidence (resolved, and never resolved), the ledger with its finished jobs,
 * and every other table that holds personal data: business events, unplanned notices,
 * cancellation requests, preference history and replay items. The ledger horizon may never be
 * shorter than the longest delay plus the replay horizon: a ledger row deleted before a replay
 * of its notice would let that replay send the notice again. What a job that may still be sent
 * reads (its evidence, its business event) stays whatever its age (db/queries/retention.ts).
 */

export type RetentionPolicy = {
  attemptsMs: number;
  providerEventsMs: number;
  eventDetailsMs: number;
  evidenceMs: number;
  openEvidenceMs: number;
  businessEventsMs: number;
  unplannedNoticesMs: number;
  cancellationRequestsMs: number;
  preferenceHistoryMs: number;
  replayItemsMs: number;
  ledgerMs: number;
  maxDelayMs: number;
  replayHorizonMs: number;
  batchSize: number;
  /** Upper bound on statements per class per run, so one run cannot monopolise the database. */
  maxBatches: number;
};

export class RetentionPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RetentionPolicyError';
  }
}

export function retentionPolicyFrom(
  config: Pick<
    Config,
    | 'RETENTION_ATTEMPTS'
    | 'RETENTION_PROVIDER_EVENTS'
    | 'RETENTION_EVENT_DETAILS'
    | 'RETENTION_EVIDENCE'
    | 'RETENTION_OPEN_EVIDENCE'
    | 'RETENTION_BUSINESS_EVENTS'
    | 'RETENTION_UNPLANNED_NOTICES'
    | 'RETENTION_CANCELLATION_REQUESTS'
    | 'RETENTION_PREFERENCE_HISTORY'
    | 'RETENTION_REPLAY_ITEMS'
    | 'RETENTION_LEDGER'
    | 'MAX_DELAY'
    | 'REPLAY_HORIZON'
    | 'RETENTION_BATCH'
  >,
): RetentionPolicy {
  return {
    attemptsMs: config.RETENTION_ATTEMPTS,
    providerEventsMs: config.RETENTION_PROVIDER_EVENTS,
    eventDetailsMs: config.RETENTION_EVENT_DETAILS,
    evidenceMs: config.RETENTION_EVIDENCE,
    openEvidenceMs: config.RETENTION_OPEN_EVIDENCE,
    businessEventsMs: config.RETENTION_BUSINESS_EVENTS,
    unplannedNoticesMs: config.RETENTION_UNPLANNED_NOTICES,
    cancellationRequestsMs: config.RETENTION_CANCELLATION_REQUESTS,
    preferenceHistoryMs: config.RETENTION_PREFERENCE_HISTORY,
    replayItemsMs: config.RETENTION_REPLAY_ITEMS,
    ledgerMs: config.RETENTION_LEDGER,
    maxDelayMs: config.MAX_DELAY,
    replayHorizonMs: config.REPLAY_HORIZON,
    batchSize: config.RETENTION_BATCH,
    maxBatches: 1_000,
  };
}

export type RetentionCutoffs = {
  attempts: Date;
  providerEvents: Date;
  eventDetails: Date;
  evidence: Date;
  openEvidence: Date;
  businessEvents: Date;
  unplannedNotices: Date;
  cancellationRequests: Date;
  preferenceHistory: Date;
  replayItems: Date;
  ledger: Date;
};

/** Pure: the instant before which each class goes. Throws when the ledger horizon is unsafe. */
export function retentionCutoffs(policy: RetentionPolicy, now: Date): RetentionCutoffs {
  const floor = policy.maxDelayMs + policy.replayHorizonMs;
  if (policy.ledgerMs < floor) {
    throw new RetentionPolicyError(
      `ledger retention (${Math.round(policy.ledgerMs / 86_400_000)}d) is shorter than MAX_DELAY + REPLAY_HORIZON (${Math.round(floor / 86_400_000)}d); refusing to delete ledger rows a replay could still need`,
    );
  }
  for (const [name, ms] of Object.entries(policy)) {
    if (!Number.isFinite(ms) || ms <= 0) throw new RetentionPolicyError(`${name} must be a positive duration`);
  }
  const before = (ms: number) => new Date(now.getTime() - ms);
  return {
    attempts: before(policy.attemptsMs),
    providerEvents: before(policy.providerEventsMs),
    eventDetails: before(Math.min(policy.eventDetailsMs, policy.providerEventsMs)),
    evidence: before(policy.evidenceMs),
    openEvidence: before(policy.openEvidenceMs),
    businessEvents: before(policy.businessEventsMs),
    unplannedNotices: before(policy.unplannedNoticesMs),
    cancellationRequests: before(policy.cancellationRequestsMs),
    preferenceHistory: before(policy.preferenceHistoryMs),
    replayItems: before(policy.replayItemsMs),
    ledger: before(policy.ledgerMs),
  };
}

export type RetentionReport = {
  attemptsDeleted: number;
  providerEventsDeleted: number;
  providerEventsRedacted: number;
  smsMessagesDeleted: number;
  evidenceDeleted: number;
  openEvidenceDeleted: number;
  ledgerDeleted: number;
  jobsDeleted: number;
  unplannedNoticesDeleted: number;
  businessEventsDeleted: number;
  cancellationRequestsDeleted: number;
  preferenceChangesDeleted: number;
  replayItemsDeleted: number;
  replayRejectionsRedacted: number;
};

async function inBatches(db: Db, policy: RetentionPolicy, step: (db: DbOrTx, limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < policy.maxBatches; batch += 1) {
    const affected = await step(db, policy.batchSize);
    total += affected;
    if (affected < policy.batchSize) break;
  }
  return total;
}

/** One retention pass over every class. Safe to run on several processes at once. */
export async function runRetention({ db, policy, now }: { db: Db; policy: RetentionPolicy; now: Date }): Promise<RetentionReport> {
  const cutoffs = retentionCutoffs(policy, now);
  const report: RetentionReport = {
    attemptsDeleted: await inBatches(db, policy, (tx, limit) => deleteAttemptsBefore(tx, { before: cutoffs.attempts, limit })),
    providerEventsDeleted: await inBatches(db, policy, (tx, limit) => deleteProviderEventsBefore(tx, { before: cutoffs.providerEvents, limit })),
    providerEventsRedacted: await inBatches(db, policy, (tx, limit) => redactProviderEventDetailsBefore(tx, { before: cutoffs.eventDetails, limit, now })),
    smsMessagesDeleted: await inBatches(db, policy, (tx, limit) => deleteSmsMessagesBefore(tx, { before: cutoffs.providerEvents, limit })),
    evidenceDeleted: 0,
    openEvidenceDeleted: 0,
    ledgerDeleted: await inBatches(db, policy, (tx, limit) => deleteSettledLedgerBefore(tx, { before: cutoffs.ledger, limit })),
    jobsDeleted: await inBatches(db, policy, (tx, limit) => deleteFinishedJobsBefore(tx, { before: cutoffs.ledger, limit })),
    unplannedNoticesDeleted: 0,
    businessEventsDeleted: 0,
    cancellationRequestsDeleted: await inBatches(db, policy, (tx, limit) =>
      deleteCancellationRequestsBefore(tx, { before: cutoffs.cancellationRequests, limit }),
    ),
    preferenceChangesDeleted: await inBatches(db, policy, (tx, limit) =>
      deleteSupersededPreferenceChangesBefore(tx, { before: cutoffs.preferenceHistory, limit }),
    ),
    replayItemsDeleted: await inBatches(db, policy, (tx, limit) => deleteFinishedReplayItemsBefore(tx, { before: cutoffs.replayItems, limit })),
    replayRejectionsRedacted: await inBatches(db, policy, (tx, limit) => redactFinishedReplayRejectionsBefore(tx, { before: cutoffs.replayItems, limit })),
  };
  // After the jobs: evidence cited only by finished jobs that just went may go too.
  report.evidenceDeleted = await inBatches(db, policy, (tx, limit) => deleteResolvedEvidenceBefore(tx, { before: cutoffs.evidence, limit, now }));
  report.openEvidenceDeleted = await inBatches(db, policy, (tx, limit) => deleteOpenEvidenceBefore(tx, { before: cutoffs.openEvidence, limit, now }));
  // Business events last: after the jobs and the unplanned notices that keep them.
  report.unplannedNoticesDeleted = await inBatches(db, policy, (tx, limit) => deleteUnplannedNoticesBefore(tx, { before: cutoffs.unplannedNotices, limit }));
  report.businessEventsDeleted = await inBatches(db, policy, (tx, limit) => deleteBusinessEventsBefore(tx, { before: cutoffs.businessEvents, limit, now }));
  if (Object.values(report).some((n) => n > 0)) {
    await insertAuditEntries(db, {
      entries: [
        {
          actor: 'system:retention',
          action: 'retention.run',
          targetType: 'retention',
          targetId: now.toISOString(),
          reason: 'retention policy',
          after: { ...report },
        },
      ],
    });
  }
  return report;
}

/**
 * Runs retention every `every` ms (e.g. hourly) until stopped; errors are logged, not thrown.
 * worker/start.ts: `const retention = startRetention({ db, policy: retentionPolicyFrom(config), every: 3_600_000, logger })`.
 */
export function startRetention(params: {
  db: Db;
  policy: RetentionPolicy;
  every: number;
  clock?: () => Date;
  logger?: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void };
}): { stop: () => Promise<void> } {
  const clock = params.clock ?? (() => new Date());
  return startPeriodic({
    every: params.every,
    run: async () => {
      const report = await runRetention({ db: params.db, policy: params.policy, now: clock() });
      if (Object.values(report).some((n) => n > 0)) params.logger?.info(report, 'retention pass');
    },
    onError: (error) => params.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'retention pass failed'),
  });
}
