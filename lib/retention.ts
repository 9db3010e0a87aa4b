import type { Db, DbOrTx } from '@/db/client';
import { startPeriodic } from './periodic';
import { insertAuditEntries } from '@/db/queries/audit';
import {
  deleteAttemptsBefore,
  deleteFinishedJobsBefore,
  deleteProviderEventsBefore,
  deleteSmsMessagesBefore,
  deleteResolvedEvidenceBefore,
  redactProviderEventDetailsBefore,
} from '@/db/queries/retention';
import { deleteSettledLedgerBefore } from '@/db/queries/ledger/retention';
import type { Config } from './config';

/**
 * Retention is policy, per class (DESIGN.md): the attempt log, provider events (and, sooner,
 * their payloads), evidence, and the ledger with its finished jobs. The ledger horizon may
 * never be shorter than the longest delay plus the replay horizon: a ledger row deleted
 * before a replay of its notice would let that replay send the notice again.
 */

export type RetentionPolicy = {
  attemptsMs: number;
  providerEventsMs: number;
  eventDetailsMs: number;
  evidenceMs: number;
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
    ledger: before(policy.ledgerMs),
  };
}

export type RetentionReport = {
  attemptsDeleted: number;
  providerEventsDeleted: number;
  providerEventsRedacted: number;
  smsMessagesDeleted: number;
  evidenceDeleted: number;
  ledgerDeleted: number;
  jobsDeleted: number;
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
    ledgerDeleted: await inBatches(db, policy, (tx, limit) => deleteSettledLedgerBefore(tx, { before: cutoffs.ledger, limit })),
    jobsDeleted: await inBatches(db, policy, (tx, limit) => deleteFinishedJobsBefore(tx, { before: cutoffs.ledger, limit })),
  };
  // After the jobs: evidence cited only by finished jobs that just went may go too.
  report.evidenceDeleted = await inBatches(db, policy, (tx, limit) => deleteResolvedEvidenceBefore(tx, { before: cutoffs.evidence, limit }));
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
