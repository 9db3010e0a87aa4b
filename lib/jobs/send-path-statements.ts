import pg from 'pg';
import type { Db } from '@/db/client';
import { loadJobForSend, loadJobsForSend, type JobForSend } from '@/db/queries/jobs';
import { claimNotice, claimNotices, type Claim, type ClaimParams } from '@/db/queries/ledger/claim';
import { commitSent, commitSentMany, type CommitSentParams } from '@/db/queries/ledger/commit';
import { createCoalescer } from '@/lib/coalesce';
import { subscribedTo } from '@/lib/webhooks/subscriptions';

/**
 * The send path's three per-notice statements — load, claim, result commit — each coalesced
 * across the handlers in flight (lib/coalesce.ts). Nothing about a notice changes: its claim
 * is committed before its send starts and its result before its ack; only the round trip is
 * shared. Concurrent claims of one key never share a statement, so "exactly one claimant
 * wins" still rests on the primary key.
 */
export type SendPathStatements = {
  loadJob: (jobId: string) => Promise<JobForSend | null>;
  claim: (params: ClaimParams) => Promise<Claim | null>;
  commitSent: (params: CommitSentParams) => Promise<boolean>;
};

// SQLSTATE classes in which the server refused the statement as a whole (bad data,
// constraint, deadlock/serialization, undefined object): it changed nothing, so each item
// may be tried alone. Anything else — a lost connection above all — may have committed.
const refusedClasses = new Set(['21', '22', '23', '40', '42']);

export function statementRefused(error: unknown): boolean {
  return error instanceof pg.DatabaseError && typeof error.code === 'string' && refusedClasses.has(error.code.slice(0, 2));
}

// The connection went away under the statement: a failover, a restart, a proxy cut. `08` is the
// connection-exception class; 57P01–57P03 are the server shutting down or not yet accepting.
const lostConnectionCodes = new Set(['57P01', '57P02', '57P03']);

export function connectionLost(error: unknown): boolean {
  // drizzle wraps the driver's error in its own (DrizzleQueryError), the driver's as `cause`.
  if (error instanceof Error && error.cause !== undefined && connectionLost(error.cause)) return true;
  if (error instanceof pg.DatabaseError) return typeof error.code === 'string' && (error.code.startsWith('08') || lostConnectionCodes.has(error.code));
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return (
    code === 'ECONNRESET' ||
    code === 'ECONNREFUSED' ||
    code === 'EPIPE' ||
    /Connection terminated|connection timeout|Client has encountered a connection error/i.test(error.message)
  );
}

/**
 * Reads only: a read whose connection died is asked again on a fresh one (the pool drops the
 * dead client), a few times over about 1.5 s, long enough for a proxy to point at a promoted
 * standby. Never for the claim or the result commit: either may have committed before the
 * answer was lost, and retrying would turn "outcome unknown" into a guess. Those errors reach
 * the handler, which sends nothing without a claim it saw committed, and a result commit that
 * may not have happened leaves the claim to quarantine.
 */
export async function retryRead<T>(read: () => Promise<T>, { attempts = 4, baseDelayMs = 100 }: { attempts?: number; baseDelayMs?: number } = {}): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await read();
    } catch (error) {
      if (attempt >= attempts || !connectionLost(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, baseDelayMs * 2 ** (attempt - 1)));
    }
  }
}

export function createSendPathStatements(db: Db, { maxBatch = 64 }: { maxBatch?: number } = {}): SendPathStatements {
  const loadJob = createCoalescer<string, JobForSend | null>({
    maxBatch,
    runBatch: async (jobIds) => {
      const byId = await retryRead(() => loadJobsForSend(db, jobIds));
      return jobIds.map((id) => byId.get(id) ?? null);
    },
    runOne: (jobId) => retryRead(() => loadJobForSend(db, { jobId })),
    retryAloneAfter: statementRefused,
  });
  const claim = createCoalescer<ClaimParams, Claim | null>({
    maxBatch,
    keyOf: (params) => params.noticeKey,
    runBatch: (claims) => claimNotices(db, claims),
    runOne: (params) => claimNotice(db, params),
    retryAloneAfter: statementRefused,
  });
  const commit = createCoalescer<CommitSentParams, boolean>({
    maxBatch,
    keyOf: (params) => params.noticeKey,
    // notice.sent rides in the commit statement itself when an endpoint subscribes (cached check).
    runBatch: async (commits) => commitSentMany(db, commits, { outbox: await subscribedTo(db, 'notice.sent') }),
    runOne: async (params) => commitSent(db, params, { outbox: await subscribedTo(db, 'notice.sent') }),
    retryAloneAfter: statementRefused,
  });
  return { loadJob, claim, commitSent: commit };
}
