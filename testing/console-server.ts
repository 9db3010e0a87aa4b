import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from '@/db/embedded';

/**
 * The console as it runs in production: `next start` over the build in `.next/` (made fresh by
 * scripts/production-build.ts), on a free port of 127.0.0.1, with only the environment given
 * here. In its own process group, so stopping it also stops anything `next start` spawned.
 */
export type ConsoleServer = {
  url: string;
  /** The last lines the server wrote (pino JSON and Next's own), for failure messages. */
  logTail: () => string;
  /** Set once the server has exited, for whatever reason. */
  exit: () => { code: number | null; signal: NodeJS.Signals | null } | null;
  stop: () => Promise<void>;
  /** SIGKILL (the whole group): the console gone mid-request, as a deploy that does not wait would leave it. */
  kill: () => Promise<void>;
};

const root = path.resolve(import.meta.dirname, '..');
const READY_TIMEOUT_MS = 60_000;

export async function startConsoleServer({ env }: { env: Record<string, string> }): Promise<ConsoleServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'start', '--port', String(port), '--hostname', '127.0.0.1'],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        NODE_ENV: 'production',
        NEXT_TELEMETRY_DISABLED: '1',
        NEXTAUTH_URL: url,
        // Production requires each enabled webhook's credential: a caller names the ones it configures.
        WEBHOOK_PROVIDERS: 'none',
        ...env,
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-6_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve();
    }),
  );
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // the group is already gone
    }
  };
  // A detached server would outlive a caller that crashes: take it down on the way out.
  const killOnExit = () => signalGroup('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    if (!exit) {
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    process.removeListener('exit', killOnExit);
  };

  const kill = async () => {
    if (!exit) {
      signalGroup('SIGKILL');
      await exited;
    }
    process.removeListener('exit', killOnExit);
  };

  // Any HTTP answer means it listens; /signin is the page every deployment serves.
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exit) throw new Error(`next start exited before answering (${JSON.stringify(exit)}):\n${output}`);
    const answered = await fetch(`${url}/signin`, { signal: AbortSignal.timeout(5_000) }).then(
      async (response) => {
        await response.arrayBuffer();
        return true;
      },
      () => false,
    );
    if (answered) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`next start did not answer on ${url} within ${READY_TIMEOUT_MS / 1000} s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url, logTail: () => output, exit: () => exit, stop, kill };
}
