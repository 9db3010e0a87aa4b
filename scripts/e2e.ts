import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDb, createPool } from '@/db/client';
import { freePort } from '@/db/embedded';
import { e2eIdentities, startOidcIssuer } from '@/e2e/fixtures/oidc-issuer';
import { seedE2e, E2E_SEED_FILE_ENV } from '@/e2e/fixtures/seed';
import { createWebhookKeys, webhookEnv } from '@/e2e/fixtures/webhook-keys';
import { provisionDatabase } from '@/testing/database';
import { ensureProductionBuild, readBuildState } from './production-build';

/**
 * npm run test:e2e [-- playwright args]: a fresh database (embedded in a temp dir, or a new
 * database on a local DATABASE_URL server), migrated and seeded; a production build of the
 * current sources (scripts/production-build.ts: built only when stale, shared with the demo
 * and the chaos suite; E2E_SKIP_BUILD=1 serves whatever build exists); then Playwright,
 * which starts `next start` on a free port itself (reuseExistingServer: false) and stops it.
 * A local OpenID Connect issuer (e2e/fixtures/oidc-issuer.ts) knows one identity per seeded
 * user and a few that must be refused, so the console runs with single sign-on enabled.
 * Everything started here is stopped here, on success, failure or Ctrl-C.
 */

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main(): Promise<number> {
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch((error: unknown) => console.error('[e2e] cleanup:', error));
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    const tempDir = await mkdtemp(path.join(os.tmpdir(), 'notice-ledger-e2e-'));
    cleanups.push(() => rm(tempDir, { recursive: true, force: true }));

    if (!process.env.DATABASE_URL) console.log('[e2e] starting embedded PostgreSQL');
    const database = await provisionDatabase({ prefix: 'nl_e2e', serverUrl: process.env.DATABASE_URL });
    cleanups.push(() => database.release());
    const databaseUrl = database.url;

    const noticeKeySecret = process.env.NOTICE_KEY_SECRET ?? randomBytes(32).toString('hex');
    const pool = createPool(databaseUrl, { max: 2 });
    const webhookKeys = createWebhookKeys(tempDir);
    const seed = await seedE2e(createDb(pool), { secret: noticeKeySecret, webhookKeys });
    await pool.end();
    const seedFile = path.join(tempDir, 'seed.json');
    await writeFile(seedFile, JSON.stringify(seed, null, 2));

    const port = await freePort();
    const oidcClient = {
      clientId: 'notice-ledger-console',
      clientSecret: randomBytes(24).toString('base64url'),
      redirectUris: [`http://127.0.0.1:${port}/api/auth/callback/oidc`],
    };
    const issuer = await startOidcIssuer({ clients: [oidcClient], identities: e2eIdentities(seed.users) });
    cleanups.push(issuer.stop);

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      DATABASE_URL: databaseUrl,
      NOTICE_KEY_SECRET: noticeKeySecret,
      NEXTAUTH_SECRET: process.env.NEXTAUTH_SECRET ?? randomBytes(32).toString('hex'),
      METRICS_TOKEN: 'e2e-metrics-token-0123456789',
      MESSAGE_ID_DOMAIN: 'notices.example.com',
      QUARANTINE_AFTER: '15m',
      // e2e/ui/oncall-retry.spec.ts: a bulk retry of more than 3 failed notices waits for a second person.
      BULK_RETRY_APPROVAL_ABOVE: '3',
      // Small upload caps, so e2e/api/replay-upload.spec.ts proves both with small requests.
      REPLAY_UPLOAD_MAX_BYTES: '1000000',
      REPLAY_UPLOAD_MAX_ROWS: '500',
      // The seeded admins and managers sign in with a password alone, many times a step; enrolled
      // users still need their code (e2e/api/mfa.spec.ts). The requirement itself: lib/auth/mfa.test.ts.
      MFA_REQUIRED_ROLES: 'none',
      // e2e/ui/webhooks.spec.ts: its receiver listens on loopback (https, a test CA the worker trusts).
      WEBHOOK_ALLOWED_PRIVATE: '127.0.0.1',
      LOG_LEVEL: 'warn',
      E2E_PORT: String(port),
      OIDC_ISSUER: issuer.url,
      OIDC_CLIENT_ID: oidcClient.clientId,
      OIDC_CLIENT_SECRET: oidcClient.clientSecret,
      [E2E_SEED_FILE_ENV]: seedFile,
      ...webhookEnv(webhookKeys),
    };
    if (!process.env.E2E_SKIP_BUILD) {
      await ensureProductionBuild({ root: process.cwd(), log: (line) => console.log(`[e2e] ${line}`) });
    } else {
      const state = readBuildState({ root: process.cwd() });
      if (state === 'missing') throw new Error('E2E_SKIP_BUILD is set but .next/ holds no production build: run without it once');
      if (state === 'stale') console.log('[e2e] E2E_SKIP_BUILD: serving a build that may be older than the sources');
    }
    console.log(`[e2e] playwright on port ${env.E2E_PORT}`);
    return await run('npx', ['playwright', 'test', ...process.argv.slice(2)], env);
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('[e2e] failed:', error);
    process.exit(1);
  },
);
