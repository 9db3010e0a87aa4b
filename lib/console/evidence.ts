import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import type { EvidencePack } from '@/lib/api/evidence';
import { exportNoticeEvidence } from '@/lib/evidence/export';
import type { Result } from '@/lib/http/refusal';

/** Support's export of a notice's evidence pack: the shared export, and an audit row saying who took it. */
export async function exportEvidenceForSupport(
  db: DbOrTx,
  { id, actor, baseUrl }: { id: string; actor: string; baseUrl: string },
): Promise<Result<EvidencePack>> {
  const pack = await exportNoticeEvidence(db, { id, baseUrl });
  if (!pack.ok) return pack;
  await insertAuditEntries(db, {
    entries: [
      {
        actor,
        action: 'evidence.export',
        targetType: 'notice',
        targetId: pack.data.noticeKey,
        reason: 'evidence pack exported from the lookup',
        after: { entries: pack.data.entries.length, signedHeads: pack.data.signedHeads.length, unsignedEntries: pack.data.unsignedEntries },
      },
    ],
  });
  return pack;
}
