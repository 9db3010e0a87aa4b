import type { DbOrTx } from '@/db/client';
import type { Logger } from '@/lib/log';
import { createLogger } from '@/lib/log';
import { evidenceWriteFailures } from '@/lib/metrics/evidence';
import { recordNoticeEvidence, type EvidenceKind } from './record';

const log: Logger = createLogger('evidence');

const kindOfPath = (path: string): EvidenceKind =>
  path.endsWith('/cancel') ? 'recipient.cancel_request' : path.endsWith('/preferences') ? 'recipient.preference' : 'recipient.page_view';

/**
 * What the recipient did on the notice's page — viewed it, asked to cancel, changed a preference —
 * with the time, the client address (null unless TRUSTED_PROXY_HOPS names the proxies to believe)
 * and the user agent, for Stripe's `access_activity_log` and Visa's "when and how the customer
 * cancelled". Never blocks the answer: a failure is counted and logged.
 */
export async function recordRecipientAction(
  db: DbOrTx,
  {
    notice,
    path,
    answer,
    address,
    userAgent,
  }: {
    notice: { noticeKey: string; id: string };
    path: string;
    answer: { kind: string; data?: unknown; location?: string };
    address: string | null;
    userAgent: string | null;
  },
): Promise<void> {
  const kind = kindOfPath(path);
  try {
    await recordNoticeEvidence(db, {
      noticeKey: notice.noticeKey,
      jobId: notice.id,
      kind,
      body: {
        at: new Date().toISOString(),
        action: path,
        clientAddress: address,
        userAgent: userAgent?.slice(0, 512) ?? null,
        ...(answer.kind === 'done' ? { result: answer.data ?? null, ...(answer.location ? { redirectedTo: answer.location } : {}) } : {}),
      },
    });
  } catch (error) {
    evidenceWriteFailures.inc({ kind });
    log.error({ err: error instanceof Error ? error.message : String(error), noticeKey: notice.noticeKey }, 'evidence entry not written');
  }
}
