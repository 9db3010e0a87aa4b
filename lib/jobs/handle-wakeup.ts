import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Db } from '@/db/client';
import { recordAttempt, type AttemptRecord } from '@/db/queries/attempts';
import { deferJob, failJob, missWindowAfterRetries, recordUnknownOutcome, retryJob, suppressJob } from '@/db/queries/jobs';
import { releaseClaim } from '@/db/queries/ledger/commit';
import { addRecipientSuppression } from '@/db/queries/suppressions';
import { getLedgerRow, getLedgerState } from '@/db/queries/ledger/read';
import type { JobRow } from '@/db/schema';
import type { Logger } from '@/lib/log';
import { mintOneTimeCode } from '@/lib/ledger/one-time-code';
import { correlationOf } from '@/lib/ledger/notice-key';
import { renderNotice } from '@/lib/mail/render';
import { defaultLinkKeyRing, type LinkKeyRing } from '@/lib/recipient/link-keys';
import { recipientPageUrl } from '@/lib/recipient/page-link';
import { RenderError } from '@/lib/templates/render';
import type { MailTransport } from '@/lib/mail/transport';
import { countryOf } from '@/lib/sms/phone';
import { renderSmsBody, segmentsOf } from '@/lib/sms/render';
import type { SmsOutcome, SmsTransport } from '@/lib/sms/transport';
import {
  claimsMinted,
  claimToCommitSeconds,
  deferrals,
  duplicatesSuppressed,
  policySuppressions,
  sendOutcomes,
  windowMissed,
  wouldSuppress,
} from '@/lib/metrics/registry';
import type { Delivery, HandlerResult, WakeupHandler } from '@/lib/queue/types';
import type { NoticeConfig } from '@/lib/windows/load-config';
import { windowVerdict } from '@/lib/windows/verdict';
import { traceClaims, traceCommit, tracePolicy, traceSend, traceTokenWait, traceWakeup, untracedWakeup } from './notice-spans';
import { unsubscribeLinks } from '@/lib/recipient/unsubscribe';
import { planJobRetry } from './retry-budget';
import { decidePolicy, type PolicyDecision } from './policy';
import { recipientDomain, smsThrottleKey, type DomainRateLimiter } from './rate-limit';
import { createSendPathStatements, type SendPathStatements } from './send-path-statements';
import { commitSmsFallback, recordSmsStop } from './sms-fallback';
import { releaseUncounted, transportOfChannel } from './transport-pause';
import type { TransportBreakers } from '@/lib/transport/breaker';

/**
 * The send path. Order is the invariant (DESIGN.md "The send path"):
 * load → discard/defer/suppress → domain token → CLAIM (committed) → send → COMMIT result → ack.
 * The adapter acks only after this function returns, i.e. after the result commit.
 */

export type CrashPoint = 'after_claim' | 'after_send' | 'after_commit';

export type SendPathSettings = {
  mode: 'shadow' | 'enforce';
  /**
   * The notice types (NOTICE_CONFIG, loaded with QUIET_HOURS as the last fallback): a job keeps
   * its type's resolved quiet hours, the ones the planner chose its due time by; a job of a type
   * no longer configured keeps the configuration's (else QUIET_HOURS).
   */
  noticeConfig: NoticeConfig;
  retryBaseMs: number;
  retryCapMs: number;
  maxAttempts: number;
  secret: string;
  /** RECIPIENT_LINK_KEYS: the recipient's links are signed with its first key; unset, with the one derived from `secret`. */
  linkKeys?: LinkKeyRing;
  /** PUBLIC_BASE_URL: the recipient's links (cancel, one-click unsubscribe) are built on it. */
  cancelBaseUrl: string;
  /** UNSUBSCRIBE_MAILBOX: the mailto URI of List-Unsubscribe, when the operator's MTA handles one. */
  unsubscribeMailbox?: string | null;
  /** Longer throttles defer the job through the queue instead of holding a handler slot. */
  maxTokenWaitMs: number;
};

/** The SMS side of the send path: Twilio, the sender the throttle is keyed by, its bucket (lib/jobs/rate-limit.ts smsThrottleKey). */
export type SmsSendPath = { transport: SmsTransport; sender: string; rateLimiter: DomainRateLimiter };

