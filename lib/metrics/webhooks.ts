import { Counter, Gauge } from 'prom-client';
import type { DbOrTx } from '@/db/client';
import { webhookHealth } from '@/db/queries/webhooks';
import { registry } from './registry';

export const webhookDeliveries = new Counter({
  name: 'notice_ledger_webhook_deliveries_total',
  help: 'Outbound webhook attempts by outcome: delivered, retry (answered or not, to be tried again), failed (schedule ran out), gone (410, endpoint disabled), refused (address not allowed).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const webhookOldestUndelivered = new Gauge({
  name: 'notice_ledger_webhook_oldest_undelivered_seconds',
  help: 'Age of the oldest outbox event not yet delivered to an enabled endpoint (0: none).',
  registers: [registry],
});

export const webhookEndpoints = new Gauge({
  name: 'notice_ledger_webhook_endpoints',
  help: 'Webhook endpoints by state: failing (enabled, no success since its last failure) and disabled.',
  labelNames: ['state'] as const,
  registers: [registry],
});

/** The database-derived webhook gauges, read at scrape time. */
export async function refreshWebhookGauges(db: DbOrTx): Promise<void> {
  const health = await webhookHealth(db);
  webhookOldestUndelivered.set(health.oldestUndeliveredSeconds);
  webhookEndpoints.set({ state: 'failing' }, health.failing);
  webhookEndpoints.set({ state: 'disabled' }, health.disabled);
}
