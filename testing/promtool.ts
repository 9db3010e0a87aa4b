import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/**
 * Prometheus's own checker, from Debian's `prometheus` package (.ci/run installs it). Tests
 * that need it are named as not run where it is absent: `it.skipIf(!promtool)(…)`.
 */
function findPromtool(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'promtool');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

export const promtool = findPromtool();

export const PROMTOOL_MISSING = 'needs promtool (apt-get install -y prometheus): not run without it';

export type PromtoolRun = { code: number | null; output: string };

/** `promtool <args>` with `input` on stdin; its exit code and everything it printed. */
export function runPromtool(args: string[], { input, cwd }: { input?: string; cwd?: string } = {}): PromtoolRun {
  if (!promtool) throw new Error(PROMTOOL_MISSING);
  const result = spawnSync(promtool, args, { input, cwd, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}
