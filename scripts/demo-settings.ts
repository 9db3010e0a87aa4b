import path from 'node:path';

/**
 * What the demo launcher (and the CLI, to find the demo's database and secrets) reads from the
 * environment, read here once. DEMO_DATA_DIR lets a test run a demo of its own beside a
 * person's `.data/`; PORT fixes the console's port (0 or unset: 3000 when free, else any).
 */
export type DemoSettings = { dataDir: string; port: number; databaseUrl: string | undefined; workerMetricsPort: string };

export function readDemoSettings(env: NodeJS.ProcessEnv = process.env): DemoSettings {
  return {
    dataDir: path.resolve(env.DEMO_DATA_DIR || '.data'),
    port: Number(env.PORT ?? 0) || 0,
    databaseUrl: env.DATABASE_URL || undefined,
    workerMetricsPort: env.WORKER_METRICS_PORT ?? '0',
  };
}

/** The line the launcher prints once the console answers, for scripts and tests that start it. */
export const DEMO_READY_PREFIX = 'DEMO_READY ';
