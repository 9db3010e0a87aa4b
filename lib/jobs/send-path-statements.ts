import pg from 'pg';
import type { Db } from '@/db/client';
import { loadJobForSend, loadJobsForSend, type JobForSend } from '@/db/queries/jobs';
import { claimNotice, claimNotices, type Claim, type ClaimParams } from '@/db/queries/ledger/claim';
import { commitSent, commitSentMany, type CommitSentParams } from '@/db/queries/ledger/commit';
import { createCoalescer } from '@/lib/coalesce';

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

export function createSendPathStatements(db: Db, { maxBatch = 64 }: { maxBatch?: number } = {}): SendPathStatements {
  const loadJob = createCoalescer<string, JobForSend | null>({
    maxBatch,
    runBatch: async (jobIds) => {
      const byId = await loadJobsForSend(db, jobIds);
      return jobIds.map((id) => byId.get(id) ?? null);
    },
    runOne: (jobId) => loadJobForSend(db, { jobId }),
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
    runBatch: (commits) => commitSentMany(db, commits),
    runOne: (params) => commitSent(db, params),
    retryAloneAfter: statementRefused,
  });
  return { loadJob, claim, commitSent: commit };
}
