import type { DbOrTx } from '@/db/client';
import { findEvidenceNoticeKey } from '@/db/queries/evidence-record';
import { refuse, type Result } from '@/lib/http/refusal';
import { buildEvidencePack } from './pack';
import type { EvidencePack } from '@/lib/api/evidence';

/** Where the public keys are published, on PUBLIC_BASE_URL. */
export const KEYS_PATH = '/.well-known/notice-ledger/keys.json';

export const keysUrlOf = (baseUrl: string) => `${baseUrl.replace(/\/+$/, '')}${KEYS_PATH}`;

/** The one export the console, the producer API and the CLI share: a notice by job id or notice key. */
export async function exportNoticeEvidence(db: DbOrTx, { id, baseUrl }: { id: string; baseUrl: string }): Promise<Result<EvidencePack>> {
  const noticeKey = await findEvidenceNoticeKey(db, { id });
  const pack = noticeKey ? await buildEvidencePack(db, { noticeKey, keysUrl: keysUrlOf(baseUrl) }) : null;
  if (!pack) return refuse('not_found', 'no evidence record for that notice (its type keeps none, or nothing was sent yet)');
  return { ok: true, data: pack };
}
