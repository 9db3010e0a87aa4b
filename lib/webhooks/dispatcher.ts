import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import type { Db } from '@/db/client';
import { claimDueDeliveries, recordDeliveryResult, type DeliveryResult, type DueDelivery } from '@/db/queries/webhooks';
import type { Logger } from '@/lib/log';
import { webhookDeliveries } from '@/lib/metrics/webhooks';
import { startPeriodic, type PeriodicHandle } from '@/lib/periodic';
import { openWebhookSecret, signingSecrets } from './secrets';
import { isIP } from 'node:net';
import { addressAllowed, guardedLookup, RefusedAddressError, type AllowList } from './url';
import { refreshWebhookSubscriptions } from './subscriptions';

export type DispatcherSettings = {
  everyMs: number;
  timeoutMs: number;
  /** Delay before each attempt, the first included (WEBHOOK_RETRY_SCHEDULE). */
  scheduleMs: readonly number[];
  disableAfterMs: number;
  allow: AllowList;
  noticeKeySecret: string;
  batch?: number;
};

/** The body a delivery sends: the same bytes on every attempt (built from the stored row only). */
export function deliveryBody(delivery: Pick<DueDelivery, 'type' | 'createdAt' | 'payload' | 'sequence'>): string {
  return JSON.stringify({ type: delivery.type, timestamp: delivery.createdAt.toISOString(), data: { ...delivery.payload, sequence: delivery.sequence } });
}

/** `webhook-signature`: one `v1,<base64>` per secret in its overlap, space-separated (Standard Webhooks). */
export function signDelivery({ delivery, body, at, noticeKeySecret }: { delivery: DueDelivery; body: string; at: Date; noticeKeySecret: string }): string {
  const signatures: string[] = [];
  for (const key of signingSecrets(delivery.secrets, at)) {
    const secret = openWebhookSecret({ sealed: key.sealed, endpointId: delivery.endpointId, keyId: key.keyId, noticeKeySecret });
    if (secret) signatures.push(new Webhook(secret).sign(delivery.webhookId, at, body));
  }
  return signatures.join(' ');
}

/** An HTTP-date (RFC 9110 §5.6.7: IMF-fixdate, or the obsolete RFC 850 and asctime forms). */
const httpDate =
  /^(?:[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/;

/**
 * `Retry-After` (RFC 9110 §10.2.3) as a delay in ms: delta-seconds, or an HTTP-date (a date past
 * is 0). Null when absent or unreadable; planNext caps it.
 */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  const text = value?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Math.min(Number(text), Number.MAX_SAFE_INTEGER / 1_000) * 1_000;
  if (!httpDate.test(text)) return null;
  // asctime carries no zone; HTTP dates are always GMT.
  const at = Date.parse(text.endsWith('GMT') ? text : `${text} GMT`);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/**
 * What happens after attempt `attempt` (1-based) answered `status`: delivered on 2xx; a 410 disables
 * the endpoint; otherwise the next step of the schedule, or Retry-After when that is later (capped
 * at the schedule's longest step, so an endpoint cannot park its events for a year); failed when
 * the schedule has no step left (Retry-After never adds attempts).
 */
export function planNext({
  attempt,
  status,
  retryAfterMs,
  scheduleMs,
  now,
}: {
  attempt: number;
  status: number | null;
  retryAfterMs: number | null;
  scheduleMs: readonly number[];
  now: Date;
}): Pick<DeliveryResult, 'outcome' | 'disable'> {
  if (status !== null && status >= 200 && status < 300) return { outcome: { kind: 'delivered' }, disable: null };
  if (status === 410) return { outcome: { kind: 'failed' }, disable: 'gone' };
  const step = scheduleMs[attempt];
  if (step === undefined) return { outcome: { kind: 'failed' }, disable: null };
  const asked = Math.min(retryAfterMs ?? 0, Math.max(...scheduleMs));
  return { outcome: { kind: 'retry', at: new Date(now.getTime() + Math.max(step, asked)) }, disable: null };
}

type Answer = { status: number | null; retryAfter: string | undefined; error: string | null };

function post({
  url,
  body,
  headers,
  timeoutMs,
  allow,
}: {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allow: AllowList;
}): Promise<Answer> {
  return new Promise((resolve) => {
    const target = new URL(url);
    // An address literal is never looked up, so it is checked here instead.
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !addressAllowed(literal, literal, allow)) return resolve({ status: null, retryAfter: undefined, error: 'address_refused' });
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString(), ...headers },
        lookup: guardedLookup(allow),
        timeout: timeoutMs,
      },
      (response) => {
        // The answer's body is not kept (it may be anything); read and dropped so the socket ends.
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? null, retryAfter: response.headers['retry-after'], error: null }));
        response.on('error', () => resolve({ status: response.statusCode ?? null, retryAfter: undefined, error: 'response_aborted' }));
      },
    );
    const deadline = setTimeout(() => request.destroy(new Error('timeout')), timeoutMs);
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      resolve({
        status: null,
        retryAfter: undefined,
        error: error instanceof RefusedAddressError ? 'address_refused' : error.message === 'timeout' ? 'timeout' : (error.code ?? 'request_failed'),
      });
    });
    request.on('close', () => clearTimeout(deadline));
    request.end(body);
  });
}

