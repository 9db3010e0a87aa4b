import { spawn } from 'node:child_process';
import { collectRun, repoRoot, tsxLoader } from './run-script';

/**
 * What a piece of code loads, in a fresh node process (tsx, the repository root): `steps` are
 * ES module bodies run in order (imports by `@/` path), and after each one the packages named in
 * `packages` that are in the module cache are recorded. A package imported from an ES module is
 * in that cache too when it is CommonJS, as mjml and twilio are.
 */
export async function packagesLoadedAfter(steps: string[], packages: string[]): Promise<string[][]> {
  const body = [
    "import { createRequire } from 'node:module';",
    'const cache = createRequire(import.meta.url).cache;',
    `const watched = ${JSON.stringify(packages)};`,
    'const loaded = () => watched.filter((name) => Object.keys(cache).some((file) => file.includes(`/node_modules/${name}/`)));',
    'const seen = [];',
    ...steps.map((step) => `{ ${step} }\nseen.push(loaded());`),
    'console.log(JSON.stringify(seen));',
  ].join('\n');
  const child = spawn(process.execPath, ['--import', tsxLoader, '--input-type=module', '-e', body], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'test' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  const run = await collectRun(child);
  if (run.code !== 0) throw new Error(`the steps failed (exit ${String(run.code)}): ${run.stderr.slice(-1_000)}`);
  return JSON.parse(run.stdout.trim().split('\n').pop() ?? '[]') as string[][];
}
