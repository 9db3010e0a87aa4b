import type { Tx } from '@/db/client';
import { insertEvidenceForRecordedNotices } from '@/db/queries/evidence-record';
import { getReplay } from '@/db/queries/replays';
import { findUserById } from '@/db/queries/users';
import { entryOf, evidenceSelection, type EvidenceSelection } from './record';

/**
 * A replay's approval, in the record of every notice it wakes that keeps one (issue 28 item 4):
 * who dry-ran and requested it (one act: the dry run is counted in the request's transaction,
 * lib/replay/service.ts), with the counts they saw and their reason, who approved it (never the
 * requester, four-eyes) and when. Written by the replay runner in the batch's own transaction
 * (lib/replay/runner.ts), so a batch that rolls back leaves no entry, and a committed one cannot
 * leave a woken notice without it. A notice whose type keeps no record gets none.
 */
export async function recordReplayEvidence(
  tx: Tx,
  { replayId, published, now }: { replayId: string; published: readonly { noticeKey: string; jobId: string }[]; now: Date },
  selection: EvidenceSelection = evidenceSelection(),
): Promise<number> {
  if (published.length === 0) return 0;
  const replay = await getReplay(tx, { id: replayId });
  if (!replay) return 0;
  const [requester, approver] = await Promise.all([
    findUserById(tx, { id: replay.requestedBy }),
    replay.decidedBy ? findUserById(tx, { id: replay.decidedBy }) : null,
  ]);
  const person = (user: typeof requester, id: string | null) => (user ? { email: user.email, name: user.name, role: user.role } : { id });
  const by = person(requester, replay.requestedBy);
  const body = {
    replay: { id: replay.id, batchId: replay.batchId, filter: JSON.parse(JSON.stringify(replay.filter)) as unknown },
    dryRun: { by, at: replay.requestedAt.toISOString(), counts: replay.dryRun ? (JSON.parse(JSON.stringify(replay.dryRun)) as unknown) : null },
    requested: { by, at: replay.requestedAt.toISOString(), reason: replay.requestReason },
    approved: { by: person(approver, replay.decidedBy), at: replay.decidedAt?.toISOString() ?? null, reason: replay.decisionReason },
    wokenAt: now.toISOString(),
  };
  const entries = published.map(({ noticeKey, jobId }) => entryOf({ noticeKey, jobId, kind: 'replay.approved', body }));
  return insertEvidenceForRecordedNotices(tx, entries, {
    all: selection.all,
    categories: [...selection.categories],
    types: [...selection.types],
  });
}
