import type { DbOrTx } from '@/db/client';
import { listAppliedMigrations, pingDatabase } from '@/db/queries/health';

/**
 * Readiness checks shared by the console's /api/ready and the worker's /readyz. Each answers
 * within `timeoutMs`: a database that accepts the connection but never answers must fail the
 * check, not hang the prober (which would then time out without a reason).
 */

export type Check = { ok: true } | { ok: false; reason: string };

export const CHECK_TIMEOUT_MS = 2_000;

/** drizzle wraps a driver error as "Failed query: …" with the driver's words as its cause: those are the reason. */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? error.cause.message : error.message;
}

async function withDeadline<T>(work: Promise<T>, { timeoutMs, what }: { timeoutMs: number; what: string }): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export async function checkDatabase(db: DbOrTx, { timeoutMs = CHECK_TIMEOUT_MS }: { timeoutMs?: number } = {}): Promise<Check> {
  try {
    await withDeadline(pingDatabase(db), { timeoutMs, what: 'the database' });
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `database unreachable: ${messageOf(error)}` };
  }
}

export type JournalEntry = { tag: string; when: number };

export type MigrationState =
  { ok: true; applied: number; expected: number } | { ok: false; reason: string; applied: number; expected: number; missing: string[] };

/** Current = every migration in the journal this code ships with has been applied. */
export async function checkMigrations(
  db: DbOrTx,
  { journal, timeoutMs = CHECK_TIMEOUT_MS }: { journal: readonly JournalEntry[]; timeoutMs?: number },
): Promise<MigrationState> {
  const applied = new Set(await withDeadline(listAppliedMigrations(db), { timeoutMs, what: 'the database' }));
  const missing = journal.filter((entry) => !applied.has(entry.when)).map((entry) => entry.tag);
  const counts = { applied: applied.size, expected: journal.length };
  if (missing.length === 0) return { ok: true, ...counts };
  return {
    ok: false,
    reason: `migrations not current: ${missing.length} of ${journal.length} not applied (${missing.join(', ')}); a worker of this version applies them when it starts`,
    missing,
    ...counts,
  };
}
