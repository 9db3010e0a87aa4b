import type { NewEvidenceEntry } from '@/db/queries/evidence-record';
import type { JobRow } from '@/db/schema/jobs';
import type { Logger } from '@/lib/log';
import { evidenceWriteFailures } from '@/lib/metrics/evidence';
import type { SmsOutcome } from '@/lib/sms/transport';
import type { TemplateVersion } from '@/lib/templates/versions';
import { entryOf, sendEntryBody, type EvidenceRecorder, type RenderedForEvidence } from './record';

export type { EvidenceRecorder } from './record';

/** What the send path saw of its own send, filled in by sendNotice as it goes. */
export type SendCapture = { rendered: RenderedForEvidence | null; manageUrl: string | null; sendStartedAt: Date; templateVersion?: TemplateVersion | null };

/**
 * The send's evidence entry, built before its result commit so that the commit writes it in the
 * same transaction (lib/jobs/handle-wakeup.ts commitOutcome): a worker killed after the commit
 * can no longer leave a sent notice without its entry. Null when the type keeps no record or the
 * notice never rendered (nothing to show). A body that cannot be built is counted and logged,
 * never thrown: the notice is out, and its result must still commit.
 */
export function sendEvidenceEntry({
  recorder,
  job,
  capture,
  outcome,
  claimCommittedAt,
  sendFinishedAt,
  piecesStored = false,
  log,
}: {
  recorder: EvidenceRecorder | undefined;
  job: JobRow;
  capture: SendCapture;
  outcome: SmsOutcome;
  claimCommittedAt: Date;
  sendFinishedAt: Date;
  /** The capture's HTML trace has its pieces stored (lib/evidence/pieces.ts). */
  piecesStored?: boolean;
  log: Logger;
}): NewEvidenceEntry | null {
  if (!recorder?.wants(job) || !capture.rendered || !capture.manageUrl) return null;
  const kind = outcome.kind === 'accepted' ? 'notice.sent' : 'notice.outcome';
  try {
    const body = sendEntryBody(recorder.context, {
      job,
      rendered: capture.rendered,
      manageUrl: capture.manageUrl,
      claimCommittedAt,
      sendStartedAt: capture.sendStartedAt,
      sendFinishedAt,
      providerMessageId: outcome.kind === 'accepted' ? outcome.providerMessageId : null,
      outcome: outcome.kind === 'accepted' ? 'accepted' : `${outcome.kind}:${outcome.errorClass}`,
      piecesStored,
    });
    return entryOf({ noticeKey: job.noticeKey, jobId: job.id, kind, body });
  } catch (error) {
    evidenceWriteFailures.inc({ kind });
    log.error({ err: error instanceof Error ? error.message : String(error) }, 'evidence entry not written');
    return null;
  }
}
