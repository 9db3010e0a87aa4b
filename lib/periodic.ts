/**
 * A background chore run every `every` ms in one worker: never two passes at once, errors
 * reported and never thrown (a failed sweep must not take the worker down), and `stop()`
 * waits for the pass in progress. `isStopped` lets a long pass end early.
 */
export type PeriodicHandle = { stop: () => Promise<void> };

export function startPeriodic({
  every,
  runAtStart = false,
  run,
  onError,
}: {
  every: number;
  runAtStart?: boolean;
  run: (isStopped: () => boolean) => Promise<void>;
  onError: (error: unknown) => void;
}): PeriodicHandle {
  let stopped = false;
  let running: Promise<void> | null = null;
  const tick = () => {
    if (stopped || running) return;
    running = run(() => stopped)
      .catch(onError)
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, every);
  if (runAtStart) tick();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
