import type { CrashPoint } from '@/lib/jobs/handle-wakeup';
import { spawnWorker, type WorkerProcess } from '@/testing/worker-process';
import type { Prng } from './prng';

/**
 * Several real worker processes (worker/main.ts, spawned like the crash tests do), each in a
 * slot that restarts it whenever it dies. Chaos SIGKILLs a random live worker at a random
 * moment; some restarts carry WORKER_CRASH_AT so the new process kills itself at a precise
 * point of its first send (after the claim, after the hand-over, after the commit) — the
 * windows a random kill hits only by luck.
 */

export type PoolStats = { kills: number; crashPointKills: Record<string, number>; restarts: number; unexpectedExits: string[] };

export type WorkerPool = {
  start: () => Promise<void>;
  /** Starts killing at random intervals in [minMs, maxMs] until `stopChaos`. */
  startChaos: (params: { prng: Prng; minMs: number; maxMs: number; crashPointChance: number }) => void;
  stopChaos: () => Promise<void>;
  /** Waits until every slot has a ready worker (none restarting). */
  allReady: () => Promise<void>;
  stats: () => PoolStats;
  stop: () => Promise<void>;
};

type Slot = { index: number; worker: WorkerProcess | null; killedByUs: boolean; crashPoint: CrashPoint | null; restarting: Promise<void> | null };

const crashPoints: readonly CrashPoint[] = ['after_claim', 'after_send', 'after_commit'];

export function createWorkerPool({ size, env, log }: { size: number; env: Record<string, string>; log: (line: string) => void }): WorkerPool {
  const slots: Slot[] = Array.from({ length: size }, (_, index) => ({ index, worker: null, killedByUs: false, crashPoint: null, restarting: null }));
  const stats: PoolStats = { kills: 0, crashPointKills: {}, restarts: 0, unexpectedExits: [] };
  let stopping = false;
  let chaos: { stop: () => void; done: Promise<void> } | null = null;
  let restartPrng: Prng | null = null;
  let crashPointChance = 0;

  const launch = async (slot: Slot): Promise<void> => {
    const crashPoint = restartPrng && restartPrng.chance(crashPointChance) ? restartPrng.pick(crashPoints) : null;
    const worker = spawnWorker(crashPoint ? { ...env, WORKER_CRASH_AT: crashPoint } : env);
    slot.worker = worker;
    slot.killedByUs = false;
    slot.crashPoint = crashPoint;
    void worker.exited.then(({ code, signal }) => {
      if (slot.worker !== worker) return;
      if (signal === 'SIGKILL' && !slot.killedByUs && slot.crashPoint) {
        stats.crashPointKills[slot.crashPoint] = (stats.crashPointKills[slot.crashPoint] ?? 0) + 1;
      } else if (!(signal === 'SIGKILL' && slot.killedByUs) && !stopping) {
        const tail = worker
          .logs()
          .slice(-3)
          .map((line) => String(line.msg))
          .join(' | ');
        stats.unexpectedExits.push(
          `worker slot ${slot.index} exited (code ${code}, signal ${signal}): ${tail}${worker.stderr() ? ` | stderr: ${worker.stderr().trim().slice(-500)}` : ''}`,
        );
      }
      if (stopping) return;
      stats.restarts += 1;
      const restarting: Promise<void> = launch(slot).finally(() => {
        // A newer restart (this one died while starting) owns the slot now.
        if (slot.restarting === restarting) slot.restarting = null;
      });
      slot.restarting = restarting;
    });
    try {
      await worker.ready;
    } catch (error) {
      // Died before ready (killed while starting): the exit handler above restarts it.
      if (!stopping) log(`worker slot ${slot.index} died while starting: ${error instanceof Error ? error.message.slice(0, 200) : String(error)}`);
    }
  };

  const killOne = (prng: Prng) => {
    const live = slots.filter((slot) => slot.worker && slot.worker.child.exitCode === null && slot.worker.child.signalCode === null && !slot.restarting);
    if (live.length === 0) return;
    const slot = prng.pick(live);
    slot.killedByUs = true;
    stats.kills += 1;
    slot.worker?.child.kill('SIGKILL');
  };

  return {
    start: async () => {
      await Promise.all(slots.map((slot) => launch(slot)));
    },
    startChaos: ({ prng, minMs, maxMs, crashPointChance: chance }) => {
      restartPrng = prng.fork('restarts');
      crashPointChance = chance;
      let timer: NodeJS.Timeout | null = null;
      let wake: (() => void) | null = null;
      let active = true;
      const done = (async () => {
        while (active) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, prng.int(minMs, maxMs));
          });
          if (active) killOne(prng);
        }
      })();
      chaos = {
        stop: () => {
          active = false;
          if (timer) clearTimeout(timer);
          wake?.();
        },
        done,
      };
    },
    stopChaos: async () => {
      chaos?.stop();
      await chaos?.done;
      chaos = null;
      crashPointChance = 0;
    },
    allReady: async () => {
      for (;;) {
        const pending = slots.map((slot) => slot.restarting).filter((restart): restart is Promise<void> => restart !== null);
        if (pending.length === 0 && slots.every((slot) => slot.worker && slot.worker.child.exitCode === null && slot.worker.child.signalCode === null)) {
          await Promise.all(slots.map((slot) => slot.worker?.ready));
          return;
        }
        await Promise.all(pending);
        await new Promise<void>((resolve) => setTimeout(resolve, 50));
      }
    },
    stats: () => ({ ...stats, crashPointKills: { ...stats.crashPointKills }, unexpectedExits: [...stats.unexpectedExits] }),
    stop: async () => {
      stopping = true;
      await chaos?.done;
      await Promise.all(slots.map((slot) => slot.restarting));
      const results = await Promise.all(
        slots.map(async (slot) => {
          const worker = slot.worker;
          if (!worker) return null;
          // SIGTERM before main.ts installed its handler would just terminate the process.
          await worker.ready.catch(() => undefined);
          const timer = setTimeout(() => worker.child.kill('SIGKILL'), 20_000);
          const exit = await worker.stop();
          clearTimeout(timer);
          return { slot: slot.index, exit };
        }),
      );
      for (const result of results) {
        const slot = slots[result?.slot ?? -1];
        const killed = result?.exit.signal === 'SIGKILL' && (slot?.killedByUs || slot?.crashPoint);
        if (result && (result.exit.code !== 0 || result.exit.signal !== null) && !killed) {
          stats.unexpectedExits.push(`worker slot ${result.slot} did not stop cleanly (code ${result.exit.code}, signal ${result.exit.signal})`);
        }
      }
    },
  };
}
