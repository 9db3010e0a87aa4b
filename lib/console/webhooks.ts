import 'server-only';
import type { DbOrTx } from '@/db/client';
import { endpointDeliveryCounts, listDeliveryAttempts, listTroubledEndpoints } from '@/db/queries/webhooks';
import type { ConsoleEndpointView, DeliveryAttemptView } from '@/lib/api/console/webhooks';
import { listWebhookEndpoints } from '@/lib/webhooks/manage';

/** The Webhooks page's loaders, shared by its route handlers and its server render. */

export async function loadWebhookEndpoints(db: DbOrTx): Promise<ConsoleEndpointView[]> {
  const [endpoints, counts] = await Promise.all([listWebhookEndpoints(db), endpointDeliveryCounts(db)]);
  return endpoints.map((endpoint) => ({ ...endpoint, deliveries: counts.get(endpoint.id) ?? { pending: 0, failed: 0, delivered: 0 } }));
}

/** One page of the delivery log (per endpoint, per notice), newest first; `next` continues it. */
export async function loadDeliveryLog(
  db: DbOrTx,
  { endpoint, notice, before, limit }: { endpoint?: string; notice?: string; before?: string; limit: number },
): Promise<{ attempts: DeliveryAttemptView[]; next: string | null }> {
  const rows = await listDeliveryAttempts(db, { endpointId: endpoint, jobId: notice, beforeId: before ? Number(before) : undefined, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    attempts: page.map((row) => ({ ...row, at: row.at.toISOString() })),
    next: rows.length > limit && last ? String(last.id) : null,
  };
}

/** For the banner on every page: endpoints failing now, or disabled for failures (410 or WEBHOOK_DISABLE_AFTER). */
export async function loadTroubledEndpoints(db: DbOrTx) {
  const rows = await listTroubledEndpoints(db);
  return rows.map((row) => ({
    id: row.id,
    url: row.url,
    failingSince: row.failingSince?.toISOString() ?? null,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    disabledReason: row.disabledReason,
  }));
}
