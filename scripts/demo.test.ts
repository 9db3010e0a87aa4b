import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript } from '@/testing/run-script';

/**
 * `npm run demo` seeds accounts with published passwords, so it refuses a DATABASE_URL that is not
 * on this machine before it writes or connects to anything.
 */

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('npm run demo with DATABASE_URL', () => {
  it('refuses a server on another host, naming it, with nothing written', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'demo-remote-'));
    dirs.push(dataDir);
    for (const url of ['postgres://admin:secret@db.invalid:5432/notice_ledger', 'postgres://admin@localhost/notice_ledger?host=db.invalid']) {
      const run = await runScript({
        script: 'scripts/demo.ts',
        args: [],
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'development', DEMO_DATA_DIR: dataDir, DATABASE_URL: url },
      });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain('npm run demo refuses DATABASE_URL on host "db.invalid"');
      expect(run.stderr).not.toContain('secret');
      expect(existsSync(path.join(dataDir, 'demo-secrets.json'))).toBe(false);
    }
  }, 60_000);
});
