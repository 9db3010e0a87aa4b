import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { runScript, scriptEnv } from '@/testing/run-script';

/**
 * A real worker process with a bad notice configuration: it stops at start-up (exit 1) with the
 * field the file got wrong, before it touches the database or the queue.
 */

let t: TestDatabase;
let dir = '';

beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'notice-config-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t.drop();
});

describe('worker start-up with NOTICE_CONFIG', () => {
  it('refuses a bad file, naming the field, and leaves the database as it was', async () => {
    const shipped = JSON.parse(await readFile('config/notice-ledger.json', 'utf8')) as { noticeTypes: Record<string, { window?: { from: string } }> };
    const window = shipped.noticeTypes.renewal_notice_t72?.window;
    if (window) window.from = '72 hours';
    const file = path.join(dir, 'bad.json');
    await writeFile(file, JSON.stringify(shipped));
    const run = await runScript({ script: 'worker/main.ts', args: [], env: { ...scriptEnv(t.url), NOTICE_CONFIG: file } });
    expect(run.code).toBe(1);
    expect(run.stderr + run.stdout).toContain(`Invalid notice configuration in ${file}`);
    expect(run.stderr + run.stdout).toContain('noticeTypes.renewal_notice_t72.window.from: "72 hours" is not an offset');
    const boss = await t.pool.query<{ present: boolean }>(`select to_regclass('pgboss.job') is not null as present`);
    expect(boss.rows[0]?.present).toBe(false);
  });

  it('refuses to start when a type may go by SMS and Twilio is not configured, naming the types and the settings', async () => {
    const run = await runScript({ script: 'worker/main.ts', args: [], env: { ...scriptEnv(t.url), TWILIO_AUTH_TOKEN: 'only-the-token-0123456789' } });
    expect(run.code).toBe(1);
    const output = run.stderr + run.stdout;
    expect(output).toContain('notice types payment_recovery go by SMS');
    expect(output).toContain('TWILIO_ACCOUNT_SID, TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID required');
    expect(output).not.toContain('only-the-token-0123456789');
    const boss = await t.pool.query<{ present: boolean }>(`select to_regclass('pgboss.job') is not null as present`);
    expect(boss.rows[0]?.present).toBe(false);
  });
});
