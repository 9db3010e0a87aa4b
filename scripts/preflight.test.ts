import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from '@/testing/run-script';
import { INSTALL_COMMAND, planChromium } from './preflight';

/** `npm test`'s first step, run as npm runs it, with a CHROMIUM_PATH that has no Chromium. */

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'preflight-'));
  await writeFile(path.join(dir, 'chromium'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  await writeFile(path.join(dir, 'not-executable'), 'text', { mode: 0o644 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const env = (chromiumPath: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/tmp',
  NODE_ENV: 'test',
  CHROMIUM_PATH: chromiumPath,
});

describe('scripts/preflight.ts', () => {
  it('stops within seconds with the exact install command when Chromium is missing, and installs nothing', async () => {
    const started = Date.now();
    for (const missing of [path.join(dir, 'absent'), path.join(dir, 'not-executable')]) {
      const run = await runScript({ script: 'scripts/preflight.ts', args: [], env: env(missing) });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(`CHROMIUM_PATH=${missing} is not an executable Chromium`);
      expect(run.stderr).toContain(INSTALL_COMMAND);
      expect(run.stderr).not.toContain('installing');
    }
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('passes silently when CHROMIUM_PATH is an executable', async () => {
    expect(await runScript({ script: 'scripts/preflight.ts', args: [], env: env(path.join(dir, 'chromium')) })).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('installs only as root with apt-get at the default path; otherwise it names the command', () => {
    const missing = { chromiumPath: '/usr/bin/chromium', explicit: false, present: false };
    expect(planChromium({ ...missing, isRoot: true, hasApt: true })).toEqual({ action: 'install' });
    const user = planChromium({ ...missing, isRoot: false, hasApt: true });
    expect(user).toMatchObject({ action: 'stop', message: expect.stringContaining(`sudo ${INSTALL_COMMAND}`) });
    expect(planChromium({ ...missing, isRoot: true, hasApt: false })).toMatchObject({ action: 'stop', message: expect.stringContaining(INSTALL_COMMAND) });
    expect(planChromium({ ...missing, present: true, isRoot: false, hasApt: false })).toEqual({ action: 'ok' });
  });
});