/** One delivery attempt: sign, POST within the timeout, record the result. */
export async function attemptDelivery(db: Db, delivery: DueDelivery, settings: DispatcherSettings, logger: Logger): Promise<void> {
  const body = deliveryBody(delivery);
  const at = new Date();
  const headers = {
    'webhook-id': delivery.webhookId,
    'webhook-timestamp': Math.floor(at.getTime() / 1000).toString(),
    'webhook-signature': signDelivery({ delivery, body, at, noticeKeySecret: settings.noticeKeySecret }),
  };
  const started = performance.now();
  const answer = await post({ url: delivery.url, body, headers, timeoutMs: settings.timeoutMs, allow: settings.allow });
  const latencyMs = Math.round(performance.now() - started);
  const now = new Date();
  const plan = planNext({
    attempt: delivery.attempts,
    status: answer.status,
    retryAfterMs: parseRetryAfter(answer.retryAfter, now),
    scheduleMs: settings.scheduleMs,
    now,
  });
  const disabled = await recordDeliveryResult(db, {
    eventId: delivery.eventId,
    endpointId: delivery.endpointId,
    attempt: delivery.attempts,
    status: answer.status,
    error: answer.error,
    latencyMs,
    ...plan,
    failingLimit: new Date(now.getTime() - settings.disableAfterMs),
  });
  const outcome = plan.disable === 'gone' ? 'gone' : answer.error === 'address_refused' ? 'refused' : plan.outcome.kind;
  webhookDeliveries.inc({ outcome });
  if (disabled) {
    refreshWebhookSubscriptions();
    logger.warn({ endpointId: delivery.endpointId, reason: disabled }, 'webhook endpoint disabled');
  }
  if (outcome !== 'delivered')
    logger.info(
      { endpointId: delivery.endpointId, webhookId: delivery.webhookId, attempt: delivery.attempts, status: answer.status, error: answer.error, outcome },
      'webhook attempt not delivered',
    );
}

/** One pass: claim due deliveries and attempt them concurrently; returns how many were attempted. */
export async function dispatchDue(db: Db, settings: DispatcherSettings, logger: Logger): Promise<number> {
  const due = await claimDueDeliveries(db, { limit: settings.batch ?? 50, leaseMs: 2 * settings.timeoutMs + 1_000 });
  await Promise.all(due.map((delivery) => attemptDelivery(db, delivery, settings, logger)));
  return due.length;
}

/** The worker's dispatcher: passes every `everyMs`, a full batch followed at once by the next. */
export function startWebhookDispatcher({ db, settings, logger }: { db: Db; settings: DispatcherSettings; logger: Logger }): PeriodicHandle {
  const batch = settings.batch ?? 50;
  return startPeriodic({
    every: settings.everyMs,
    runAtStart: true,
    run: async (isStopped) => {
      while (!isStopped() && (await dispatchDue(db, settings, logger)) >= batch);
    },
    onError: (error) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'webhook dispatch failed'),
  });
}
