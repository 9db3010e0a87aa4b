import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { workerNodeArgs } from './worker-bundle';

/**
 * A real worker process, run as production runs it (the bundle of worker/main.ts on plain Node,
 * testing/worker-bundle.ts), for tests that kill, restart and scrape it. stdout is pino JSON; `ready` resolves from the "worker ready" line.
 */
export type WorkerProcess = {
  child: ChildProcess;
  ready: Promise<{ workerId: string; metricsPort: number }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  logs: () => Array<Record<string, unknown>>;
  /** The last 4 KB the process wrote to stderr (start-up failures land there, not in the JSON log). */
  stderr: () => string;
  scrape: () => Promise<string>;
  /** SIGTERM and wait for a clean exit. */
  stop: () => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

const root = path.resolve(import.meta.dirname, '..');

/**
 * A spawned worker is ready when it logs `worker ready`, at info: with a higher LOG_LEVEL it would
 * never be, and whatever waits for it would wait for ever. Refused before it starts instead.
 */
export function assertReadyIsLogged(logLevel: string | undefined): void {
  if (logLevel !== undefined && !['trace', 'debug', 'info'].includes(logLevel))
    throw new Error(`LOG_LEVEL=${logLevel}: a spawned worker is ready when it logs "worker ready" at info, so its level must be info or lower`);
}

export function spawnWorker(env: Record<string, string>, { nodeArgs = [] }: { nodeArgs?: string[] } = {}): WorkerProcess {
  assertReadyIsLogged(env.LOG_LEVEL);
  // node itself, never npm or a wrapper: a SIGKILL must reach the worker, not a parent that leaves it orphaned.
  const child = spawn(process.execPath, [...nodeArgs, ...workerNodeArgs()], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      NODE_ENV: 'test',
      NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '',
      LOG_LEVEL: 'info',
      WORKER_METRICS_PORT: '0',
      SWEEP_EVERY: '1h',
      // The shipped configuration sends payment recovery by SMS, so a worker needs Twilio settings
      // to start; these point at a closed port (a send is refused as connect_failed). SMS tests
      // pass the local peer's (testing/twilio-peer.ts).
      TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: 'not-a-real-twilio-auth-token',
      TWILIO_FROM: '+15005550006',
      TWILIO_API_BASE_URL: 'http://127.0.0.1:9',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const ready = new Promise<{ workerId: string; metricsPort: number }>((resolve, reject) => {
    const reader = createInterface({ input: child.stdout ?? process.stdin });
    reader.on('line', (line) => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      lines.push(parsed);
      if (parsed.msg === 'worker ready') resolve({ workerId: String(parsed.workerId), metricsPort: Number(parsed.metricsPort) });
    });
    void exited.then(({ code, signal }) => reject(new Error(`worker exited before ready (code ${code}, signal ${signal}): ${stderr}`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    ready,
    exited,
    logs: () => [...lines],
    stderr: () => stderr,
    scrape: async () => {
      const { metricsPort } = await ready;
      const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      if (!response.ok) throw new Error(`metrics answered ${response.status}`);
      return response.text();
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The value of one sample in Prometheus text, summed over series matching `labels`. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...(match[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) total += Number(match[4]);
  }
  return total;
}
