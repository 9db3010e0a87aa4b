import type { Db } from '@/db/client';
import { deleteEvidenceEntriesBefore, deleteEvidencePiecesUnusedSince } from '@/db/queries/evidence-record';
import type { Logger } from '@/lib/log';
import { startPeriodic, type PeriodicHandle } from '@/lib/periodic';
import { chainAllPending } from './chain';
import { signChainHead } from './sign';
import type { EvidenceKeyRing } from './signing-keys';
import { runEvidenceVerification } from './verify-chain';

/**
 * The evidence record's background passes, in every worker (each is safe on many at once: the
 * chainer takes the head row's lock, signing an advisory lock): chain what was appended and sign
 * the head every EVIDENCE_SIGN_EVERY, verify the whole chain every EVIDENCE_VERIFY_EVERY, and
 * drop entries older than RETENTION_EVIDENCE_RECORD hourly (lib/retention.ts never touches them).
 */
export function startEvidenceMaintenance({
  db,
  keys,
  tsaUrl,
  signEveryMs,
  verifyEveryMs,
  retentionMs,
  logger,
}: {
  db: Db;
  keys: EvidenceKeyRing;
  tsaUrl: string | null;
  signEveryMs: number;
  verifyEveryMs: number;
  retentionMs: number;
  logger: Logger;
}): PeriodicHandle {
  const onError = (what: string) => (error: unknown) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, `evidence ${what} failed`);
  const signer = startPeriodic({
    every: signEveryMs,
    run: async () => {
      await chainAllPending(db);
      await signChainHead({ db, keys, tsaUrl, onTimestampError: onError('time-stamp') });
    },
    onError: onError('signing'),
  });
  const verifier = startPeriodic({
    every: verifyEveryMs,
    run: async () => {
      const result = await runEvidenceVerification({ db, keys });
      if (result.problems.length > 0) logger.error({ problems: result.problems.slice(0, 10), count: result.problems.length }, 'evidence chain does not hold');
      else logger.info({ entries: result.entries, signedHeads: result.signedHeads }, 'evidence chain verified');
    },
    onError: onError('verification'),
  });
  const pruner = startPeriodic({
    every: 3_600_000,
    run: async (isStopped) => {
      const before = new Date(Date.now() - retentionMs);
      while (!isStopped() && (await deleteEvidenceEntriesBefore(db, { before, limit: 1_000 })) === 1_000);
      // Template pieces a day past it: a process says it still uses them at least every 6 hours (lib/evidence/pieces.ts), so no entry left names them.
      if (!isStopped()) await deleteEvidencePiecesUnusedSince(db, { before: new Date(before.getTime() - 86_400_000) });
    },
    onError: onError('retention'),
  });
  return {
    stop: async () => {
      await Promise.all([signer.stop(), verifier.stop(), pruner.stop()]);
    },
  };
}
