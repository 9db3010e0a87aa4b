import type { Db } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { findEvidence, insertEvidenceUnlessExists, insertResolvedEvidence, markEvidenceResolved, type EvidenceRow } from '@/db/queries/evidence';
import { suppressPendingJobsForEvidence } from '@/db/queries/scheduling';
import type { OpenEvidenceRequest, ResolveEvidenceRequest } from '@/lib/api/producer';

/**
 * Evidence is the business fact a reminder is about (a reconciliation exception). Resolving
 * it suppresses the pending reminders that cite it here, in the same transaction; the send
 * path checks the evidence state again before it claims, for a job already in flight.
 */

/** What both producer calls on a reference carry: the reference, the request, who and when. */
export type EvidenceCall<Request> = { db: Db; ref: string; request: Request; actor: string; now: Date };

export type OpenEvidenceResult =
  { kind: 'created'; evidence: EvidenceRow } | { kind: 'existing'; evidence: EvidenceRow } | { kind: 'conflict'; evidence: EvidenceRow; message: string };

export async function openEvidence({ db, ref, request, actor, now }: EvidenceCall<OpenEvidenceRequest>): Promise<OpenEvidenceResult> {
  return db.transaction(async (tx) => {
    const { row, created } = await insertEvidenceUnlessExists(tx, { ref, kind: request.kind, summary: request.summary ?? null, details: request.details, now });
    if (!created) {
      if (row.state === 'resolved') return { kind: 'conflict', evidence: row, message: `evidence ${ref} is already resolved; open a new reference instead` };
      if (row.kind !== request.kind) return { kind: 'conflict', evidence: row, message: `evidence ${ref} is already open with kind ${row.kind}` };
      return { kind: 'existing', evidence: row };
    }
    await insertAuditEntries(tx, {
      entries: [
        { actor, action: 'evidence.open', targetType: 'evidence', targetId: ref, reason: 'opened by producer', after: { kind: row.kind, state: row.state } },
      ],
    });
    return { kind: 'created', evidence: row };
  });
}

export type ResolveEvidenceResult = { kind: 'resolved' | 'already_resolved'; evidence: EvidenceRow; suppressedJobIds: string[] };

/**
 * Idempotent: resolving twice answers the same and still suppresses anything pending that
 * cites the reference (a job scheduled after the first resolve, say). Resolving a reference
 * nobody opened records it resolved, so jobs scheduled with it later are suppressed too.
 */
export async function resolveEvidence({ db, ref, request, actor, now }: EvidenceCall<ResolveEvidenceRequest>): Promise<ResolveEvidenceResult> {
  return db.transaction(async (tx) => {
    const before = await findEvidence(tx, { ref, lock: true });
    let evidence: EvidenceRow | null = before;
    const alreadyResolved = before?.state === 'resolved';
    if (!before) evidence = await insertResolvedEvidence(tx, { ref, kind: request.kind ?? 'unspecified', resolvedBy: actor, now });
    if (before && !alreadyResolved) evidence = await markEvidenceResolved(tx, { ref, resolvedBy: actor, now });
    // A concurrent resolve inserted first: read what it wrote.
    evidence ??= await findEvidence(tx, { ref, lock: true });
    if (!evidence) throw new Error(`evidence ${ref} vanished while resolving`);
    const suppressedJobIds = await suppressPendingJobsForEvidence(tx, { evidenceRef: ref, now });
    if (!alreadyResolved || suppressedJobIds.length > 0) {
      await insertAuditEntries(tx, {
        entries: [
          {
            actor,
            action: 'evidence.resolve',
            targetType: 'evidence',
            targetId: ref,
            reason: request.reason ?? 'resolved by producer',
            before: before ? { state: before.state } : null,
            after: { state: 'resolved', suppressedJobIds },
          },
        ],
      });
    }
    return { kind: alreadyResolved ? 'already_resolved' : 'resolved', evidence, suppressedJobIds };
  });
}
