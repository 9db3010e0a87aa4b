import type { DbOrTx } from '@/db/client';
import type { Channel } from '@/db/schema/states';
import { countAcceptedVsDelivered } from '@/db/queries/events';
import { deliveryGap, providerMessages } from './registry';

const DELIVERY_WINDOW_MS = 24 * 3_600_000;

/** Twilio carries SMS; every other provider is a mail provider. */
export function channelOfProvider(provider: string): Channel {
  return provider === 'twilio' ? 'sms' : 'email';
}

/**
 * Accepted vs delivered, read from provider_events at scrape time and set on the process's
 * registry, the way the quarantine gauge is: the console's /api/metrics and the worker's
 * /metrics both call it before rendering, so either answers with the same, current figure.
 * One query sets both gauges.
 */
export async function refreshDeliveryGauges(
  db: DbOrTx,
  { now = new Date(), windowMs = DELIVERY_WINDOW_MS }: { now?: Date; windowMs?: number } = {},
): Promise<void> {
  const rows = await countAcceptedVsDelivered(db, { from: new Date(now.getTime() - windowMs), to: new Date(now.getTime() + 1) });
  providerMessages.reset();
  deliveryGap.reset();
  for (const row of rows) {
    const channel = channelOfProvider(row.provider);
    for (const status of ['accepted', 'delivered', 'bounced', 'complained'] as const) {
      providerMessages.set({ channel, provider: row.provider, notice_type: row.noticeType, status }, row[status]);
    }
    deliveryGap.set({ channel, provider: row.provider, notice_type: row.noticeType }, row.gap);
  }
}
