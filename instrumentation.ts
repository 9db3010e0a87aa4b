/**
 * Runs once when the console's server starts (Next's instrumentation hook). A replay run
 * lives in the console process that started it; one interrupted by a restart is still
 * `running` in the database, so the new process picks it up. The runner is resumable:
 * items already published are marked, and a duplicate wake-up is absorbed by the ledger.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs' || !process.env.DATABASE_URL) return;
  const [{ getDb }, { resumeRunningReplays }, { createLogger }] = await Promise.all([
    import('./db/client'),
    import('./lib/replay/background'),
    import('./lib/log'),
  ]);
  const log = createLogger('console');
  try {
    const resumed = await resumeRunningReplays(getDb());
    if (resumed > 0) log.info({ resumed }, 'resumed replay runs interrupted by a restart');
  } catch (error) {
    log.error({ err: error instanceof Error ? error.message : String(error) }, 'could not resume replay runs');
  }
}
