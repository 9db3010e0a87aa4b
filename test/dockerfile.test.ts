import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { validate, ValidationSeverity, type ValidatorSettings } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';

/**
 * The image (Dockerfile): it lints clean under dockerfile-utils (the validator of the Dockerfile
 * language server, every rule an error), and its final stage is what the issue asks: production
 * dependencies only, a non-root user, a healthcheck on the documented endpoints, the console by
 * default and the worker by command, with every file those processes import. No Docker engine
 * runs here, so the image itself is not built by this test.
 */

const root = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const dockerfile = read('Dockerfile');
const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

const strict: ValidatorSettings = {
  deprecatedMaintainer: ValidationSeverity.ERROR,
  directiveCasing: ValidationSeverity.ERROR,
  emptyContinuationLine: ValidationSeverity.ERROR,
  instructionCasing: ValidationSeverity.ERROR,
  instructionCmdMultiple: ValidationSeverity.ERROR,
  instructionEntrypointMultiple: ValidationSeverity.ERROR,
  instructionHealthcheckMultiple: ValidationSeverity.ERROR,
  instructionJSONInSingleQuotes: ValidationSeverity.ERROR,
  instructionWorkdirRelative: ValidationSeverity.ERROR,
};

const lint = (text: string) => validate(text, strict).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);

type Stage = { name: string | null; instructions: Instruction[] };

/** The instructions of each build stage, in order. */
function stagesOf(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const instruction of DockerfileParser.parse(text).getInstructions()) {
    if (instruction.getKeyword() === 'FROM')
      stages.push({ name: /\sAS\s+(\S+)/i.exec(instruction.getArgumentsContent() ?? '')?.[1] ?? null, instructions: [] });
    stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}

/** The instruction's text after its keyword, flags included. */
const argumentsOf = (instruction: Instruction) => instruction.getTextContent().replace(/^\s*\S+\s+/, '');
const withKeyword = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.getKeyword() === keyword);

/** The repository files a module imports (`@/…` and `./…`), transitively; packages are not followed. */
function importClosure(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const resolve = (from: string, specifier: string): string | null => {
    const base = specifier.startsWith('@/')
      ? path.join(root, specifier.slice(2))
      : specifier.startsWith('.')
        ? path.resolve(path.dirname(from), specifier)
        : null;
    if (!base) return null;
    for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')])
      if (existsSync(candidate) && !candidate.endsWith(path.sep)) return candidate;
    return null;
  };
  const visit = (file: string) => {
    if (seen.has(file) || !/\.(ts|tsx|json)$/.test(file)) return;
    seen.add(file);
    if (file.endsWith('.json')) return;
    for (const match of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
      const target = resolve(file, match[1] ?? '');
      if (target) visit(target);
    }
  };
  for (const entry of entries) visit(path.join(root, entry));
  return new Set([...seen].map((file) => path.relative(root, file)));
}

