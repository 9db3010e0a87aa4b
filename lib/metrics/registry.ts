import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry per process. The worker exposes it on WORKER_METRICS_PORT; the console's
 * /api/metrics exposes its own (database-derived gauges) — the same names either way.
 */
export const registry = new Registry();
const DEFAULT_PREFIX = 'notice_ledger_process_';
collectDefaultMetrics({ register: registry, prefix: DEFAULT_PREFIX });
// prom-client names three of its gauges like counters (`promtool check metrics`: non-counter
// metrics should not have "_total" suffix). Each is the sum of its by-type sibling, which
// stays: sum(notice_ledger_process_nodejs_active_handles) is the old _total, and so on.
for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
  registry.removeSingleMetric(`${DEFAULT_PREFIX}${name}`);
}

export const claimsMinted = new Counter({
  name: 'notice_ledger_claims_minted_total',
  help: 'Ledger claims written (insert succeeded or released row re-claimed).',
  labelNames: ['notice_type', 'mode'] as const,
  registers: [registry],
});

export const duplicatesSuppressed = new Counter({
  name: 'notice_ledger_duplicates_suppressed_total',
  help: 'Sends refused because another attempt owns or completed the claim.',
  labelNames: ['notice_type', 'reason'] as const,
  registers: [registry],
});

export const wouldSuppress = new Counter({
  name: 'notice_ledger_would_suppress_total',
  help: 'Shadow mode: duplicates that enforce mode would have suppressed (sent anyway).',
  labelNames: ['notice_type'] as const,
  registers: [registry],
});

export const sendOutcomes = new Counter({
  name: 'notice_ledger_send_outcomes_total',
  help: 'Outcomes of the provider hand-over by class: accepted, retryable, permanent, unknown.',
  labelNames: ['notice_type', 'outcome'] as const,
  registers: [registry],
});

