import type { Db } from '@/db/client';
import { listChainedAfter, listEntryHashes, listEvidencePieces, listSignedHeadsAfter, readChainHead } from '@/db/queries/evidence-record';
import { parsedPieces, piecesDigestOf } from '@/lib/templates/trace';
import { evidenceChainBroken, evidenceChainVerifiedAt, evidenceEntriesVerified } from '@/lib/metrics/evidence';
import { entryHashOf, merkleRoot, sha256Hex } from './hash';
import { publicJwkOf, verifySignature, type EvidenceKeyRing } from './signing-keys';

/**
 * The verification pass (EVIDENCE_VERIFY_EVERY, nightly): every chained entry's body and entry
 * hash recomputed and linked to the one before, the head row matching the last entry, and every
 * signed head's signature, Merkle root and head hash checked against the rows, and every stored
 * set of template pieces (what a send's entry names for its HTML) against its digest. A row edited after
 * it was chained — by anyone with database access — is a problem here, counted in
 * `notice_ledger_evidence_chain_broken` (alert NoticeLedgerEvidenceChainBroken). Retention may
 * have removed the oldest entries: the walk starts at the first one left, and a signed head whose
 * range is no longer whole is checked by its signature only.
 */

export type ChainVerification = { entries: number; signedHeads: number; problems: string[] };

const MAX_PROBLEMS = 100;

export async function verifyEvidenceChain({ db, keys, batch = 5_000 }: { db: Db; keys: EvidenceKeyRing; batch?: number }): Promise<ChainVerification> {
  const problems: string[] = [];
  const note = (problem: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(problem);
  };
  let entries = 0;
  let previous: { seq: number; hash: string } | null = null;
  for (;;) {
    const rows = await listChainedAfter(db, { afterSeq: previous?.seq ?? 0, limit: batch });
    for (const row of rows) {
      entries += 1;
      if (previous && row.seq !== previous.seq + 1) note(`entry seq ${String(previous.seq + 1)}…${String(row.seq - 1)} is missing`);
      if (previous && row.prevHash !== previous.hash) note(`entry ${String(row.seq)}: prev_hash is not entry ${String(previous.seq)}'s hash`);
      const recomputed = entryHashOf({
        seq: row.seq,
        prevHash: row.prevHash,
        noticeKey: row.noticeKey,
        kind: row.kind,
        recordedAt: row.recordedAt,
        bodyHash: sha256Hex(row.body),
      });
      if (recomputed !== row.entryHash)
        note(`entry ${String(row.seq)} (${row.kind}, notice ${row.noticeKey.slice(0, 12)}…): its content does not match its hash`);
      previous = { seq: row.seq, hash: row.entryHash };
    }
    if (rows.length < batch) break;
  }
  const head = await readChainHead(db);
  if (head && previous && (head.seq !== previous.seq || head.hash !== previous.hash))
    note(`the chain head (${String(head.seq)}) is not the last entry (${String(previous.seq)})`);

  let signedHeads = 0;
  let afterToSeq = 0;
  for (;;) {
    const heads = await listSignedHeadsAfter(db, { afterToSeq, limit: 500 });
    for (const signed of heads) {
      signedHeads += 1;
      afterToSeq = signed.toSeq;
      const key = keys.byKid.get(signed.kid);
      if (!key) note(`signed head ${String(signed.toSeq)}: key ${signed.kid} is not in EVIDENCE_SIGNING_KEYS`);
      else if (!verifySignature({ jwk: publicJwkOf(key), payload: signed.payload, signature: signed.signature }))
        note(`signed head ${String(signed.toSeq)}: the signature does not verify`);
      let payload: Record<string, unknown> = {};
      try {
        payload = JSON.parse(signed.payload) as Record<string, unknown>;
      } catch {
        note(`signed head ${String(signed.toSeq)}: its payload is not JSON`);
      }
      if (
        payload.merkleRoot !== signed.merkleRoot ||
        payload.headHash !== signed.headHash ||
        payload.toSeq !== signed.toSeq ||
        payload.fromSeq !== signed.fromSeq
      ) {
        note(`signed head ${String(signed.toSeq)}: its columns differ from what was signed`);
      }
      const leaves = await listEntryHashes(db, { fromSeq: signed.fromSeq, toSeq: signed.toSeq });
      if (leaves.length === signed.toSeq - signed.fromSeq + 1) {
        if (merkleRoot(leaves.map((leaf) => leaf.entryHash)) !== payload.merkleRoot)
          note(`signed head ${String(signed.toSeq)}: entries ${String(signed.fromSeq)}–${String(signed.toSeq)} are not the ones signed`);
        if (leaves.at(-1)?.entryHash !== payload.headHash) note(`signed head ${String(signed.toSeq)}: the head entry is not the one signed`);
      }
    }
    if (heads.length < 500) break;
  }
  // The template pieces entries name instead of their HTML (lib/templates/trace.ts): each row's text is what its digest is of.
  let afterDigest = '';
  for (;;) {
    const rows = await listEvidencePieces(db, { afterDigest, limit: 500 });
    for (const row of rows) {
      afterDigest = row.digest;
      const texts = parsedPieces(row.texts);
      if (texts === null || piecesDigestOf(texts) !== row.digest) note(`template pieces ${row.digest.slice(0, 12)}…: their text does not match their digest`);
    }
    if (rows.length < 500) break;
  }
  return { entries, signedHeads, problems };
}

/** The pass as the worker runs it: the figures into the registry. */
export async function runEvidenceVerification({ db, keys }: { db: Db; keys: EvidenceKeyRing }): Promise<ChainVerification> {
  const result = await verifyEvidenceChain({ db, keys });
  evidenceChainBroken.set(result.problems.length);
  evidenceEntriesVerified.set(result.entries);
  evidenceChainVerifiedAt.set(Date.now() / 1000);
  return result;
}