export type SendPathDeps = {
  db: Db;
  mail: MailTransport;
  rateLimiter: DomainRateLimiter;
  /** Absent: Twilio is not configured; an `sms` job goes by email when its type also does (lib/jobs/sms-fallback.ts), else is retried as `sms_not_configured` (the worker refuses to start with SMS-only types and no Twilio settings). */
  sms?: SmsSendPath;
  settings: SendPathSettings;
  workerId: string;
  logger: Logger;
  now?: () => Date;
  /** Test hook for crash tests: called at each named point; the worker SIGKILLs itself there. */
  checkpoint?: (point: CrashPoint) => void;
  /** A breaker per transport (lib/transport/breaker.ts): while one is open its jobs are deferred, nothing claimed. */
  breakers?: TransportBreakers;
  /**
   * Aborted when the worker stops: a send that has not reached its body ends at once (nothing
   * left, released). Not the delivery's signal: its visibility deadline is the queue's business,
   * and a send is bounded by its own deadlines (SMTP_SEND_DEADLINE) anyway.
   */
  stopping?: AbortSignal;
};

export class DeliveryAbortedError extends Error {
  constructor() {
    super('delivery aborted before the claim; nothing was claimed or sent');
    this.name = 'DeliveryAbortedError';
  }
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A job's quiet hours at send: its type's resolved ones (lib/windows/load-config.ts), else the configuration's. */
export function quietHoursAtSend(config: NoticeConfig, noticeType: string) {
  const type = Object.hasOwn(config.noticeTypes, noticeType) ? config.noticeTypes[noticeType] : undefined;
  return type ? type.quietHours : config.quietHours;
}

export function createWakeupHandler(deps: SendPathDeps): WakeupHandler {
  const now = deps.now ?? (() => new Date());
  const { db, settings, logger } = deps;
  const checkpoint = deps.checkpoint ?? (() => undefined);
  const statements = traceClaims(createSendPathStatements(db));

  return async (delivery: Delivery): Promise<HandlerResult> => {
    const startedAt = now();
    const { jobId, batchId } = delivery.wakeup;
    const loaded = await statements.loadJob(jobId);
    if (!loaded) {
      logger.warn({ jobId, queueMessageId: delivery.messageId }, 'wake-up for an unknown job; acked');
      untracedWakeup('unknown_job');
      return { ack: true };
    }
    const { job } = loaded;
    const attempt = traceWakeup(job, (outcome: AttemptRecord['outcome'], extra: Partial<AttemptRecord> = {}): AttemptRecord => ({
      jobId: job.id,
      noticeKey: job.noticeKey,
      workerId: deps.workerId,
      startedAt,
      outcome,
      queueMessageId: delivery.messageId,
      batchId: batchId ?? job.batchId,
      correlationId: correlationOf(job.noticeKey),
      mode: settings.mode,
      ...extra,
    }));
    const log = logger.child({ jobId: job.id, noticeKey: job.noticeKey, queueMessageId: delivery.messageId, batchId: batchId ?? job.batchId ?? undefined });

    const decision = decidePolicy({
      now: startedAt,
      job,
      recipientSuppression: loaded.recipientSuppression,
      preference: loaded.preference,
      evidenceState: loaded.evidenceState,
      quietHours: quietHoursAtSend(settings.noticeConfig, job.noticeType),
    });
    tracePolicy(decision);

    if (decision.kind === 'discard') {
      await recordAttempt(db, attempt('discarded', { detail: `job_${decision.state}` }));
      duplicatesSuppressed.inc({ notice_type: job.noticeType, reason: `job_${decision.state}` });
      log.info({ state: decision.state }, 'job already final; discarded');
      return { ack: true };
    }
    // A job whose claim is still held belongs to that claim: only the claim attempt below
    // may decide about it (it will be refused). A released claim is fair game for policy.
    const policyApplies = (decision.kind === 'defer' || decision.kind === 'suppress') && (job.state === 'pending' || !(await isClaimHeld(db, job.noticeKey)));
    if (policyApplies && decision.kind === 'defer') {
      await db.transaction(async (tx) => {
        await deferJob(tx, { jobId: job.id, until: decision.until, reopen: true });
        await recordAttempt(tx, attempt('deferred', { detail: decision.cause }));
      });
      deferrals.inc({ notice_type: job.noticeType, cause: decision.cause });
      log.info({ cause: decision.cause, until: decision.until.toISOString() }, 'deferred');
      return { ack: true, wakeAt: decision.until };
    }
    const suppress = async (suppression: Extract<PolicyDecision, { kind: 'suppress' }>): Promise<HandlerResult> => {
      await db.transaction(async (tx) => {
        await suppressJob(tx, { jobId: job.id, reason: suppression.reason });
        await recordAttempt(tx, attempt('suppressed_policy', { detail: suppression.detail }));
      });
      policySuppressions.inc({ notice_type: job.noticeType, reason: suppression.reason });
      if (suppression.reason === 'window_missed') windowMissed.inc({ notice_type: job.noticeType, category: job.category });
      log.info({ reason: suppression.reason, detail: suppression.detail }, 'suppressed by policy');
      return { ack: true };
    };
    if (policyApplies && decision.kind === 'suppress') return suppress(decision);

    // A transport whose breaker is open takes no claim: the job waits for its next probe, no attempt counted.
    const transport = transportOfChannel(job.channel);
    const pausedUntil = deps.breakers?.pausedUntil(transport) ?? null;
    if (pausedUntil && (job.state === 'pending' || !(await isClaimHeld(db, job.noticeKey)))) {
      await db.transaction(async (tx) => {
        await deferJob(tx, { jobId: job.id, until: pausedUntil, reopen: true });
        await recordAttempt(tx, attempt('deferred', { detail: 'transport_down' }));
      });
      deferrals.inc({ notice_type: job.noticeType, cause: 'transport_down' });
      return { ack: true, wakeAt: pausedUntil };
    }

    // An SMS draws from its sender × destination-country bucket; an email from its domain's.
    const sms = job.channel === 'sms' ? deps.sms : undefined;
    const domain = job.channel === 'sms' ? `sms:${countryOf(job.recipientPhone ?? '')}` : recipientDomain(job.recipientEmail ?? '');
    const bucket = sms
      ? { limiter: sms.rateLimiter, key: smsThrottleKey(sms.sender, countryOf(job.recipientPhone ?? '')) }
      : { limiter: deps.rateLimiter, key: domain };
    // An SMS job without Twilio takes no token: it is refused as `sms_not_configured` below.
    const throttled =
      job.channel === 'sms' && !sms ? null : await traceTokenWait(takeToken(bucket.limiter, settings.maxTokenWaitMs, bucket.key, delivery.signal));
    if (throttled !== null) {
      const until = new Date(now().getTime() + throttled);
      await db.transaction(async (tx) => {
        await deferJob(tx, { jobId: job.id, until });
        await recordAttempt(tx, attempt('deferred', { detail: 'rate_limited' }));
      });
      deferrals.inc({ notice_type: job.noticeType, cause: 'rate_limited' });
      return { ack: true, wakeAt: until };
    }

    // The token may have been waited for: a window that closed meanwhile is missed, never sent late.
    if (windowVerdict(job, now()).verdict === 'missed' && (job.state === 'pending' || !(await isClaimHeld(db, job.noticeKey)))) {
      return suppress({ kind: 'suppress', reason: 'window_missed', detail: 'window_missed' });
    }

    // Past this line the delivery may already be with another worker; before it, stop cleanly.
    if (delivery.signal.aborted) throw new DeliveryAbortedError();

    const claimToken = randomUUID();
    const claim = await statements.claim({
      noticeKey: job.noticeKey,
      noticeType: job.noticeType,
      identity: job.identity,
      revision: job.revision,
      jobId: job.id,
      claimToken,
      claimedBy: deps.workerId,
      recipientDomain: domain,
      oneTimeCode: mintOneTimeCode(),
      // The window is judged by the database's clock at the claim; a test's injected clock stands in for it.
      judgedAt: deps.now ? now() : null,
    });
    const claimCommittedAt = performance.now();
    checkpoint('after_claim');

    let oneTimeCode: string;
    let ownedToken: string | null = null;
    if (claim) {
      claimsMinted.inc({ notice_type: job.noticeType, mode: settings.mode });
      ownedToken = claimToken;
      oneTimeCode = claim.oneTimeCode;
      log.debug({ reclaimed: claim.reclaimed }, 'claimed');
    } else {
      // The claim also refuses a job that left pending after it was loaded: a cancel or an
      // evidence resolve committed in between. That job is final; nothing is sent, in either mode.
      const reloaded = await statements.loadJob(job.id);
      const left = reloaded?.job.state ?? 'missing';
      if (left !== 'pending' && left !== 'claimed') {
        await recordAttempt(db, attempt('discarded', { detail: `job_${left}` }));
        duplicatesSuppressed.inc({ notice_type: job.noticeType, reason: `job_${left}` });
        log.info({ state: left }, 'job left pending before its claim; discarded');
        return { ack: true };
      }
      const held = await getLedgerRow(db, { noticeKey: job.noticeKey });
      // Refused because the window closed between the check above and the claim's own: missed, not a duplicate.
      if ((!held || held.state === 'released') && windowVerdict(job, now()).verdict === 'missed') {
        return suppress({ kind: 'suppress', reason: 'window_missed', detail: 'window_missed' });
      }
      const reason = `ledger_${held?.state ?? 'missing'}`;
      if (settings.mode === 'enforce') {
        await db.transaction(async (tx) => {
          if (held?.state === 'sent' || held?.state === 'suppressed') {
            await suppressJob(tx, { jobId: job.id, reason: held.state === 'sent' ? 'duplicate' : 'operator' });
          }
          await recordAttempt(tx, attempt('suppressed_duplicate', { detail: reason }));
        });
        duplicatesSuppressed.inc({ notice_type: job.noticeType, reason });
        log.info({ reason }, 'claim refused; duplicate suppressed');
        return { ack: true };
      }
      await recordAttempt(db, attempt('would_suppress', { detail: reason }));
      wouldSuppress.inc({ notice_type: job.noticeType });
      log.info({ reason }, 'shadow mode: claim refused, sending anyway');
      oneTimeCode = held?.oneTimeCode ?? mintOneTimeCode();
    }

    const outcome = await traceSend(sendNotice(deps, job, oneTimeCode));
    checkpoint('after_send');
    // A send we cut short ourselves (the worker stopping) says nothing about the transport.
    if (!deps.stopping?.aborted) deps.breakers?.record(transport, outcome);
    const sentDetail = decision.kind === 'proceed' && decision.quietHoursOverridden ? 'quiet_hours_overridden' : null;
    const result = await traceCommit(commitOutcome({ deps, statements, job, outcome, ownedToken, attempt, claimCommittedAt, sentDetail }));
    checkpoint('after_commit');
    log.info({ outcome: outcome.kind, errorClass: outcome.kind === 'accepted' ? undefined : outcome.errorClass }, 'send finished');
    return result;
  };
}

async function isClaimHeld(db: Db, noticeKey: string): Promise<boolean> {
  const state = await getLedgerState(db, { noticeKey });
  return state !== null && state !== 'released';
}

/** null when a token was taken; otherwise how long the bucket needs. */
async function takeToken(limiter: DomainRateLimiter, maxTokenWaitMs: number, key: string, signal: AbortSignal): Promise<number | null> {
  for (;;) {
    const token = await limiter.take(key);
    if (token.ok) return null;
    if (token.retryInMs > maxTokenWaitMs || signal.aborted) return token.retryInMs;
    await abortableDelay(token.retryInMs, signal);
  }
}

async function sendNotice(deps: SendPathDeps, job: JobRow, oneTimeCode: string): Promise<SmsOutcome> {
  // The recipient page (cancel, preferences); the one-time code stays in the mail, and the page asks for it where the type says so.
  // Its expiry (the anchor, else the deadline) is read from the job when the link is followed (lib/recipient/link-notice.ts).
  const linkKeys = deps.settings.linkKeys ?? defaultLinkKeyRing(deps.settings.secret);
  const manage = recipientPageUrl({ keys: linkKeys, baseUrl: deps.settings.cancelBaseUrl, noticeKey: job.noticeKey });
  if (job.channel === 'sms') return sendSms(deps, job, oneTimeCode, manage);
  // A courtesy notice can be unsubscribed from in one click (RFC 8058) and by its link; a required one cannot, carries no header and says why.
  const listUnsubscribe =
    job.category === 'courtesy'
      ? unsubscribeLinks({
          keys: linkKeys,
          baseUrl: deps.settings.cancelBaseUrl,
          noticeKey: job.noticeKey,
          mailbox: deps.settings.unsubscribeMailbox ?? null,
        })
      : null;
  let rendered;
  try {
    rendered = await renderNotice({ config: deps.settings.noticeConfig, job, oneTimeCode, links: { manage, unsubscribe: listUnsubscribe?.https ?? null } });
  } catch (error) {
    // Nothing left the process: as definite as a 5xx, and retrying cannot help. The reason names
    // the template and variable (RenderError), never a value; it is the attempt's detail.
    const detail = error instanceof RenderError ? error.reason : 'render_failed';
    return { kind: 'rejected', permanent: true, code: null, errorClass: 'render_failed', detail };
  }
  // An email job always has the address (check reminder_jobs_email_has_address).
  return deps.mail.send({ noticeKey: job.noticeKey, to: job.recipientEmail ?? '', ...rendered, listUnsubscribe }, { signal: deps.stopping });
}

/** The SMS body from the type's `sms` template, its segments against the type's cap, then Twilio. */
async function sendSms(deps: SendPathDeps, job: JobRow, oneTimeCode: string, manage: string): Promise<SmsOutcome> {
  if (!deps.sms || !job.recipientPhone) return { kind: 'rejected', permanent: false, code: null, errorClass: 'sms_not_configured' };
  let body: string;
  try {
    // No unsubscribe link in a text: a courtesy template says "Reply STOP"; Twilio reports the keyword (21610, the inbound route).
    body = renderSmsBody({ config: deps.settings.noticeConfig, job, oneTimeCode, links: { manage, unsubscribe: null } });
  } catch (error) {
    const detail = error instanceof RenderError ? error.reason : 'render_failed';
    return { kind: 'rejected', permanent: true, code: null, errorClass: 'render_failed', detail };
  }
  const type = Object.hasOwn(deps.settings.noticeConfig.noticeTypes, job.noticeType) ? deps.settings.noticeConfig.noticeTypes[job.noticeType] : undefined;
  const maxSegments = type?.maxSegments ?? 3;
  const { segments, encoding } = segmentsOf(body);
  if (segments > maxSegments) {
    // Nothing left the process: a definite, permanent refusal of our own.
    return {
      kind: 'rejected',
      permanent: true,
      code: null,
      errorClass: 'too_many_segments',
      detail: `the text takes ${segments} ${encoding} segments; ${job.noticeType} allows ${maxSegments} (maxSegments)`,
    };
  }
  return deps.sms.transport.send({ noticeKey: job.noticeKey, to: job.recipientPhone, body });
}

export type CommitParams = {
  deps: SendPathDeps;
  statements: SendPathStatements;
  job: JobRow;
  outcome: SmsOutcome;
  ownedToken: string | null;
  attempt: (outcome: AttemptRecord['outcome'], extra?: Partial<AttemptRecord>) => AttemptRecord;
  claimCommittedAt: number;
  /** What the `sent` attempt records beside the outcome (`quiet_hours_overridden`). */
  sentDetail: string | null;
};

async function commitOutcome({ deps, statements, job, outcome, ownedToken, attempt, claimCommittedAt, sentDetail }: CommitParams): Promise<HandlerResult> {
  const { db, settings } = deps;
  if (outcome.kind === 'accepted') {
    const claimToCommitMs = Math.round(performance.now() - claimCommittedAt);
    const record = attempt('sent');
    // One statement = one transaction: ledger `sent`, job `sent`, attempt row (DESIGN step 7).
    await statements.commitSent({
      noticeKey: job.noticeKey,
      claimToken: ownedToken,
      providerMessageId: outcome.providerMessageId,
      jobId: job.id,
      workerId: record.workerId,
      startedAt: record.startedAt,
      queueMessageId: record.queueMessageId ?? null,
      batchId: record.batchId ?? null,
      correlationId: record.correlationId ?? null,
      claimToCommitMs: ownedToken ? claimToCommitMs : null,
      mode: record.mode,
      detail: sentDetail,
    });
    if (ownedToken) claimToCommitSeconds.observe({ notice_type: job.noticeType }, claimToCommitMs / 1000);
    sendOutcomes.inc({ notice_type: job.noticeType, outcome: 'accepted' });
    return { ack: true };
  }

  if (outcome.kind === 'unknown') {
    // The claim stays `claimed`: the mail may be out. Quarantine and provider events decide.
    await db.transaction(async (tx) => {
      await recordUnknownOutcome(tx, { jobId: job.id, errorClass: outcome.errorClass });
      await recordAttempt(tx, attempt('unknown', { errorClass: outcome.errorClass }));
    });
    sendOutcomes.inc({ notice_type: job.noticeType, outcome: 'unknown' });
    return { ack: true };
  }

  if (outcome.failure === 'config_broken') return releaseUncounted({ deps, job, outcome, ownedToken, attempt });

  // A required text refused for good for this number goes by email instead, as the same notice.
  const fallback = await commitSmsFallback({ db, config: settings.noticeConfig, job, outcome, ownedToken, attempt, now: (deps.now ?? (() => new Date()))() });
  if (fallback) return fallback;

  // The window is the retry budget (./backoff.ts): a temporary failure is retried until no attempt fits before the deadline.
  const plan = outcome.permanent
    ? null
    : planJobRetry({ job, now: (deps.now ?? (() => new Date()))(), settings, quietHours: quietHoursAtSend(settings.noticeConfig, job.noticeType) });
  const nextAttemptAt = plan?.kind === 'retry' ? plan.at : null;
  if (plan?.kind === 'retry' && plan.atRisk)
    deps.logger.warn({ jobId: job.id, attempts: job.attempts + 1, errorClass: outcome.errorClass }, 'retrying past MAX_ATTEMPTS: at risk');
  await db.transaction(async (tx) => {
    if (ownedToken) await releaseClaim(tx, { noticeKey: job.noticeKey, claimToken: ownedToken });
    if (nextAttemptAt) await retryJob(tx, { jobId: job.id, nextAttemptAt, errorClass: outcome.errorClass });
    else if (plan?.kind === 'window_closes') await missWindowAfterRetries(tx, { jobId: job.id, errorClass: outcome.errorClass });
    else await failJob(tx, { jobId: job.id, errorClass: outcome.errorClass });
    // "No such mailbox" stops every later notice to the address, as a provider's hard bounce does.
    if (outcome.mailboxUnknown && job.recipientEmail) {
      await addRecipientSuppression(tx, {
        email: job.recipientEmail,
        reason: 'hard_bounce',
        sourceEventId: null,
        note: `smtp ${outcome.code ?? ''} mailbox unknown`.trim(),
      });
    }
    if (outcome.optOut && job.recipientPhone) await recordSmsStop(tx, job.recipientPhone);
    await recordAttempt(
      tx,
      attempt(outcome.permanent ? 'permanent_failure' : 'retryable_failure', {
        errorClass: outcome.errorClass,
        detail: outcome.detail ?? (outcome.mailboxUnknown ? 'mailbox_unknown' : outcome.permanent ? 'permanent' : null),
      }),
    );
    // No attempt fits before the deadline: window_missed, its cause the failure (lib/console/words.ts says it in words).
    if (plan?.kind === 'window_closes') await recordAttempt(tx, attempt('suppressed_policy', { detail: outcome.errorClass }));
  });
  if (plan?.kind === 'window_closes') {
    policySuppressions.inc({ notice_type: job.noticeType, reason: 'window_missed' });
    windowMissed.inc({ notice_type: job.noticeType, category: job.category });
  }
  sendOutcomes.inc({ notice_type: job.noticeType, outcome: outcome.permanent ? 'permanent' : 'retryable' });
  return nextAttemptAt ? { ack: true, wakeAt: nextAttemptAt } : { ack: true };
}
