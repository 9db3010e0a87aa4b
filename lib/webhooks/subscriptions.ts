import type { DbOrTx } from '@/db/client';
import { listSubscribedTypes } from '@/db/queries/webhooks';
import type { WebhookEventType } from './events';

/**
 * Which event types some enabled endpoint subscribes to, cached per process for
 * WEBHOOK_SUBSCRIPTIONS_TTL, so a deployment without endpoints writes no outbox row and runs no
 * extra statement on the send path (one small query per process per TTL). The outbox statements
 * check the endpoints again themselves, so a stale "yes" writes nothing; a stale "no" means an
 * endpoint created less than the TTL ago misses that event. `refreshWebhookSubscriptions` is
 * called after an endpoint changes in this process.
 */
let cached: { types: Set<string>; until: number } | null = null;
let ttlMs = 5_000;
let loading: Promise<Set<string>> | null = null;

export function setWebhookSubscriptionsTtl(ms: number): void {
  ttlMs = ms;
}

export function refreshWebhookSubscriptions(): void {
  cached = null;
}

export async function subscribedTo(db: DbOrTx, type: WebhookEventType): Promise<boolean> {
  if (cached && cached.until > Date.now()) return cached.types.has(type);
  loading ??= listSubscribedTypes(db)
    .then((types) => {
      const set = new Set(types);
      cached = { types: set, until: Date.now() + ttlMs };
      return set;
    })
    .finally(() => {
      loading = null;
    });
  return (await loading).has(type);
}
