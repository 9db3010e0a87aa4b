import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { deliveryAttempts, reminderJobs } from '@/db/schema/jobs';
import type { EventRequest } from '@/lib/api/producer';
import { receiveEvent } from '@/lib/planning/receive-event';
import { noticeKeyFor } from '@/lib/windows/keys';
import type { NoticeConfig, RuleSet } from '@/lib/windows/load-config';

/**
 * The demo's planned notices come from business events, as a producer would post them
 * (`POST /api/v1/events` runs the same service): renewals across California, New York, Illinois,
 * France, India and Germany (one a Visa trial), some far enough ahead that every legal notice
 * fits, some too close for a legal floor (compliance gaps the overview shows), and a few notices
 * whose window already closed, inserted as the worker leaves them after the deadline passed.
 * Runs once, after the main seed; a second run finds its events and changes nothing.
 */

const DAY = 86_400_000;
const SOURCE = 'demo-billing';

type DemoEvent = {
  sub: string;
  region: string;
  timeZone: string;
  locale: string;
  anchorInDays: number;
  contract: EventRequest['contract'];
  deadlineInDays?: number;
};

const demoEvents: DemoEvent[] = [
  { sub: 'sub_ca_annual_1', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US', anchorInDays: 40, contract: { termMonths: 12 } },
  {
    sub: 'sub_ca_annual_2',
    region: 'US-CA',
    timeZone: 'America/Los_Angeles',
    locale: 'en-US',
    anchorInDays: 20,
    contract: { termMonths: 12, priceChange: {} },
  },
  {
    sub: 'sub_ca_trial_1',
    region: 'US-CA',
    timeZone: 'America/Los_Angeles',
    locale: 'en-US',
    anchorInDays: 12,
    contract: { termMonths: 1, trialDays: 31, paymentNetwork: 'visa' },
  },
  { sub: 'sub_ny_annual_1', region: 'US-NY', timeZone: 'America/New_York', locale: 'en-US', anchorInDays: 35, contract: { termMonths: 12 } },
  { sub: 'sub_il_annual_1', region: 'US-IL', timeZone: 'America/Chicago', locale: 'en-US', anchorInDays: 50, contract: { termMonths: 12 } },
  { sub: 'sub_fr_annual_1', region: 'FR', timeZone: 'Europe/Paris', locale: 'fr-FR', anchorInDays: 75, contract: { termMonths: 12 } },
  { sub: 'sub_in_monthly_1', region: 'IN', timeZone: 'Asia/Kolkata', locale: 'en-IN', anchorInDays: 4, contract: { termMonths: 1, paymentNetwork: 'rupay' } },
  { sub: 'sub_in_monthly_2', region: 'IN', timeZone: 'Asia/Kolkata', locale: 'hi-IN', anchorInDays: 9, contract: { termMonths: 1 } },
  {
    sub: 'sub_de_trial_1',
    region: 'DE',
    timeZone: 'Europe/Berlin',
    locale: 'de-DE',
    anchorInDays: 14,
    contract: { termMonths: 1, trialDays: 14, paymentNetwork: 'visa' },
  },
  // Too close for the legal floor: the required notice cannot fit — a compliance gap.
  { sub: 'sub_ca_annual_late', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US', anchorInDays: 8, contract: { termMonths: 12 } },
  { sub: 'sub_il_annual_late', region: 'US-IL', timeZone: 'America/Chicago', locale: 'en-US', anchorInDays: 21, contract: { termMonths: 12 } },
  { sub: 'sub_fr_annual_late', region: 'FR', timeZone: 'Europe/Paris', locale: 'fr-FR', anchorInDays: 20, contract: { termMonths: 12 } },
  {
    sub: 'sub_de_trial_late',
    region: 'DE',
    timeZone: 'Europe/Berlin',
    locale: 'de-DE',
    anchorInDays: 3,
    contract: { termMonths: 1, trialDays: 7, paymentNetwork: 'visa' },
  },
];

/** Whole seconds: the event API takes `Z` instants, and whole days keep the demo readable. */
const instantIn = (now: Date, days: number) => new Date(Math.floor((now.getTime() + days * DAY) / 60_000) * 60_000);

export type DemoEventsSummary = { events: number; planned: number; gaps: number; missed: number };

export async function seedDemoEvents(
  db: Db,
  {
    secret,
    notices,
    now = new Date(),
    maxDelayMs = 400 * DAY,
  }: { secret: string; notices: { config: NoticeConfig; ruleSet: RuleSet }; now?: Date; maxDelayMs?: number },
): Promise<DemoEventsSummary> {
  const seen = await db.execute<{ n: number }>(sql`select count(*)::int as n from business_events where source = ${SOURCE}`);
  if ((seen.rows[0]?.n ?? 0) > 0) return { events: 0, planned: 0, gaps: 0, missed: 0 };
  // The worker's dispatcher publishes a wake-up for every due job with none recorded (as with RabbitMQ).
  const publisher = { publishInTransaction: async () => null, horizonMs: 0 };
  const summary: DemoEventsSummary = { events: 0, planned: 0, gaps: 0, missed: 0 };
  for (const event of demoEvents) {
    const anchorAt = instantIn(now, event.anchorInDays);
    const result = await receiveEvent({
      db,
      publisher,
      actor: 'demo-seed',
      now,
      secret,
      maxDelayMs,
      notices,
      request: {
        type: 'subscription.renewal',
        identity: { subscription_id: event.sub, period_start: anchorAt.toISOString().slice(0, 10) },
        revision: 0,
        anchorAt,
        recipient: { email: `${event.sub.replace(/_/g, '.')}@example.test`, region: event.region, timeZone: event.timeZone, locale: event.locale },
        contract: event.contract,
        // Exactly what the renewal types' templates declare; the charge date is the anchor.
        payload: {
          customer_name: 'Ana Silva',
          plan_name: 'Coffee Box',
          amount: event.region === 'IN' ? '499.00' : '19.00',
          currency: event.region === 'IN' ? 'INR' : event.region.startsWith('US') ? 'USD' : 'EUR',
        },
        source: SOURCE,
      },
    });
    if (result.kind !== 'created' && result.kind !== 'existing') throw new Error(`demo event ${event.sub} refused: ${result.kind}`);
    summary.events += 1;
    summary.planned += result.answer.planned.length;
    summary.gaps += result.answer.unplanned.filter((notice) => notice.category === 'required').length;
  }
  summary.missed = await insertMissedWindows(db, { secret, notices, now });
  return summary;
}

/**
 * Required notices whose window closed before a worker could send them (an outage, a backlog):
 * suppressed as the send path leaves a job past its deadline, with the attempt that said so.
 */
async function insertMissedWindows(
  db: Db,
  { secret, notices, now }: { secret: string; notices: { config: NoticeConfig; ruleSet: RuleSet }; now: Date },
): Promise<number> {
  const missed = [
    { sub: 'sub_ca_missed_1', region: 'US-CA', timeZone: 'America/Los_Angeles', rule: 'US-CA/arl-annual@1', closedDaysAgo: 1, type: 'auto_renewal_notice' },
    { sub: 'sub_ny_missed_1', region: 'US-NY', timeZone: 'America/New_York', rule: 'US-NY/gbl-527a-annual@1', closedDaysAgo: 3, type: 'auto_renewal_notice' },
    { sub: 'sub_in_missed_1', region: 'IN', timeZone: 'Asia/Kolkata', rule: 'IN/rbi-emandate-pre-debit@1', closedDaysAgo: 0.25, type: 'pre_debit_notice' },
  ];
  for (const item of missed) {
    const latest = new Date(now.getTime() - item.closedDaysAgo * DAY);
    const earliest = new Date(latest.getTime() - (item.type === 'pre_debit_notice' ? DAY : 30 * DAY));
    const identity = { subscription_id: item.sub, period_start: new Date(latest.getTime() + 15 * DAY).toISOString().slice(0, 10) };
    const key = noticeKeyFor(secret, notices.config, { noticeType: item.type, identity, revision: 0 });
    const [job] = await db
      .insert(reminderJobs)
      .values({
        noticeKey: key,
        noticeType: item.type,
        identity,
        revision: 0,
        subjectId: item.sub,
        recipientEmail: `${item.sub.replace(/_/g, '.')}@example.test`,
        recipientTimeZone: item.timeZone,
        recipientLocale: 'en-US',
        anchorAt: new Date(latest.getTime() + 15 * DAY),
        dueAt: earliest,
        deadlineAt: latest,
        nextAttemptAt: earliest,
        windowEarliest: earliest,
        category: 'required',
        region: item.region,
        ruleIds: [item.rule],
        ruleSetVersion: notices.ruleSet.version,
        state: 'suppressed',
        suppressionReason: 'window_missed',
        source: SOURCE,
        payload: { customer_name: 'Ana Silva', plan_name: 'Coffee Box', amount: '19.00', currency: item.region === 'IN' ? 'INR' : 'USD' },
        updatedAt: new Date(latest.getTime() + 60_000),
      })
      .onConflictDoNothing({ target: reminderJobs.noticeKey })
      .returning();
    if (!job) continue;
    const at = new Date(latest.getTime() + 60_000);
    await db.insert(deliveryAttempts).values({
      jobId: job.id,
      noticeKey: key,
      workerId: `demo-worker-${randomBytes(2).toString('hex')}`,
      startedAt: at,
      finishedAt: at,
      outcome: 'suppressed_policy',
      detail: 'window_missed',
    });
  }
  return missed.length;
}
