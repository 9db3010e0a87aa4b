import type { JobState, LedgerState } from '@/db/schema/states';

/**
 * Every change a `notice_ledger` row can go through, and who may cause it. The SQL in
 * db/queries/ledger/ is the last line (each statement is conditional on the state it leaves);
 * this table is what it must agree with (db/queries/ledger/transitions.test.ts runs each
 * actor's statement against a row in every state and compares).
 *
 * What the table encodes: a claim is only ever taken over from `released` (never from
 * `claimed`, `sent` or `suppressed`); a `claimed` row leaves only by the worker's own result,
 * provider evidence of hand-over (to `sent` only) or a person; retention never deletes an
 * open claim.
 */

export const ledgerActors = ['worker', 'provider_evidence', 'operator', 'backfill', 'retention'] as const;
export type LedgerActor = (typeof ledgerActors)[number];

/** `absent`: no row for the key yet. */
export type LedgerFrom = LedgerState | 'absent';
/** `deleted`: the row is gone (retention). */
export type LedgerTo = LedgerState | 'deleted';

/** What the same statement (or transaction) does to the notice's job: from which states, to which. */
export type JobEffect = { from: readonly JobState[]; to: readonly JobState[] } | 'unchanged';

export type LedgerTransition = {
  from: LedgerFrom;
  to: LedgerTo;
  by: LedgerActor;
  /** When it happens, and the statement that does it. */
  cause: string;
  job: JobEffect;
};

const operatorJobStates: readonly JobState[] = ['pending', 'claimed', 'failed'];
/**
 * The job states a worker may claim for. Any other (cancelled, suppressed, sent, failed) is final:
 * a cancel or an evidence resolve that commits before the claim means no claim and no send.
 */
const claimableJobStates: readonly JobState[] = ['pending', 'claimed'];

export const ledgerTransitions: readonly LedgerTransition[] = [
  { from: 'absent', to: 'claimed', by: 'worker', cause: 'first claim (claimNotice / claimNotices)', job: { from: claimableJobStates, to: ['claimed'] } },
  {
    from: 'released',
    to: 'claimed',
    by: 'worker',
    cause: 're-claim of a released row, keeping its one-time code (claimNotice / claimNotices)',
    job: { from: claimableJobStates, to: ['claimed'] },
  },
  {
    from: 'claimed',
    to: 'sent',
    by: 'worker',
    cause: 'accepted by the relay, claim_token still ours (commitSent / commitSentMany)',
    job: { from: ['pending', 'claimed'], to: ['sent'] },
  },
  {
    from: 'claimed',
    to: 'released',
    by: 'worker',
    cause: 'definite rejection (SMTP 4xx/5xx, refused connect), claim_token still ours (releaseClaim)',
    job: { from: ['pending', 'claimed'], to: ['pending', 'failed'] },
  },
  {
    from: 'claimed',
    to: 'sent',
    by: 'provider_evidence',
    cause: 'a stored hand-over event matches the claim (resolveClaims, by provider_evidence)',
    job: { from: ['pending', 'claimed'], to: ['sent'] },
  },
  {
    from: 'claimed',
    to: 'sent',
    by: 'operator',
    cause: 'quarantine: confirm sent (resolveClaims, by operator)',
    job: { from: operatorJobStates, to: ['sent'] },
  },
  {
    from: 'claimed',
    to: 'released',
    by: 'operator',
    cause: 'quarantine: release for resend, due now (resolveClaims, by operator)',
    job: { from: operatorJobStates, to: ['pending'] },
  },
  {
    from: 'claimed',
    to: 'suppressed',
    by: 'operator',
    cause: 'quarantine: suppress (resolveClaims, by operator)',
    job: { from: operatorJobStates, to: ['suppressed'] },
  },
  { from: 'absent', to: 'sent', by: 'backfill', cause: 'a notice sent before the ledger existed (insertBackfilledSent / backfillSentJobs)', job: 'unchanged' },
  { from: 'sent', to: 'deleted', by: 'retention', cause: 'older than RETENTION_LEDGER (deleteSettledLedgerBefore)', job: 'unchanged' },
  { from: 'released', to: 'deleted', by: 'retention', cause: 'older than RETENTION_LEDGER (deleteSettledLedgerBefore)', job: 'unchanged' },
  { from: 'suppressed', to: 'deleted', by: 'retention', cause: 'older than RETENTION_LEDGER (deleteSettledLedgerBefore)', job: 'unchanged' },
];

export function findTransition({ from, to, by }: { from: LedgerFrom; to: LedgerTo; by: LedgerActor }): LedgerTransition | null {
  return ledgerTransitions.find((transition) => transition.from === from && transition.to === to && transition.by === by) ?? null;
}

export function isTransitionAllowed(change: { from: LedgerFrom; to: LedgerTo; by: LedgerActor }): boolean {
  return findTransition(change) !== null;
}

/** Who may move a row from `from` to `to` (empty: nobody). */
export function listActorsFor({ from, to }: { from: LedgerFrom; to: LedgerTo }): LedgerActor[] {
  return ledgerTransitions.filter((transition) => transition.from === from && transition.to === to).map((transition) => transition.by);
}