function runHealthcheck(env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['deploy/docker/healthcheck.mjs'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', ...env },
      stdio: 'ignore',
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
}

async function serve(status: number): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((request, response) => response.writeHead(request.url === '/healthz' || request.url === '/api/health' ? status : 404).end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('Dockerfile', () => {
  const stages = stagesOf(dockerfile);
  const final = stages.at(-1) as Stage;

  it('lints clean under dockerfile-utils, every rule an error', () => {
    expect(lint(dockerfile)).toEqual([]);
  });

  it('the linter finds what it must in a planted bad Dockerfile', () => {
    const planted = [
      'FROM node:20 AS a',
      'RUNN npm ci',
      'HEALTHCHECK --interval=30x CMD true',
      'CMD ["npm", "start"]',
      'CMD npm start',
      'WORKDIR app',
      'USER',
    ].join('\n');
    const problems = lint(planted).join('\n');
    for (const expected of [
      'Unknown instruction: RUNN',
      'unknown unit x in duration 30x',
      'There can only be one CMD',
      'Instruction has no arguments',
      'WORKDIR paths should be absolute',
    ])
      expect(problems).toContain(expected);
  });

  it('ships production dependencies only: node_modules from a stage that ran npm ci --omit=dev', () => {
    const copies = withKeyword(final, 'COPY').map(argumentsOf);
    const modules = copies.find((args) => /\snode_modules\s|\s\.\/node_modules$/.test(` ${args}`));
    const from = /--from=(\S+)/.exec(modules ?? '')?.[1];
    const source = stages.find((stage) => stage.name === from);
    expect(source, `node_modules comes from a named stage (${modules})`).toBeDefined();
    expect(
      withKeyword(source as Stage, 'RUN')
        .map(argumentsOf)
        .join('\n'),
    ).toMatch(/npm ci --omit=dev/);
    expect(withKeyword(final, 'RUN').map(argumentsOf).join('\n'), 'the final stage installs nothing').not.toMatch(/npm (ci|install)/);
    // The CLI runs through tsx, and `npm run worker` builds the bundle with esbuild: both production dependencies.
    expect((JSON.parse(read('package.json')) as { dependencies: Record<string, string> }).dependencies.esbuild).toBeDefined();
    expect((JSON.parse(read('package.json')) as { dependencies: Record<string, string> }).dependencies.tsx).toBeDefined();
  });

  it("runs as a non-root user, the console by default, with package.json's start script as its command", () => {
    const user = withKeyword(final, 'USER').at(-1);
    expect(user && argumentsOf(user)).toMatch(/^(node|[1-9]\d*)(:|$)/);
    const cmd = withKeyword(final, 'CMD').at(-1);
    // The script's text, not `npm start`: npm exits on SIGTERM and leaves its child running.
    expect((JSON.parse(cmd ? argumentsOf(cmd) : '[]') as string[]).join(' ')).toBe(scripts.start);
    // The worker runs its bundle on plain Node; the build stage writes it, the final stage copies it.
    expect(scripts.worker).toBe('node --enable-source-maps dist/worker/main.mjs');
    expect(scripts.build).toContain('scripts/build-worker.ts');
    expect(withKeyword(final, 'COPY').map(argumentsOf)).toContain('--from=build /app/dist ./dist');
    // The scripts name next and tsx as npm would find them.
    expect(withKeyword(final, 'ENV').map(argumentsOf).join(' ')).toMatch(/PATH=\/app\/node_modules\/\.bin:\$PATH/);
  });

  it('checks its health on the documented endpoints, with a script the image holds', () => {
    const healthcheck = withKeyword(final, 'HEALTHCHECK').at(-1);
    expect(healthcheck && argumentsOf(healthcheck)).toMatch(/CMD \["node", "deploy\/docker\/healthcheck\.mjs"\]$/);
    expect(withKeyword(final, 'COPY').map(argumentsOf)).toContain('deploy/docker/healthcheck.mjs ./deploy/docker/healthcheck.mjs');
    const script = read('deploy/docker/healthcheck.mjs');
    expect(script).toContain('/api/health');
    expect(script).toContain('/healthz');
  });

  it('holds every file the worker, the CLI and the SMTP sink import, and the operator configuration', () => {
    const copied = withKeyword(final, 'COPY')
      .map(argumentsOf)
      .filter((args) => !args.startsWith('--from'))
      .flatMap((args) => args.split(/\s+/).slice(0, -1));
    const inImage = (file: string) => copied.some((source) => file === source || file.startsWith(`${source.replace(/\/$/, '')}/`));
    const needed = importClosure(['worker/main.ts', 'scripts/ledger-cli.ts', 'scripts/smtp-sink.ts']);
    expect(needed.size).toBeGreaterThan(50);
    expect([...needed].filter((file) => !inImage(file))).toEqual([]);
    for (const file of ['config', 'tsconfig.json', 'next.config.mjs', 'package.json']) expect(inImage(file), file).toBe(true);
  });

  it('.dockerignore keeps local state and secrets out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['.git', 'node_modules', '.next', '.data', '.env', '.env.*', 'notice-ledger.env']) expect(ignored).toContain(entry);
  });
});

describe('deploy/docker/healthcheck.mjs', () => {
  it('is healthy when the worker answers /healthz 200, unhealthy on 503 or when nothing answers', async () => {
    const healthy = await serve(200);
    const sick = await serve(503);
    const closed = await serve(200);
    await closed.close();
    try {
      // PORT points the console probe at a closed port, so only the worker's answer counts.
      expect(await runHealthcheck({ PORT: String(closed.port), WORKER_METRICS_PORT: String(healthy.port) })).toBe(0);
      expect(await runHealthcheck({ PORT: String(closed.port), WORKER_METRICS_PORT: String(sick.port) })).toBe(1);
      expect(await runHealthcheck({ PORT: String(closed.port), WORKER_METRICS_PORT: String(closed.port) })).toBe(1);
      // The console's /api/health, with the worker's port closed.
      expect(await runHealthcheck({ PORT: String(healthy.port), WORKER_METRICS_PORT: String(closed.port) })).toBe(0);
      // A worker bound to every address (compose) is asked on loopback.
      expect(await runHealthcheck({ PORT: String(closed.port), WORKER_METRICS_HOST: '0.0.0.0', WORKER_METRICS_PORT: String(healthy.port) })).toBe(0);
    } finally {
      await Promise.all([healthy.close(), sick.close()]);
    }
  });
});
