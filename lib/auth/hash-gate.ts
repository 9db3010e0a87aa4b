import { passwordHashSettings } from '@/lib/config';

/** Thrown when the gate's queue is full: the caller answers "busy" without computing anything. */
export class PasswordHashingBusy extends Error {
  constructor() {
    super('too many password checks in progress');
    this.name = 'PasswordHashingBusy';
  }
}

export type HashGate = {
  /** Runs `work` once one of `concurrency` slots is free; throws PasswordHashingBusy when `queue` others already wait. */
  run: <T>(work: () => Promise<T>) => Promise<T>;
  /** Running and waiting now (for tests and the busy decision). */
  load: () => { running: number; waiting: number };
};

/**
 * A process-wide bound on concurrent password hashing. An anonymous sign-in costs a 128 MiB,
 * ~0.3 s scrypt whatever the email, so without a bound a flood of them is a memory and CPU
 * exhaustion attack; with it, the flood waits in a short queue and the rest is refused at once.
 */
export function createHashGate({ concurrency, queue }: { concurrency: number; queue: number }): HashGate {
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  };
  return {
    run: async (work) => {
      if (running >= concurrency) {
        if (waiting.length >= queue) throw new PasswordHashingBusy();
        // The slot is handed over by release(): `running` stays counted for the waiter.
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else {
        running += 1;
      }
      try {
        return await work();
      } finally {
        release();
      }
    },
    load: () => ({ running, waiting: waiting.length }),
  };
}

let processGate: HashGate | undefined;

export function passwordHashGate(): HashGate {
  if (!processGate) {
    const { PASSWORD_HASH_CONCURRENCY, PASSWORD_HASH_QUEUE } = passwordHashSettings();
    processGate = createHashGate({ concurrency: PASSWORD_HASH_CONCURRENCY, queue: PASSWORD_HASH_QUEUE });
  }
  return processGate;
}
