import { Gauge, type Registry } from 'prom-client';
import type { DbOrTx } from '../../db/client';
import { countAcceptedVsDelivered, type DeliveryGapRow } from '../../db/queries/events';

export type DeliveryGauges = { messages: Gauge<'provider' | 'notice_type' | 'status'>; gap: Gauge<'provider' | 'notice_type'> };

/**
 * Accepted vs delivered, read from provider_events at scrape time (the console's /api/metrics
 * or the worker's port: call once per registry). Both gauges share one query per scrape: the
 * result is reused for `cacheMs`, so two collect callbacks in the same scrape cost one query.
 */
export function registerDeliveryGauges({
  registry,
  db,
  windowMs = 24 * 3_600_000,
  cacheMs = 5_000,
}: {
  registry: Registry;
  db: () => DbOrTx;
  windowMs?: number;
  cacheMs?: number;
}): DeliveryGauges {
  let cached: { at: number; rows: Promise<DeliveryGapRow[]> } | null = null;
  const load = (): Promise<DeliveryGapRow[]> => {
    const now = Date.now();
    if (cached && now - cached.at < cacheMs) return cached.rows;
    const rows = countAcceptedVsDelivered(db(), { from: new Date(now - windowMs), to: new Date(now + 1) });
    cached = { at: now, rows };
    rows.catch(() => {
      cached = null;
    });
    return rows;
  };
  const messages = new Gauge({
    name: 'notice_ledger_provider_messages',
    help: 'Messages with provider events received in the last window, by provider, notice type and status (accepted, delivered, bounced, complained).',
    labelNames: ['provider', 'notice_type', 'status'] as const,
    registers: [registry],
    async collect() {
      const rows = await load();
      this.reset();
      for (const row of rows) {
        for (const status of ['accepted', 'delivered', 'bounced', 'complained'] as const) {
          this.set({ provider: row.provider, notice_type: row.noticeType, status }, row[status]);
        }
      }
    },
  });
  const gap = new Gauge({
    name: 'notice_ledger_delivery_gap',
    help: 'Messages the provider accepted in the last window with no delivered event yet.',
    labelNames: ['provider', 'notice_type'] as const,
    registers: [registry],
    async collect() {
      const rows = await load();
      this.reset();
      for (const row of rows) this.set({ provider: row.provider, notice_type: row.noticeType }, row.gap);
    },
  });
  return { messages, gap };
}
