import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Db, Tx } from '@/db/client';
import { recordAttempt, type AttemptRecord } from '@/db/queries/attempts';
import { deferJob, failJob, holdJobForPolicy, missWindowAfterRetries, recordUnknownOutcome, retryJob, suppressJob } from '@/db/queries/jobs';
import { releaseClaim } from '@/db/queries/ledger/commit';
import { addRecipientSuppression } from '@/db/queries/suppressions';
import { getLedgerRow, getLedgerState } from '@/db/queries/ledger/read';
import type { JobRow } from '@/db/schema';
import type { Logger } from '@/lib/log';
import { mintOneTimeCode } from '@/lib/ledger/one-time-code';
import { correlationOf } from '@/lib/ledger/notice-key';
import type { LinkKeyRing } from '@/lib/recipient/link-keys';
import type { EmailTransport, OutgoingNotice } from '@/lib/mail/transport';
import { createEmailChannel } from '@/lib/channels/email';
import { createSmsChannel, type SmsSendPath } from '@/lib/channels/sms';
import type { Channel, ChannelOutcome, ComposeInput, Ready } from '@/lib/channels/types';
import type { OutgoingSms } from '@/lib/sms/transport';
import {
  claimsMinted,
  claimWindowNotices,
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
import { planJobRetry } from './retry-budget';
import { decidePolicy, type PolicyDecision } from './policy';
import type { DomainRateLimiter } from './rate-limit';
import { createSendPathStatements, type SendPathStatements } from './send-path-statements';
import { commitSmsFallback, recordSmsStop } from './sms-fallback';
import { releaseUncounted } from './transport-pause';
import type { TransportBreakers } from '@/lib/transport/breaker';
import type { TransportName } from '@/lib/transport/phases';
import { storedTracePieces } from '@/lib/evidence/pieces';
import { forEvidence } from '@/lib/evidence/record';
import { sendEvidenceEntry, type EvidenceRecorder, type SendCapture } from '@/lib/evidence/send-evidence';
import { insertEvidenceEntries, type NewEvidenceEntry } from '@/db/queries/evidence-record';
import { recordJobEvent } from '@/lib/webhooks/outbox';
import { storedTemplateVersionId } from './template-versions';
import { pauseFor } from '@/lib/controls/runtime-controls';
import type { WorkerControls } from '@/lib/controls/worker-controls';

/**
 * The send path. Order is the invariant (DESIGN.md "The send path"):
 * load → discard/defer/suppress → domain token → compose → CLAIM (committed) → send → COMMIT result → ack.
 * (Composing touches nothing outside the process; it comes before the claim so that the claim's
 * window of doubt holds only the send and the commit.) The adapter acks only after this function returns, i.e. after the result commit.
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

export type { SmsSendPath };

export type SendPathDeps = {
  db: Db;
  /** The email transport EMAIL_PROVIDER chose (lib/channels/registry.ts): SMTP, Postmark, SES or SendGrid. */
  mail: EmailTransport;
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
  /** The operator's pauses (lib/controls/worker-controls.ts): a paused job is deferred one refresh, nothing claimed, no attempt. */
  controls?: Pick<WorkerControls, 'current' | 'refreshMs'>;
  /**
   * Aborted when the worker stops: a send that has not reached its body ends at once (nothing
   * left, released). Not the delivery's signal: its visibility deadline is the queue's business,
   * and a send is bounded by its own deadlines (SMTP_SEND_DEADLINE) anyway.
   */
  stopping?: AbortSignal;
  /** The evidence record (lib/evidence/): absent or not wanted for the type, the send path writes none. */
  evidence?: EvidenceRecorder;
  /**
   * WORKER_CLAIM_WINDOW: at most this many notices of this process between their claim and their
   * result commit; a handler past its compose waits here for a place before it claims. Absent: no
   * limit (tests that drive the path directly).
   */
  claimWindow?: number;
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

/**
 * The send path's parts, made once per handler: the coalesced statements, one channel per job
 * channel. The single path below and the batch path (./handle-batch.ts) share them and the steps.
 */
export type SendPath = {
  deps: SendPathDeps;
  now: () => Date;
  statements: SendPathStatements;
  email: Channel<OutgoingNotice>;
  sms: Channel<OutgoingSms>;
  checkpoint: (point: CrashPoint) => void;
  /** Claim → send → commit runs inside it (SendPathDeps.claimWindow). */
  claimWindow: LimitFunction;
};

export function createSendPath(deps: SendPathDeps, { maxStatementBatch }: { maxStatementBatch?: number } = {}): SendPath {
  return {
    deps,
    now: deps.now ?? (() => new Date()),
    statements: traceClaims(createSendPathStatements(deps.db, maxStatementBatch ? { maxBatch: maxStatementBatch } : {})),
    // One channel per job channel (lib/channels/): composing, sending and classifying live there.
    email: createEmailChannel({ transport: deps.mail, rateLimiter: deps.rateLimiter, settings: deps.settings }),
    sms: createSmsChannel({ sms: deps.sms, settings: deps.settings }),
    checkpoint: deps.checkpoint ?? (() => undefined),
    claimWindow: pLimit(deps.claimWindow ?? Number.POSITIVE_INFINITY),
  };
}

type AttemptOf = (outcome: AttemptRecord['outcome'], extra?: Partial<AttemptRecord>) => AttemptRecord;

/** A wake-up that passed load, policy, pause, breaker, token and window: the next step is its claim. */
export type ReadyToClaim = {
  delivery: Delivery;
  job: JobRow;
  decision: PolicyDecision;
  attempt: AttemptOf;
  log: Logger;
  channel: Channel<OutgoingNotice> | Channel<OutgoingSms>;
  recipientDomain: string;
  /** The ledger mode this wake-up runs in: the stored one from the worker's controls snapshot (no query), like the kill switch; settings.mode without one. */
  mode: SendPathDeps['settings']['mode'];
};

/** A claim committed (or, in shadow mode, refused and sent anyway): what the send and its commit need. */
export type Claimed = { ownedToken: string | null; oneTimeCode: string; claimCommittedAt: number; claimCommittedInstant: Date };

export type Step<T> = { done: HandlerResult } | { next: T };

export function createWakeupHandler(deps: SendPathDeps): WakeupHandler {
  const path = createSendPath(deps);
  return async (delivery: Delivery): Promise<HandlerResult> => {
    const prepared = await prepareWakeup(path, delivery);
    return 'done' in prepared ? prepared.done : sendOne(path, prepared.next);
  };
}

/** One notice: claim → compose → send → commit, each step the batch path shares. */
export async function sendOne(path: SendPath, ready: ReadyToClaim): Promise<HandlerResult> {
  const { job } = ready;
  return job.channel === 'sms' ? sendOneBy(path, ready, path.sms) : sendOneBy(path, ready, path.email);
}

/**
 * Composed, then claimed, then sent. The message is built before the claim, with the one-time
 * code the claim will record for a new row, so the claim-to-commit interval (the one a crash
 * turns into a quarantined claim) holds the send and the commit, not the rendering: measured on
 * the batched path, composing a batch of 50 was ~25 ms of it. Nothing leaves before the claim is
 * committed, as ever. A re-claimed row keeps the code minted at its first claim: the message is
 * then composed again with that code. A notice that does not compose is still claimed and its
 * refusal committed, exactly as when it composed after the claim.
 *
 * From the claim to the result commit it holds a place in the claim window (WORKER_CLAIM_WINDOW):
 * the handlers of a burst all reach their claims together, and each one between claim and commit
 * shares the one event loop with the others, so the last one's interval grows with their number
 * (claim-to-commit p99 at 1 × 32, 361/s: 31–39 ms unlimited, 19–21 ms with a window of 16, at
 * ~10 % of the peak: no window unless the operator sets one). The handlers beyond the window
 * load, decide and compose meanwhile, and claim as places free up.
 */
async function sendOneBy<Message>(path: SendPath, ready: ReadyToClaim, channel: Channel<Message>): Promise<HandlerResult> {
  const { job } = ready;
  const capture: SendCapture = { rendered: null, manageUrl: null, sendStartedAt: path.now() };
  const minted = mintOneTimeCode();
  const keep = path.deps.evidence?.wants(job) ?? false;
  const first = await composeCaptured(channel, { job, oneTimeCode: minted }, capture, { keep });
  claimWindowNotices.inc({ state: 'waiting' });
  return path.claimWindow(async () => {
    claimWindowNotices.dec({ state: 'waiting' });
    // The wait for a place may have outlasted the delivery (a relay holding the window's sends
    // to their deadline) or the worker: nothing is claimed yet, so stop as prepareWakeup would.
    if (ready.delivery.signal.aborted || path.deps.stopping?.aborted) throw new DeliveryAbortedError();
    claimWindowNotices.inc({ state: 'held' });
    try {
      const claimed = await claimWakeup(path, ready, minted);
      if ('done' in claimed) return claimed.done;
      const composed =
        claimed.next.oneTimeCode === minted ? first : await composeCaptured(channel, { job, oneTimeCode: claimed.next.oneTimeCode }, capture, { keep });
      capture.sendStartedAt = path.now();
      const outcome = await traceSend(composed.ok ? channel.send(composed.message, { signal: path.deps.stopping }) : Promise.resolve(composed.outcome));
      const sendFinishedAt = path.now();
      path.checkpoint('after_send');
      // A send we cut short ourselves (the worker stopping) says nothing about the transport.
      if (!path.deps.stopping?.aborted) path.deps.breakers?.record(ready.channel.name, outcome);
      return await finishWakeup(path, ready, claimed.next, { outcome, capture, sendFinishedAt });
    } finally {
      claimWindowNotices.dec({ state: 'held' });
    }
  });
}

/** Load → policy → pause → breaker → token → window: a result for the queue, or a wake-up ready for its claim. */
export async function prepareWakeup(path: SendPath, delivery: Delivery): Promise<Step<ReadyToClaim>> {
  const { deps, now, statements } = path;
  const { db, settings, logger } = deps;
  const startedAt = now();
  const mode = deps.controls?.current().ledgerMode ?? settings.mode;
  const { jobId, batchId } = delivery.wakeup;
  const loaded = await statements.loadJob(jobId);
  if (!loaded) {
    logger.warn({ jobId, queueMessageId: delivery.messageId }, 'wake-up for an unknown job; acked');
    untracedWakeup('unknown_job');
    return { done: { ack: true } };
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
    mode,
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
    return { done: { ack: true } };
  }
  // A job whose claim is still held belongs to that claim: only the claim attempt below
  // may decide about it (it will be refused). A released claim is fair game for policy.
  const policyApplies = (decision.kind === 'defer' || decision.kind === 'suppress') && (job.state === 'pending' || !(await isClaimHeld(db, job.noticeKey)));
  if (policyApplies && decision.kind === 'defer') {
    const deferred = await changeUnlessClaimed(db, { job, attempt, log }, async (tx) => {
      await deferJob(tx, { jobId: job.id, until: decision.until, reopen: true });
      await recordAttempt(tx, attempt('deferred', { detail: decision.cause }));
    });
    if (!deferred) return { done: { ack: true } };
    deferrals.inc({ notice_type: job.noticeType, cause: decision.cause });
    log.info({ cause: decision.cause, until: decision.until.toISOString() }, 'deferred');
    return { done: { ack: true, wakeAt: decision.until } };
  }
  if (policyApplies && decision.kind === 'suppress') return { done: await suppressWakeup(db, { job, attempt, log }, decision) };

  // An operator's pause (the kill switch) takes no claim and counts no attempt; the window keeps counting down.
  if (deps.controls && pauseFor(deps.controls.current(), job) && (job.state === 'pending' || !(await isClaimHeld(db, job.noticeKey)))) {
    const until = new Date(now().getTime() + deps.controls.refreshMs);
    const deferred = await changeUnlessClaimed(db, { job, attempt, log }, async (tx) => {
      await deferJob(tx, { jobId: job.id, until, reopen: true });
    });
    if (!deferred) return { done: { ack: true } };
    deferrals.inc({ notice_type: job.noticeType, cause: 'sending_paused' });
    return { done: { ack: true, wakeAt: until } };
  }

  // A transport whose breaker is open takes no claim: the job waits for its next probe, no attempt counted.
  const channel = job.channel === 'sms' ? path.sms : path.email;
  const transport = channel.name;
  const pausedUntil = deps.breakers?.pausedUntil(transport) ?? null;
  if (pausedUntil && (job.state === 'pending' || !(await isClaimHeld(db, job.noticeKey)))) {
    const deferred = await changeUnlessClaimed(db, { job, attempt, log }, async (tx) => {
      await deferJob(tx, { jobId: job.id, until: pausedUntil, reopen: true });
      await recordAttempt(tx, attempt('deferred', { detail: 'transport_down' }));
    });
    if (!deferred) return { done: { ack: true } };
    deferrals.inc({ notice_type: job.noticeType, cause: 'transport_down' });
    return { done: { ack: true, wakeAt: pausedUntil } };
  }

  // An SMS draws from its sender × destination-country bucket; an email from its domain's.
  // An SMS job without Twilio takes no token: it is refused as `sms_not_configured` below.
  const routed = channel.route(job);
  const { recipientDomain: domain, bucket } = routed instanceof Promise ? await routed : routed;
  const throttled = bucket ? await traceTokenWait(takeToken(bucket.limiter, settings.maxTokenWaitMs, bucket.key, delivery.signal)) : null;
  if (throttled !== null) {
    const until = new Date(now().getTime() + throttled);
    await db.transaction(async (tx) => {
      await deferJob(tx, { jobId: job.id, until });
      await recordAttempt(tx, attempt('deferred', { detail: 'rate_limited' }));
    });
    deferrals.inc({ notice_type: job.noticeType, cause: 'rate_limited' });
    return { done: { ack: true, wakeAt: until } };
  }

  // The token may have been waited for: a window that closed meanwhile is missed, never sent late.
  if (windowVerdict(job, now()).verdict === 'missed' && (job.state === 'pending' || !(await isClaimHeld(db, job.noticeKey)))) {
    return { done: await suppressWakeup(db, { job, attempt, log }, { kind: 'suppress', reason: 'window_missed', detail: 'window_missed' }) };
  }

  // Past this line the delivery may already be with another worker; before it, stop cleanly.
  if (delivery.signal.aborted) throw new DeliveryAbortedError();
  return { next: { delivery, job, decision, attempt, log, channel, recipientDomain: domain, mode } };
}

/**
 * The claim, committed before anything is sent; a refusal is a discard, a missed window or a
 * suppressed duplicate. `oneTimeCode` is what a new ledger row records: the code the message was
 * composed with.
 */
export async function claimWakeup(path: SendPath, ready: ReadyToClaim, oneTimeCode: string): Promise<Step<Claimed>> {
  const { deps, now, statements } = path;
  const { db } = deps;
  const { job, attempt, log } = ready;
  const claimToken = randomUUID();
  const claim = await statements.claim({
    noticeKey: job.noticeKey,
    noticeType: job.noticeType,
    identity: job.identity,
    revision: job.revision,
    jobId: job.id,
    claimToken,
    claimedBy: deps.workerId,
    recipientDomain: ready.recipientDomain,
    oneTimeCode,
    // The window is judged by the database's clock at the claim; a test's injected clock stands in for it.
    judgedAt: deps.now ? now() : null,
  });
  const claimCommittedAt = performance.now();
  const claimCommittedInstant = now();
  path.checkpoint('after_claim');

  if (claim) {
    claimsMinted.inc({ notice_type: job.noticeType, mode: ready.mode });
    log.debug({ reclaimed: claim.reclaimed }, 'claimed');
    return { next: { ownedToken: claimToken, oneTimeCode: claim.oneTimeCode, claimCommittedAt, claimCommittedInstant } };
  }
  // The claim also refuses a job that left pending after it was loaded: a cancel or an
  // evidence resolve committed in between. That job is final; nothing is sent, in either mode.
  const reloaded = await statements.loadJob(job.id);
  const left = reloaded?.job.state ?? 'missing';
  if (left !== 'pending' && left !== 'claimed') {
    await recordAttempt(db, attempt('discarded', { detail: `job_${left}` }));
    duplicatesSuppressed.inc({ notice_type: job.noticeType, reason: `job_${left}` });
    log.info({ state: left }, 'job left pending before its claim; discarded');
    return { done: { ack: true } };
  }
  const held = await getLedgerRow(db, { noticeKey: job.noticeKey });
  // Refused because the window closed between the check above and the claim's own: missed, not a duplicate.
  if ((!held || held.state === 'released') && windowVerdict(job, now()).verdict === 'missed') {
    return { done: await suppressWakeup(db, ready, { kind: 'suppress', reason: 'window_missed', detail: 'window_missed' }) };
  }
  const reason = `ledger_${held?.state ?? 'missing'}`;
  if (ready.mode === 'enforce') {
    await db.transaction(async (tx) => {
      if (held?.state === 'sent' || held?.state === 'suppressed') {
        await suppressJob(tx, { jobId: job.id, reason: held.state === 'sent' ? 'duplicate' : 'operator' });
      }
      await recordAttempt(tx, attempt('suppressed_duplicate', { detail: reason }));
    });
    duplicatesSuppressed.inc({ notice_type: job.noticeType, reason });
    log.info({ reason }, 'claim refused; duplicate suppressed');
    return { done: { ack: true } };
  }
  await recordAttempt(db, attempt('would_suppress', { detail: reason }));
  wouldSuppress.inc({ notice_type: job.noticeType });
  log.info({ reason }, 'shadow mode: claim refused, sending anyway');
  return { next: { ownedToken: null, oneTimeCode: held?.oneTimeCode ?? mintOneTimeCode(), claimCommittedAt, claimCommittedInstant } };
}

/** What a send ended as, for its commit and its evidence. */
export type SendResult = { outcome: ChannelOutcome; capture: SendCapture; sendFinishedAt: Date };

/** The result committed with its evidence entry (one statement or transaction); what the queue is told after. */
export async function finishWakeup(
  path: SendPath,
  ready: ReadyToClaim,
  claimed: Claimed,
  { outcome, capture, sendFinishedAt }: SendResult,
): Promise<HandlerResult> {
  const { deps, statements } = path;
  const { job, decision, attempt, log } = ready;
  const sentDetail = decision.kind === 'proceed' && decision.quietHoursOverridden ? 'quiet_hours_overridden' : null;
  // The files it was rendered from, stored once per process per version (a resolved promise after that).
  const templateVersionId = outcome.kind === 'accepted' ? await storedTemplateVersionId(deps.db, capture.templateVersion, log) : null;
  // Built before the commit and written by it: a worker killed after the commit leaves no notice without its entry.
  // The entry is only inserted (its insert trigger lists it unchained); the chain is the chainer's (lib/evidence/chain.ts), off this path.
  // The template pieces its HTML's trace names, stored once per process (a resolved promise after that); else the entry keeps the HTML.
  const piecesStored =
    capture.rendered?.channel === 'email' && capture.rendered.htmlTrace ? await storedTracePieces(deps.db, capture.rendered.htmlTrace, log) : false;
  const evidence = sendEvidenceEntry({
    recorder: deps.evidence,
    job,
    capture,
    outcome,
    claimCommittedAt: claimed.claimCommittedInstant,
    sendFinishedAt,
    piecesStored,
    log,
  });
  const result = await traceCommit(
    commitOutcome({
      deps,
      statements,
      job,
      transport: ready.channel.name,
      outcome,
      ownedToken: claimed.ownedToken,
      attempt,
      claimCommittedAt: claimed.claimCommittedAt,
      sentDetail,
      templateVersionId,
      evidence,
    }),
  );
  path.checkpoint('after_commit');
  log.info({ outcome: outcome.kind, errorClass: outcome.kind === 'accepted' ? undefined : outcome.errorClass }, 'send finished');
  return result;
}

/** A policy suppression, with its attempt and its event, in one transaction. */
async function suppressWakeup(
  db: Db,
  { job, attempt, log }: Pick<ReadyToClaim, 'job' | 'attempt' | 'log'>,
  suppression: Extract<PolicyDecision, { kind: 'suppress' }>,
): Promise<HandlerResult> {
  const suppressed = await changeUnlessClaimed(db, { job, attempt, log }, async (tx) => {
    await suppressJob(tx, { jobId: job.id, reason: suppression.reason });
    await recordAttempt(tx, attempt('suppressed_policy', { detail: suppression.detail }));
    await recordJobEvent(tx, suppressionEvent(job.id, suppression.reason));
  });
  if (!suppressed) return { ack: true };
  policySuppressions.inc({ notice_type: job.noticeType, reason: suppression.reason });
  if (suppression.reason === 'window_missed') windowMissed.inc({ notice_type: job.noticeType, category: job.category });
  log.info({ reason: suppression.reason, detail: suppression.detail }, 'suppressed by policy');
  return { ack: true };
}

/**
 * A policy's change to the job (a deferral, a suppression) with its attempt, in one transaction,
 * only while no claim on the notice is held (db/queries/jobs.ts holdJobForPolicy): the job was
 * loaded before, and another delivery of the same wake-up may have claimed it since. Otherwise
 * nothing changes but the attempt, which says why, and the wake-up is acked: the job is final
 * (discarded) or belongs to that claim (suppressed_duplicate), as a refused claim would say.
 * Returns whether the change was made.
 */
async function changeUnlessClaimed(
  db: Db,
  { job, attempt, log }: Pick<ReadyToClaim, 'job' | 'attempt' | 'log'>,
  change: (tx: Tx) => Promise<void>,
): Promise<boolean> {
  const refused = await db.transaction(async (tx) => {
    const hold = await holdJobForPolicy(tx, { jobId: job.id, noticeKey: job.noticeKey });
    if (hold.ok) {
      await change(tx);
      return null;
    }
    const final = hold.jobState !== 'pending' && hold.jobState !== 'claimed';
    const reason = final ? `job_${hold.jobState ?? 'missing'}` : `ledger_${hold.ledgerState ?? 'missing'}`;
    await recordAttempt(tx, attempt(final ? 'discarded' : 'suppressed_duplicate', { detail: reason }));
    return reason;
  });
  if (refused === null) return true;
  duplicatesSuppressed.inc({ notice_type: job.noticeType, reason: refused });
  log.info({ reason: refused }, 'the job changed since it was loaded; left as it is');
  return false;
}

/** "No such mailbox" stops every later notice to the address, as a provider's hard bounce does. */
async function suppressUnknownMailbox(tx: Tx, email: string, code: number | null | undefined): Promise<void> {
  await addRecipientSuppression(tx, { email, reason: 'hard_bounce', sourceEventId: null, note: `smtp ${code ?? ''} mailbox unknown`.trim() });
}

/** A policy suppression's event: a missed window is its own type, every other reason `notice.suppressed`. */
function suppressionEvent(jobId: string, reason: string) {
  return reason === 'window_missed'
    ? { type: 'notice.window_missed' as const, jobId, extra: { outcome: 'window_missed' } }
    : { type: 'notice.suppressed' as const, jobId, extra: { outcome: 'suppressed', reason } };
}

function notBefore(at: Date, retryAfterMs: number | undefined, now: (() => Date) | undefined): Date {
  if (retryAfterMs === undefined) return at;
  return new Date(Math.max(at.getTime(), (now ?? (() => new Date()))().getTime() + retryAfterMs));
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

/**
 * The channel composes; what the customer is shown is kept for the evidence record written after
 * the commit, and only when the job's type keeps one (`keep`): otherwise nothing holds the rendered
 * message from here to the send. A notice's HTML is ~20 KB of string, alive across the claim in
 * each of the process's handlers; held for nothing, it was the largest survivor of every young-
 * generation collection (issue 27: worker CPU −0.05 ms per notice, peak RSS −4 MB at 2 × 32).
 */
export async function composeCaptured<Message>(
  channel: Channel<Message>,
  input: ComposeInput,
  capture: SendCapture,
  { keep }: { keep: boolean },
): Promise<Ready<Message>> {
  const composed = await channel.compose(keep ? { ...input, traceHtml: true } : input);
  if (!composed.ok) return composed;
  if (keep) {
    capture.rendered = forEvidence(composed.shown.rendered);
    capture.manageUrl = composed.shown.manageUrl;
  }
  capture.templateVersion = composed.shown.templateVersion;
  return { ok: true, message: composed.message };
}

export type CommitParams = {
  deps: SendPathDeps;
  statements: SendPathStatements;
  job: JobRow;
  /** The transport the outcome came from (its breaker wakes a job released for our configuration). */
  transport: TransportName;
  outcome: ChannelOutcome;
  ownedToken: string | null;
  attempt: (outcome: AttemptRecord['outcome'], extra?: Partial<AttemptRecord>) => AttemptRecord;
  claimCommittedAt: number;
  /** What the `sent` attempt records beside the outcome (`quiet_hours_overridden`). */
  sentDetail: string | null;
  /** The stored template version the message was rendered from; null when none is known. */
  templateVersionId?: string | null;
  /** The send's evidence entry, written by whichever commit records the outcome; null for none. */
  evidence: NewEvidenceEntry | null;
};

async function commitOutcome({
  deps,
  statements,
  job,
  transport,
  outcome,
  ownedToken,
  attempt,
  claimCommittedAt,
  sentDetail,
  templateVersionId = null,
  evidence,
}: CommitParams): Promise<HandlerResult> {
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
      templateVersionId,
      evidence,
      providerStatus: outcome.provisional ? 'accepted' : null,
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
      await recordJobEvent(tx, { type: 'notice.outcome_unknown', jobId: job.id, extra: { outcome: 'outcome_unknown', errorClass: outcome.errorClass } });
      if (evidence) await insertEvidenceEntries(tx, [evidence]);
    });
    sendOutcomes.inc({ notice_type: job.noticeType, outcome: 'unknown' });
    return { ack: true };
  }

  if (outcome.failure === 'config_broken') return releaseUncounted({ deps, job, transport, outcome, ownedToken, attempt, evidence });

  // A required text refused for good for this number goes by email instead, as the same notice.
  const fallback = await commitSmsFallback({
    db,
    config: settings.noticeConfig,
    job,
    outcome,
    ownedToken,
    attempt,
    now: (deps.now ?? (() => new Date()))(),
    evidence,
  });
  if (fallback) return fallback;

  // The window is the retry budget (./backoff.ts): a temporary failure is retried until no attempt fits before the deadline.
  const plan = outcome.permanent
    ? null
    : planJobRetry({ job, now: (deps.now ?? (() => new Date()))(), settings, quietHours: quietHoursAtSend(settings.noticeConfig, job.noticeType) });
  // A throttle that said when to come back (429 Retry-After) is not asked again before then.
  const nextAttemptAt = plan?.kind === 'retry' ? notBefore(plan.at, outcome.retryAfterMs, deps.now) : null;
  if (plan?.kind === 'retry' && plan.atRisk)
    deps.logger.warn({ jobId: job.id, attempts: job.attempts + 1, errorClass: outcome.errorClass }, 'retrying past MAX_ATTEMPTS: at risk');
  const ours = await db.transaction(async (tx) => {
    // A claim no longer ours (on-call released it while the send hung, and another delivery took
    // it) leaves the job to that claim: failing it here would leave ledger sent, job failed once
    // that claim commits. The refusal's facts about the recipient still count.
    const owned = ownedToken ? await releaseClaim(tx, { noticeKey: job.noticeKey, claimToken: ownedToken }) : true;
    if (!owned) {
      if (outcome.mailboxUnknown && job.recipientEmail) await suppressUnknownMailbox(tx, job.recipientEmail, outcome.code);
      if (outcome.optOut && job.recipientPhone) await recordSmsStop(tx, job.recipientPhone);
      await recordAttempt(
        tx,
        attempt(outcome.permanent ? 'permanent_failure' : 'retryable_failure', { errorClass: outcome.errorClass, detail: 'claim_not_owned' }),
      );
      if (evidence) await insertEvidenceEntries(tx, [evidence]);
      return false;
    }
    if (nextAttemptAt) await retryJob(tx, { jobId: job.id, nextAttemptAt, errorClass: outcome.errorClass });
    else if (plan?.kind === 'window_closes') await missWindowAfterRetries(tx, { jobId: job.id, errorClass: outcome.errorClass });
    else await failJob(tx, { jobId: job.id, errorClass: outcome.errorClass });
    if (outcome.mailboxUnknown && job.recipientEmail) await suppressUnknownMailbox(tx, job.recipientEmail, outcome.code);
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
    if (plan?.kind === 'window_closes')
      await recordJobEvent(tx, { type: 'notice.window_missed', jobId: job.id, extra: { outcome: 'window_missed', errorClass: outcome.errorClass } });
    else if (!nextAttemptAt) await recordJobEvent(tx, { type: 'notice.failed', jobId: job.id, extra: { outcome: 'failed', errorClass: outcome.errorClass } });
    if (evidence) await insertEvidenceEntries(tx, [evidence]);
    return true;
  });
  sendOutcomes.inc({ notice_type: job.noticeType, outcome: outcome.permanent ? 'permanent' : 'retryable' });
  if (!ours) {
    deps.logger.warn({ jobId: job.id, errorClass: outcome.errorClass }, 'refused, but the claim is no longer ours: the job left to its holder');
    return { ack: true };
  }
  if (plan?.kind === 'window_closes') {
    policySuppressions.inc({ notice_type: job.noticeType, reason: 'window_missed' });
    windowMissed.inc({ notice_type: job.noticeType, category: job.category });
  }
  return nextAttemptAt ? { ack: true, wakeAt: nextAttemptAt } : { ack: true };
}
