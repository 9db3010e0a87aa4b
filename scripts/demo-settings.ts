import path from 'node:path';

/**
 * What the demo launcher (and the CLI, to find the demo's database and secrets) reads from the
 * environment, read here once. DEMO_DATA_DIR lets a test run a demo of its own beside a
 * person's `.data/`; PORT fixes the console's port (0 or unset: 3000 when free, else any).
 */
export type DemoSettings = {
  dataDir: string;
  port: number;
  databaseUrl: string | undefined;
  workerMetricsPort: string;
  /** DEMO_EMAIL_PROVIDER: `smtp` (the SMTP sink, the default) or `postmark` (the local Postmark peer, through the official client). */
  emailProvider: 'smtp' | 'postmark';
};

export function readDemoSettings(env: NodeJS.ProcessEnv = process.env): DemoSettings {
  return {
    dataDir: path.resolve(env.DEMO_DATA_DIR || '.data'),
    port: Number(env.PORT ?? 0) || 0,
    databaseUrl: env.DATABASE_URL || undefined,
    workerMetricsPort: env.WORKER_METRICS_PORT ?? '0',
    emailProvider: demoEmailProvider(env.DEMO_EMAIL_PROVIDER),
  };
}

function demoEmailProvider(value: string | undefined): DemoSettings['emailProvider'] {
  if (!value || value === 'smtp') return 'smtp';
  if (value === 'postmark') return 'postmark';
  throw new Error(`DEMO_EMAIL_PROVIDER must be smtp or postmark, not ${JSON.stringify(value.slice(0, 40))}`);
}

/** The line the launcher prints once the console answers, for scripts and tests that start it. */
export const DEMO_READY_PREFIX = 'DEMO_READY ';