export const claimToCommitSeconds = new Histogram({
  name: 'notice_ledger_claim_to_commit_seconds',
  help: 'Time from the committed claim to the committed result; a widening gap widens the crash window.',
  labelNames: ['notice_type'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const emailBatchSize = new Histogram({
  name: 'notice_ledger_email_batch_size',
  help: 'Notices per batched provider call (lib/jobs/handle-batch.ts): how full EMAIL_BATCH_SIZE and EMAIL_BATCH_GATHER let batches get.',
  labelNames: ['transport'] as const,
  buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500],
  registers: [registry],
});

export const claimWindowNotices = new Gauge({
  name: 'notice_ledger_claim_window_notices',
  help: "This process's notices at its claim window (WORKER_CLAIM_WINDOW): held (between claim and result commit) or waiting (composed, waiting for a place before the claim). Waiting most of the time: the window, not the handlers, sets the rate.",
  labelNames: ['state'] as const,
  registers: [registry],
});
// Both series from the start, so a dashboard shows 0 rather than nothing before the first notice.
claimWindowNotices.set({ state: 'held' }, 0);
claimWindowNotices.set({ state: 'waiting' }, 0);

export const quarantinedClaims = new Gauge({
  name: 'notice_ledger_quarantined_claims',
  help: 'Claims older than QUARANTINE_AFTER still in state claimed.',
  registers: [registry],
});

export const policySuppressions = new Counter({
  name: 'notice_ledger_policy_suppressions_total',
  help: 'Notices not sent by policy: window missed (its latest instant passed, or quiet hours covered the rest of a courtesy window), recipient suppressed, evidence resolved.',
  labelNames: ['notice_type', 'reason'] as const,
  registers: [registry],
});

export const windowMissed = new Counter({
  name: 'notice_ledger_window_missed_total',
  help: 'Notices suppressed at send because their window closed first (never sent late), by notice type and category (required, courtesy).',
  labelNames: ['notice_type', 'category'] as const,
  registers: [registry],
});

export const deferrals = new Counter({
  name: 'notice_ledger_deferrals_total',
  help: 'Wake-ups deferred without spending an attempt: early, backoff not over, quiet hours, domain rate limit.',
  labelNames: ['notice_type', 'cause'] as const,
  registers: [registry],
});

export const wakeupsRepublished = new Counter({
  name: 'notice_ledger_wakeups_republished_total',
  help: 'Wake-ups the sweeper published again for pending, due jobs whose wake-up was lost.',
  registers: [registry],
});

export const wakeupsDispatched = new Counter({
  name: 'notice_ledger_wakeups_dispatched_total',
  help: 'Wake-ups published by the dispatcher as their jobs came within the hot-queue horizon (lib/queue/horizon.ts).',
  registers: [registry],
});

export const deadLetteredWakeups = new Gauge({
  name: 'notice_ledger_wakeups_dead_lettered',
  help: 'Wake-ups the queue gave up on (RabbitMQ: in the dead-letter queue, past the delivery limit, kept 7 days; pg-boss: failed, past its retries). Their jobs stay pending and the sweeper wakes them again.',
  registers: [registry],
});

export const providerDropped = new Counter({
  name: 'notice_ledger_provider_dropped_total',
  help: 'Notices a provider accepted provisionally (SendGrid 202) and then dropped without sending (its dropped event), by provider.',
  labelNames: ['provider'],
  registers: [registry],
});

export const orphanEvents = new Counter({
  name: 'notice_ledger_orphan_events_total',
  help: 'Hand-over events stored whose correlation names no ledger row (after a failover: a claim the new primary lacks; the post-failover pass records them sent), by provider.',
  labelNames: ['provider'],
  registers: [registry],
});

export const orphansResolved = new Counter({
  name: 'notice_ledger_orphans_resolved_total',
  help: 'Notices the post-failover pass recorded as sent from an orphan provider event, so no wake-up sends them again.',
  registers: [registry],
});

export const webhookEventsSkipped = new Counter({
  name: 'notice_ledger_webhook_events_skipped_total',
  help: 'Events of an authentic provider batch not stored because they were malformed (their siblings were stored), by provider and reason.',
  labelNames: ['provider', 'reason'] as const,
  registers: [registry],
});

export const providerMessages = new Gauge({
  name: 'notice_ledger_provider_messages',
  help: 'Messages with provider events received in the last 24 h, by channel, provider, notice type and status (accepted, delivered, bounced, complained).',
  labelNames: ['channel', 'provider', 'notice_type', 'status'] as const,
  registers: [registry],
});

export const handedOver = new Gauge({
  name: 'notice_ledger_handed_over',
  help: 'Notices we handed over (ledger `sent`) in the hour before the latest overview sample, by channel and provider (lib/metrics/delivery-gap.ts).',
  labelNames: ['channel', 'provider'] as const,
  registers: [registry],
});

export const deliveredAfterHandover = new Gauge({
  name: 'notice_ledger_delivered',
  help: 'Of notice_ledger_handed_over, those with a provider delivered event; absent for a channel and provider with no delivery evidence.',
  labelNames: ['channel', 'provider'] as const,
  registers: [registry],
});

export const deliveryGap = new Gauge({
  name: 'notice_ledger_delivery_gap',
  help: 'notice_ledger_handed_over minus notice_ledger_delivered (handed over, no delivered event yet); absent for a channel and provider with no delivery evidence.',
  labelNames: ['channel', 'provider'] as const,
  registers: [registry],
});

export const deliveryEvidence = new Gauge({
  name: 'notice_ledger_delivery_evidence',
  help: '1 when the channel and provider sent any delivered event in the last 7 days, 0 when none ("no delivery evidence": the gap is unknown, not 0).',
  labelNames: ['channel', 'provider'] as const,
  registers: [registry],
});

export const overviewSampleAge = new Gauge({
  name: 'notice_ledger_overview_sample_age_seconds',
  help: 'Seconds since the newest overview sample (the worker writes one every OVERVIEW_SAMPLE_EVERY); the delivery gauges are as of it.',
  registers: [registry],
});

export const replayOutcomes = new Gauge({
  name: 'notice_ledger_replay_outcomes',
  help: 'Notices of each running replay batch by outcome (sent, suppressed_duplicate, failed); a batch leaves the label set when it stops running.',
  labelNames: ['batch_id', 'outcome'] as const,
  registers: [registry],
});

export const webhookRequestsRejected = new Counter({
  name: 'notice_ledger_webhook_requests_rejected_total',
  help: 'Provider webhook requests refused before anything was stored, by provider and refusal kind (unauthenticated: signature, credentials or replay window; invalid_input; not_configured).',
  labelNames: ['provider', 'reason'] as const,
  registers: [registry],
});

export const oldestPendingAge = new Gauge({
  name: 'notice_ledger_oldest_pending_age_seconds',
  help: "Per notice type, how long the pending job due longest ago has been due (0 while it is not due yet): the overview's oldest pending.",
  labelNames: ['notice_type'] as const,
  registers: [registry],
});

export const oldestPendingToDeadline = new Gauge({
  name: 'notice_ledger_oldest_pending_seconds_to_deadline',
  help: "Per notice type, seconds from now to the deadline of the overview's oldest pending job; below zero it is past its deadline and will not be sent.",
  labelNames: ['notice_type'] as const,
  registers: [registry],
});

export const duePendingToDeadline = new Gauge({
  name: 'notice_ledger_due_pending_seconds_to_deadline',
  help: 'Per notice type, seconds from now to the nearest deadline among pending jobs due for at least a minute (retrying, deferred, or not picked up); no series when there is none.',
  labelNames: ['notice_type'] as const,
  registers: [registry],
});

export const objectiveSeconds = new Gauge({
  name: 'notice_ledger_objective_seconds',
  help: 'Objectives the alert rules compare against, set by each worker from its settings: claim_to_commit_p99 is CLAIM_TO_COMMIT_OBJECTIVE.',
  labelNames: ['objective'] as const,
  registers: [registry],
});

export const pendingNearDeadline = new Gauge({
  name: 'notice_ledger_pending_near_deadline',
  help: 'Per notice type, due pending jobs within an hour of their deadline (the overview\'s "near deadline").',
  labelNames: ['notice_type'] as const,
  registers: [registry],
});

export const windowAtRisk = new Gauge({
  name: 'notice_ledger_window_at_risk',
  help: 'Notices due (pending) or claimed and not sent whose send window closes within WINDOW_AT_RISK_WITHIN, and required ones still retrying after MAX_ATTEMPTS temporary failures, by notice type and region (none: scheduled without one).',
  labelNames: ['notice_type', 'region'] as const,
  registers: [registry],
});

export const complianceGaps = new Gauge({
  name: 'notice_ledger_compliance_gaps',
  help: 'Open compliance gaps: required notices an event called for that could not be planned inside their window, not yet resolved, by notice type and region.',
  labelNames: ['notice_type', 'region'] as const,
  registers: [registry],
});

/** Set by the worker's breakers (lib/transport/breaker.ts); alert NoticeLedgerTransportDown reads it. */
export const transportUp = new Gauge({
  name: 'notice_ledger_transport_up',
  help: '1 while this worker sends through the transport; 0 while its breaker is open (nothing is claimed for it, it is only probed).',
  labelNames: ['transport'] as const,
  registers: [registry],
});

/**
 * Set by each worker from runtime_controls (lib/controls/worker-controls.ts): 1 for the ledger mode
 * it applies now, 0 for the other. `sum by (mode)` over the fleet shows a worker that has not yet
 * seen a switch; every worker reads the one stored mode, so it settles within RUNTIME_CONTROLS_REFRESH.
 */
export const ledgerModeGauge = new Gauge({
  name: 'notice_ledger_mode',
  help: 'The ledger mode this worker applies: 1 for it, 0 for the other (shadow sends duplicates and counts them; enforce suppresses them).',
  labelNames: ['mode'] as const,
  registers: [registry],
});

/** Set by each worker from runtime_controls (lib/controls/worker-controls.ts); alert NoticeLedgerSendingPaused reads it. */
export const sendingPaused = new Gauge({
  name: 'notice_ledger_sending_paused',
  help: '1 while an operator pause holds: scope all (target *), notice_type or channel. Nothing in its scope is claimed meanwhile.',
  labelNames: ['scope', 'target'] as const,
  registers: [registry],
});

export const providerReconciles = new Counter({
  name: 'notice_ledger_reconcile_total',
  help: 'Claims the provider reconciler asked its provider about (Postmark Messages API, SendGrid Email Logs), by provider and outcome: found (recorded sent), not_found (asked again), gave_up (left to a person), failed (lookup error or 429, asked again).',
  labelNames: ['provider', 'outcome'],
  registers: [registry],
});
