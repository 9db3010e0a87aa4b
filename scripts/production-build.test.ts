import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureProductionBuild, readBuildState } from './production-build';

/**
 * The build helper's own decisions — when to build, and building once under the lock — over a
 * scratch tree whose `next` records each build instead of compiling the console (a real build
 * takes minutes; the chaos test and e2e use the real one). The fake's build lasts long enough
 * that two callers surely overlap it.
 */

const fakeNext = `
const fs = require('node:fs');
fs.appendFileSync('builds.log', JSON.stringify({ nodeEnv: process.env.NODE_ENV, secret: process.env.NOTICE_KEY_SECRET ?? null }) + '\\n');
fs.rmSync('.next', { recursive: true, force: true });
if (fs.existsSync('fail-build')) { console.error('Type error: the build broke'); process.exit(1); }
const until = Date.now() + 700;
while (Date.now() < until);
fs.mkdirSync('.next');
fs.writeFileSync('.next/BUILD_ID', 'fake');
`;

let root = '';

async function readBuilds(): Promise<Array<{ nodeEnv: string; secret: string | null }>> {
  const text = await readFile(path.join(root, 'builds.log'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { nodeEnv: string; secret: string | null });
}

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'notice-ledger-build-'));
  await mkdir(path.join(root, 'node_modules', 'next', 'dist', 'bin'), { recursive: true });
  await writeFile(path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), fakeNext);
  await mkdir(path.join(root, 'lib'));
  await writeFile(path.join(root, 'lib', 'config.ts'), 'export {};\n');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('ensureProductionBuild', () => {
  it('builds once for two callers at the same time; the second waits and finds it fresh', async () => {
    const results = await Promise.all([ensureProductionBuild({ root }), ensureProductionBuild({ root })]);
    expect(results.map((result) => result.built).sort()).toEqual([false, true]);
    expect(await readBuilds()).toHaveLength(1);
    expect(readBuildState({ root })).toBe('fresh');
  });

  it('rebuilds only after a source changes, ignoring test files', async () => {
    await ensureProductionBuild({ root });
    const later = new Date(Date.now() + 5_000);
    await writeFile(path.join(root, 'lib', 'config.test.ts'), 'export {};\n');
    await utimes(path.join(root, 'lib', 'config.test.ts'), later, later);
    expect(await ensureProductionBuild({ root })).toEqual({ built: false });
    await utimes(path.join(root, 'lib', 'config.ts'), later, later);
    expect(readBuildState({ root })).toBe('stale');
    expect(await ensureProductionBuild({ root })).toEqual({ built: true });
    expect(await readBuilds()).toHaveLength(2);
  });

  it('builds with NODE_ENV=production and none of the caller’s environment', async () => {
    process.env.NOTICE_KEY_SECRET ??= 'a-secret-the-build-must-not-see-0123456789';
    await ensureProductionBuild({ root });
    expect(await readBuilds()).toEqual([{ nodeEnv: 'production', secret: null }]);
  });

  it('a failed build says why and leaves no build that looks fresh', async () => {
    await ensureProductionBuild({ root });
    await writeFile(path.join(root, 'fail-build'), '');
    const later = new Date(Date.now() + 5_000);
    await utimes(path.join(root, 'lib', 'config.ts'), later, later);
    await expect(ensureProductionBuild({ root })).rejects.toThrow(/next build failed \(code 1\):\n.*Type error: the build broke/s);
    expect(readBuildState({ root })).toBe('missing');
  });
});
