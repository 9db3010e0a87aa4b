import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { insertSignedHead, latestSignedHead, listEntryHashes, readChainHead } from '@/db/queries/evidence-record';
import { canonicalJson, GENESIS_HASH, merkleRoot } from './hash';
import { signPayload, type EvidenceKeyRing } from './signing-keys';

/** A signing pass takes this advisory lock (transaction-scoped), so two workers never sign overlapping ranges. */
const SIGNING_LOCK = 0x6e6c6576; // "nlev"

/** What a signed head's signature covers (the `payload`, canonical JSON). */
export type SignedHeadPayload = {
  v: 1;
  type: 'notice-ledger/evidence-head';
  kid: string;
  fromSeq: number;
  toSeq: number;
  headHash: string;
  merkleRoot: string;
  prevHeadHash: string;
  signedAt: string;
};

/**
 * Signs the chain from the last signed head to the current one (none new: nothing to sign), with
 * the first key of EVIDENCE_SIGNING_KEYS, and time-stamps the signed payload when TSA_URL is set.
 * A TSA that fails is logged by the caller and the head is signed without its token (the
 * signature stands on its own; the next head gets one).
 */
export async function signChainHead({
  db,
  keys,
  tsaUrl,
  now = () => new Date(),
  onTimestampError,
}: {
  db: Db;
  keys: EvidenceKeyRing;
  tsaUrl?: string | null;
  now?: () => Date;
  onTimestampError?: (error: unknown) => void;
}): Promise<{ signed: boolean; toSeq: number }> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SIGNING_LOCK})`);
    const head = await readChainHead(tx);
    const last = await latestSignedHead(tx);
    const fromSeq = (last?.toSeq ?? 0) + 1;
    if (!head || head.seq < fromSeq) return { signed: false, toSeq: last?.toSeq ?? 0 };
    const leaves = await listEntryHashes(tx, { fromSeq, toSeq: head.seq });
    if (leaves.length !== head.seq - fromSeq + 1) throw new Error(`evidence chain has a gap between ${String(fromSeq)} and ${String(head.seq)}`);
    const signedAt = now();
    const body: SignedHeadPayload = {
      v: 1,
      type: 'notice-ledger/evidence-head',
      kid: keys.signing.kid,
      fromSeq,
      toSeq: head.seq,
      headHash: head.hash,
      merkleRoot: merkleRoot(leaves.map((leaf) => leaf.entryHash)),
      prevHeadHash: last?.headHash ?? GENESIS_HASH,
      signedAt: signedAt.toISOString(),
    };
    const payload = canonicalJson(body);
    const { kid, signature } = signPayload(keys, payload);
    let timestampToken: string | null = null;
    if (tsaUrl) {
      try {
        // Loaded only with TSA_URL: its ASN.1 libraries are ~13 MB the worker otherwise never needs.
        const { requestTimestamp } = await import('./timestamp');
        timestampToken = await requestTimestamp({ url: tsaUrl, data: Buffer.from(payload, 'utf8') });
      } catch (error) {
        onTimestampError?.(error);
      }
    }
    await insertSignedHead(tx, {
      fromSeq,
      toSeq: head.seq,
      headHash: head.hash,
      merkleRoot: body.merkleRoot,
      signedAt,
      kid,
      payload,
      signature,
      timestampToken,
    });
    return { signed: true, toSeq: head.seq };
  });
}
