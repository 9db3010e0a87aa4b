import type { DbOrTx } from '@/db/client';
import { listEntryHashes, listNoticeEntries, readEvidencePieces, signedHeadCovering, type SignedHead } from '@/db/queries/evidence-record';
import { merklePath } from './hash';
import type { EvidencePack, PackEntry, PackSignedHead } from '@/lib/api/evidence';
import { parsedPieces } from '@/lib/templates/trace';
import { messageTraceDigests, messageView, recordView, stripeTexts } from './pack-views';

/**
 * A notice's evidence pack from the record (issue 28 item 3): its entries already under a signed
 * head, each with its RFC 6962 inclusion path to that head, and the heads themselves. Entries not
 * signed yet are counted, not included: a pack holds only what it can prove.
 */
export async function buildEvidencePack(
  db: DbOrTx,
  { noticeKey, keysUrl, now = new Date() }: { noticeKey: string; keysUrl: string; now?: Date },
): Promise<EvidencePack | null> {
  const rows = await listNoticeEntries(db, { noticeKey });
  if (rows.length === 0) return null;
  const heads = new Map<number, { head: SignedHead; leaves: string[] }>();
  const entries: PackEntry[] = [];
  let unsignedEntries = 0;
  for (const row of rows) {
    if (row.seq === null || row.prevHash === null || row.entryHash === null) {
      unsignedEntries += 1;
      continue;
    }
    let covering = [...heads.values()].find(({ head }) => head.fromSeq <= (row.seq ?? 0) && head.toSeq >= (row.seq ?? 0));
    if (!covering) {
      const head = await signedHeadCovering(db, { seq: row.seq });
      if (!head) {
        unsignedEntries += 1;
        continue;
      }
      const leaves = (await listEntryHashes(db, { fromSeq: head.fromSeq, toSeq: head.toSeq })).map((leaf) => leaf.entryHash);
      covering = { head, leaves };
      heads.set(head.toSeq, covering);
    }
    const index = row.seq - covering.head.fromSeq;
    entries.push({
      seq: row.seq,
      prevHash: row.prevHash,
      entryHash: row.entryHash,
      noticeKey: row.noticeKey,
      kind: row.kind,
      recordedAt: row.recordedAt,
      body: row.body,
      proof: { headToSeq: covering.head.toSeq, index, size: covering.leaves.length, path: merklePath(covering.leaves, index) },
    });
  }
  const pieces = await packPieces(db, entries);
  const signedHeads: PackSignedHead[] = [...heads.values()].map(({ head }) => ({
    toSeq: head.toSeq,
    kid: head.kid,
    payload: head.payload,
    signature: head.signature,
    timestampToken: head.timestampToken,
  }));
  return {
    format: 'notice-ledger/evidence-pack',
    version: 1,
    exportedAt: now.toISOString(),
    noticeKey,
    keysUrl,
    record: recordView(entries),
    message: messageView(entries, pieces ?? {}),
    stripe: stripeTexts(entries, { noticeKey }),
    entries,
    ...(pieces ? { pieces } : {}),
    signedHeads,
    unsignedEntries,
  };
}

/**
 * The template pieces the sent entry's HTML trace names, as stored; none when it holds its HTML
 * whole. A stored row that is not an array of strings (edited) goes in as an empty one, which
 * matches no digest: `evidence verify` names it.
 */
async function packPieces(db: DbOrTx, entries: readonly PackEntry[]): Promise<Record<string, string[]> | null> {
  const digests = messageTraceDigests(entries);
  if (digests.length === 0) return null;
  const stored = await readEvidencePieces(db, { digests });
  const pieces: Record<string, string[]> = {};
  for (const [digest, texts] of stored) pieces[digest] = parsedPieces(texts) ?? [];
  return pieces;
}

/** The pack's signed-head time: when the newest head it relies on was signed (the lookup timeline shows it). */
export function packSignedAt(pack: EvidencePack): string | null {
  const times = pack.signedHeads
    .map((head) => {
      try {
        const signedAt = (JSON.parse(head.payload) as { signedAt?: unknown }).signedAt;
        return typeof signedAt === 'string' ? signedAt : null;
      } catch {
        return null;
      }
    })
    .filter((time): time is string => time !== null)
    .sort();
  return times.at(-1) ?? null;
}
