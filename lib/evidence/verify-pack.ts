import { canonicalJson, entryHashOf, rootFromPath, sha256Hex } from './hash';
import { evidencePackSchema, type EvidencePack } from '@/lib/api/evidence';
import { messageProblem, messageView, recordView, stripeTexts } from './pack-views';
import { piecesDigestOf } from '@/lib/templates/trace';
import { verifySignature } from './signing-keys';
import { checkTimestampToken } from './timestamp';

/**
 * `ledger evidence verify`: a pack checked with no database, only the public keys. Every part
 * is checked and every failure named — the pack's form, each entry's hash and inclusion path, each
 * signed head's key, signature and time-stamp, and the record, message and Stripe texts derived
 * again from the verified entries.
 */

export type PublicKeys = { keys: { kid?: unknown; kty?: unknown; crv?: unknown; x?: unknown }[] };

export type PackVerdict = { ok: boolean; failures: string[]; checked: { entries: number; signedHeads: number; timestamps: number; tsa: string[] } };

export async function verifyEvidencePack(input: unknown, { publicKeys }: { publicKeys: PublicKeys }): Promise<PackVerdict> {
  const checked = { entries: 0, signedHeads: 0, timestamps: 0, tsa: [] as string[] };
  const parsed = evidencePackSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, failures: [`format: ${issue ? `${issue.path.join('.') || 'pack'}: ${issue.message}` : 'not an evidence pack'}`], checked };
  }
  const pack: EvidencePack = parsed.data;
  const failures: string[] = [];

  const heads = new Map<number, { merkleRoot: string; fromSeq: number; toSeq: number }>();
  for (const head of pack.signedHeads) {
    const name = `signed head ${String(head.toSeq)}`;
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(head.payload) as Record<string, unknown>;
    } catch {
      failures.push(`${name}: its payload is not JSON`);
      continue;
    }
    if (payload.kid !== head.kid || payload.toSeq !== head.toSeq || typeof payload.merkleRoot !== 'string' || typeof payload.fromSeq !== 'number') {
      failures.push(`${name}: its payload does not describe this head`);
      continue;
    }
    if (canonicalJson(payload) !== head.payload) failures.push(`${name}: its payload is not in canonical form`);
    const jwk = publicKeys.keys.find((key) => key.kid === head.kid);
    if (!jwk) failures.push(`${name}: key ${head.kid} is not among the public keys`);
    else if (!verifySignature({ jwk, payload: head.payload, signature: head.signature }))
      failures.push(`${name}: signature does not verify with key ${head.kid}`);
    else checked.signedHeads += 1;
    if (head.timestampToken) {
      const stamp = await checkTimestampToken({ token: head.timestampToken, data: Buffer.from(head.payload, 'utf8') });
      if (!stamp.ok) failures.push(`${name}: timestamp token: ${stamp.problem}`);
      else {
        checked.timestamps += 1;
        if (!checked.tsa.includes(stamp.tsa)) checked.tsa.push(stamp.tsa);
      }
    }
    heads.set(head.toSeq, { merkleRoot: payload.merkleRoot, fromSeq: payload.fromSeq, toSeq: head.toSeq });
  }

  for (const entry of pack.entries) {
    const name = `chain entry ${String(entry.seq)} (${entry.kind})`;
    if (entry.noticeKey !== pack.noticeKey) failures.push(`${name}: it is about another notice`);
    const hash = entryHashOf({
      seq: entry.seq,
      prevHash: entry.prevHash,
      noticeKey: entry.noticeKey,
      kind: entry.kind,
      recordedAt: entry.recordedAt,
      bodyHash: sha256Hex(entry.body),
    });
    if (hash !== entry.entryHash) {
      failures.push(`${name}: its content does not match its hash`);
      continue;
    }
    const head = heads.get(entry.proof.headToSeq);
    if (!head) {
      failures.push(`${name}: its signed head ${String(entry.proof.headToSeq)} is not in the pack`);
      continue;
    }
    const size = head.toSeq - head.fromSeq + 1;
    const root = rootFromPath({ leaf: entry.entryHash, index: entry.seq - head.fromSeq, size, path: entry.proof.path });
    if (root !== head.merkleRoot || entry.proof.size !== size || entry.proof.index !== entry.seq - head.fromSeq) {
      failures.push(`${name}: its inclusion path does not lead to signed head ${String(head.toSeq)}`);
      continue;
    }
    checked.entries += 1;
  }
  if (pack.entries.length === 0) failures.push('entries: the pack holds no signed entry');

  if (canonicalJson(recordView(pack.entries)) !== canonicalJson(pack.record)) failures.push('record: it differs from what the signed entries say');
  const pieces = pack.pieces ?? {};
  for (const [digest, texts] of Object.entries(pieces))
    if (piecesDigestOf(texts) !== digest)
      failures.push(`template pieces ${digest.slice(0, 12)}…: the template's static text differs from what the signed entry names`);
  const problem = messageProblem(pack.entries, pieces);
  if (problem !== null) failures.push(`message: its HTML cannot be joined from the signed entry's trace: ${problem}`);
  if (canonicalJson(messageView(pack.entries, pieces)) !== canonicalJson(pack.message))
    failures.push('message: the rendered message differs from the signed entry');
  if (canonicalJson(stripeTexts(pack.entries, { noticeKey: pack.noticeKey })) !== canonicalJson(pack.stripe))
    failures.push('stripe: the texts differ from what the signed entries say');
  return { ok: failures.length === 0, failures, checked };
}
