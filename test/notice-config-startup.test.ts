import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureProductionBuild } from '@/scripts/production-build';
import { startConsoleServer } from '@/testing/console-server';

/**
 * `next start` with a bad notice configuration: the console's instrumentation hook stops it
 * (exit 1) with the field the file got wrong. Next only logs a failing hook and serves anyway,
 * so without the hook's exit the console would answer requests it cannot plan.
 */

const root = path.resolve(import.meta.dirname, '..');
let dir = '';

beforeAll(async () => {
  await ensureProductionBuild({ root, log: (line) => console.log(`notice-config-startup: ${line}`) });
  dir = await mkdtemp(path.join(os.tmpdir(), 'notice-config-next-'));
}, 15 * 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('next start with NOTICE_CONFIG', () => {
  it('exits 1 naming the bad field', async () => {
    const shipped = JSON.parse(await readFile(path.join(root, 'config/notice-ledger.json'), 'utf8')) as {
      noticeTypes: Record<string, { window?: { from: string } }>;
    };
    const window = shipped.noticeTypes.renewal_notice_t72?.window;
    if (window) window.from = '72 hours';
    const file = path.join(dir, 'bad.json');
    await writeFile(file, JSON.stringify(shipped));
    const env = { NOTICE_KEY_SECRET: 'k'.repeat(40), NEXTAUTH_SECRET: 's'.repeat(40), LOG_LEVEL: 'warn', NOTICE_CONFIG: file };
    // Next may print "Ready" (and even answer) before the hook's check has run: either way it must exit.
    const outcome = await startConsoleServer({ env }).then(
      async (server) => {
        const deadline = Date.now() + 30_000;
        while (!server.exit() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        const exit = server.exit();
        await server.stop();
        return `${JSON.stringify(exit)}\n${server.logTail()}`;
      },
      (error: unknown) => String(error),
    );
    expect(outcome).toContain('"code":1');
    expect(outcome).toContain(`Invalid notice configuration in ${file}`);
    expect(outcome).toContain('noticeTypes.renewal_notice_t72.window.from: "72 hours" is not an offset');
  }, 90_000);
});
