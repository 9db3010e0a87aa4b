import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** A script run as a person or a provisioning job runs it: a child process, its output, its exit code. */

export type ScriptRun = { code: number | null; stdout: string; stderr: string };

export const repoRoot = path.resolve(import.meta.dirname, '..');
export const tsxLoader = pathToFileURL(path.join(repoRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

/** The environment of a script run against one test database, nothing inherited but PATH and HOME. */
export function scriptEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '',
    // The suite's lowered scrypt cost (vitest.config.ts), so a script hashes as fast as the test itself.
    ...(process.env.PASSWORD_HASH_N ? { PASSWORD_HASH_N: process.env.PASSWORD_HASH_N } : {}),
  };
}

/** Everything the child prints until it exits; SIGKILLed after `timeoutMs` so a hung script fails its test. */
export function collectRun(
  child: ChildProcessWithoutNullStreams,
  { onStdout, timeoutMs = 60_000 }: { onStdout?: (stdout: string) => void; timeoutMs?: number } = {},
): Promise<ScriptRun> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    onStdout?.(stdout);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const deadline = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(deadline);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `node --import tsx <script> …args` from the repository root; stdin carries `stdin` (default nothing) and is closed, as in a pipeline. */
export function runScript({ script, args, env, stdin = '' }: { script: string; args: string[]; env: NodeJS.ProcessEnv; stdin?: string }): Promise<ScriptRun> {
  const child = spawn(process.execPath, ['--import', tsxLoader, script, ...args], { cwd: repoRoot, env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(stdin);
  return collectRun(child);
}
