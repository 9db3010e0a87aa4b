import type { DbOrTx } from '@/db/client';
import type { Channel } from '@/db/schema/states';
import { countAcceptedVsDelivered } from '@/db/queries/events';
import { countHandoverVsDelivery, latestSampleAt, readLatestSamples, type SampleRow } from '@/db/queries/overview-samples';
import { deliveredAfterHandover, deliveryEvidence, deliveryGap, handedOver, overviewSampleAge, providerMessages } from './registry';

const PROVIDER_EVENTS_WINDOW_MS = 24 * 3_600_000;

/**
 * Accepted vs delivered, the one definition the overview's chart and table, the gauges and the
 * alert share (issue 30 item 2):
 * - **handed over** ("accepted"): notices whose `sent` attempt started in the hour before the
 *   sample, with their ledger row `sent` — our own hand-over (SMTP 250, an HTTP provider's
 *   2xx), whatever the provider reports later;
 * - **delivered**: of those, the ones with a provider `delivered` event, received any time;
 * - **gap**: handed over minus delivered (mail in flight counts: a few is normal);
 * - **no delivery evidence**: a channel whose provider sent no `delivered` event in the last
 *   7 days (the SMTP relay's come through the generic webhook; another provider's do not count) (a relay with no webhooks, Postmark without its delivery webhook) has delivered and
 *   gap null, shown as "no delivery evidence", never 0.
 * The worker's sample writer computes it (lib/metrics/overview-writer.ts) and stores it in
 * overview_samples; everyone else reads the stored figures, so they cannot disagree.
 */
export const DELIVERY_WINDOW_MS = 3_600_000;
export const DELIVERY_EVIDENCE_LOOKBACK_MS = 7 * 86_400_000;

export type DeliveryFigure = { channel: Channel; provider: string; handedOver: number; delivered: number | null; gap: number | null };

/** Twilio carries SMS; every other provider is a mail provider. */
export function channelOfProvider(provider: string): Channel {
  return provider === 'twilio' ? 'sms' : 'email';
}

/** The transport that hands a channel's mail over: Twilio for SMS, EMAIL_PROVIDER for email. */
export function providerOfChannel(channel: Channel, emailProvider: string): string {
  return channel === 'sms' ? 'twilio' : emailProvider;
}

/** The provider_events.provider an email transport's events arrive under: the SMTP relay's through the generic webhook. */
export function eventProvidersOf(emailProvider: string): string[] {
  return emailProvider === 'smtp' ? ['generic'] : [emailProvider];
}

export async function measureDelivery(db: DbOrTx, { now, emailProvider }: { now: Date; emailProvider: string }): Promise<DeliveryFigure[]> {
  const rows = await countHandoverVsDelivery(db, {
    from: new Date(now.getTime() - DELIVERY_WINDOW_MS),
    to: now,
    evidenceSince: new Date(now.getTime() - DELIVERY_EVIDENCE_LOOKBACK_MS),
    emailEventProviders: eventProvidersOf(emailProvider),
  });
  return rows.map((row) => ({
    channel: row.channel,
    provider: providerOfChannel(row.channel, emailProvider),
    handedOver: row.handedOver,
    delivered: row.evidence ? row.delivered : null,
    gap: row.evidence ? row.handedOver - row.delivered : null,
  }));
}

/** `delivery_measured` marks each measurement, so an hour with nothing handed over reads as none, not as the last hour that had some. */
export const DELIVERY_SERIES = ['delivery_measured', 'handed_over', 'delivered', 'gap'] as const;

const keyOf = (figure: { channel: string; provider: string }) => `${figure.channel}/${figure.provider}`;

/** The figures as sample rows: delivered and gap are left out when there is no evidence. */
export function deliverySamples(at: Date, figures: readonly DeliveryFigure[]): SampleRow[] {
  return [
    { at, series: 'delivery_measured', key: '', value: figures.length },
    ...figures.flatMap((figure) => [
      { at, series: 'handed_over', key: keyOf(figure), value: figure.handedOver },
      ...(figure.delivered === null ? [] : [{ at, series: 'delivered', key: keyOf(figure), value: figure.delivered }]),
      ...(figure.gap === null ? [] : [{ at, series: 'gap', key: keyOf(figure), value: figure.gap }]),
    ]),
  ];
}

/** Sample rows of one instant back into figures (the inverse of deliverySamples). */
export function deliveryFromSamples(rows: readonly Pick<SampleRow, 'series' | 'key' | 'value'>[]): DeliveryFigure[] {
  const byKey = new Map<string, DeliveryFigure>();
  for (const row of rows) {
    if (row.series !== 'handed_over') continue;
    const [channel = 'email', provider = 'unknown'] = row.key.split('/');
    byKey.set(row.key, { channel: channel === 'sms' ? 'sms' : 'email', provider, handedOver: row.value, delivered: null, gap: null });
  }
  for (const row of rows) {
    const figure = byKey.get(row.key);
    if (!figure) continue;
    if (row.series === 'delivered') figure.delivered = row.value;
    if (row.series === 'gap') figure.gap = row.value;
  }
  return [...byKey.values()].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
}

export type StoredDelivery = { at: Date | null; figures: DeliveryFigure[] };

/** The latest stored figures (one instant), as the table and the gauges show them. */
export async function readStoredDelivery(db: DbOrTx): Promise<StoredDelivery> {
  const rows = await readLatestSamples(db, { series: DELIVERY_SERIES });
  return { at: rows[0]?.at ?? null, figures: deliveryFromSamples(rows) };
}

/**
 * Sets the delivery gauges at scrape time, in the console's /api/metrics and the worker's
 * /metrics alike: the shared figures from the latest stored sample (so the alert sees what the
 * overview shows), and what the providers said (notice_ledger_provider_messages, provider
 * events of the last 24 h by status) beside them.
 */
export async function refreshDeliveryGauges(db: DbOrTx, { now = new Date() }: { now?: Date } = {}): Promise<void> {
  const [stored, latestAt, events] = await Promise.all([
    readStoredDelivery(db),
    latestSampleAt(db),
    countAcceptedVsDelivered(db, { from: new Date(now.getTime() - PROVIDER_EVENTS_WINDOW_MS), to: new Date(now.getTime() + 1) }),
  ]);
  providerMessages.reset();
  for (const row of events) {
    const channel = channelOfProvider(row.provider);
    for (const status of ['accepted', 'delivered', 'bounced', 'complained'] as const) {
      providerMessages.set({ channel, provider: row.provider, notice_type: row.noticeType, status }, row[status]);
    }
  }
  for (const gauge of [handedOver, deliveredAfterHandover, deliveryGap, deliveryEvidence]) gauge.reset();
  for (const figure of stored.figures) {
    const labels = { channel: figure.channel, provider: figure.provider };
    handedOver.set(labels, figure.handedOver);
    deliveryEvidence.set(labels, figure.delivered === null ? 0 : 1);
    if (figure.delivered !== null) deliveredAfterHandover.set(labels, figure.delivered);
    if (figure.gap !== null) deliveryGap.set(labels, figure.gap);
  }
  overviewSampleAge.reset();
  if (latestAt) overviewSampleAge.set(Math.max(0, now.getTime() - latestAt.getTime()) / 1000);
}
