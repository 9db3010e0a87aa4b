import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuietHours, quietHoursEnd } from './quiet-hours';
import { loadNoticeConfig, parseNoticeConfig, type NoticeConfig } from './load-config';
import { planEvent, type PlanningEvent } from './plan';
import { windowVerdict } from './verdict';
import type { Condition, Contract, Rule } from './rules';
import { addDays, startOfLocalDay } from './zoned';

/**
 * Random anchors, regions, contracts, time zones, quiet hours and clocks against the shipped
 * configuration. The oracle below checks each rule from its own data with its own calendar
 * arithmetic (an en-CA date string per zone, month overflow by hand), not with the planner's.
 */
const shipped = loadNoticeConfig('config/notice-ledger.json');

const zones = [
  'UTC',
  'America/Los_Angeles',
  'America/New_York',
  'America/Chicago',
  'America/Denver',
  'America/Santiago', // DST skips midnight
  'Europe/Paris',
  'Asia/Kolkata', // +05:30
  'Asia/Kathmandu', // +05:45
  'Pacific/Auckland', // +13 in its summer
  'Pacific/Chatham', // +12:45 / +13:45
  'Australia/Lord_Howe', // a 30-minute DST change
  'Pacific/Kiritimati', // +14
  'Pacific/Pago_Pago', // -11
];
const regions = ['US-CA', 'US-IL', 'US-CO', 'US-VA', 'US-NY', 'US-TX', 'US', 'FR', 'FR-75', 'IN', 'IN-MH', 'DE', 'NZ'];
const DAY = 86_400_000;
const HOUR = 3_600_000;
const from2026 = Date.UTC(2026, 0, 1);
const to2029 = Date.UTC(2029, 0, 1);

const contract: fc.Arbitrary<{ build: (anchor: number) => Contract }> = fc
  .record(
    {
      termMonths: fc.constantFrom(0, 1, 2, 6, 7, 11, 12, 13, 24),
      billingIntervalMonths: fc.constantFrom(1, 6, 7, 12),
      trialDays: fc.constantFrom(0, 7, 8, 14, 30, 31, 45),
      promoDays: fc.constantFrom(0, 7, 8, 30, 31, 90),
      priceChangeBefore: fc.option(fc.integer({ min: 0, max: 60 * DAY }), { nil: undefined }),
      paymentNetwork: fc.constantFrom('visa', 'mastercard', 'rupay', 'upi', 'other' as const),
      deadlineBefore: fc.integer({ min: 0, max: 40 * DAY }),
      trialEndBefore: fc.integer({ min: 0, max: 3 * DAY }),
    },
    { requiredKeys: [] },
  )
  .map((facts) => ({
    build: (anchor: number): Contract => ({
      termMonths: facts.termMonths,
      billingIntervalMonths: facts.billingIntervalMonths,
      trialDays: facts.trialDays,
      promoDays: facts.promoDays,
      paymentNetwork: facts.paymentNetwork,
      priceChange: facts.priceChangeBefore === undefined ? undefined : { effectiveAt: iso(anchor - facts.priceChangeBefore) },
      cancellationDeadlineAt: facts.deadlineBefore === undefined ? undefined : iso(anchor - facts.deadlineBefore),
      trialEndsAt: facts.trialEndBefore === undefined ? undefined : iso(anchor - facts.trialEndBefore),
    }),
  }));

function iso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

// DST changes, each with a zone that has it. An anchor up to 60 days after one puts the change
// inside the window, where the two readings of a day count part: most of all for anchors in the
// first or last local hour of a day, so those hours are drawn often.
const transitions: [string, string][] = [
  ['America/Los_Angeles', '2026-11-01'],
  ['America/Los_Angeles', '2027-03-14'],
  ['America/Los_Angeles', '2027-11-07'],
  ['America/New_York', '2027-03-14'],
  ['America/New_York', '2027-11-07'],
  ['America/Chicago', '2028-03-12'],
  ['America/Denver', '2028-11-05'],
  ['Europe/Paris', '2027-03-28'],
  ['Europe/Paris', '2027-10-31'],
  ['Pacific/Auckland', '2027-04-04'],
  ['Pacific/Auckland', '2027-09-26'],
  ['America/Santiago', '2026-09-06'],
  ['Australia/Lord_Howe', '2027-04-04'],
];

const nearTransition = fc
  .record({
    transition: fc.constantFrom(...transitions),
    daysAfter: fc.integer({ min: 0, max: 60 }),
    minuteOfDay: fc.oneof(fc.integer({ min: 0, max: 1439 }), fc.integer({ min: 1380, max: 1439 }), fc.integer({ min: 0, max: 59 })),
    second: fc.integer({ min: 0, max: 59 }),
  })
  .map(({ transition: [timeZone, day], daysAfter, minuteOfDay, second }) => {
    const [year, month, date] = day.split('-').map(Number) as [number, number, number];
    const start = startOfLocalDay(addDays({ year, month, day: date }, daysAfter), timeZone);
    return { timeZone, anchor: start.getTime() + minuteOfDay * 60_000 + second * 1000 };
  });

const anyTime = fc.record({ timeZone: fc.constantFrom(...zones), anchor: fc.integer({ min: from2026, max: to2029 }) });

const scenario = fc.record({
  at: fc.oneof(anyTime, nearTransition),
  // Mostly before the anchor, up to 400 days; sometimes just after it.
  nowBefore: fc.oneof(fc.integer({ min: -2 * DAY, max: 400 * DAY }), fc.integer({ min: 0, max: 3 * DAY })),
  region: fc.constantFrom(...regions),
  contract,
  quietHours: fc.constantFrom(null, '21:00-08:00', '00:00-23:30', '12:00-13:00', '22:30-06:15'),
});

// ——— the oracle ———

const dateFormatters = new Map<string, Intl.DateTimeFormat>();
/** Days since the epoch of the recipient's calendar date, from an en-CA `YYYY-MM-DD` string. */
function localDay(instant: number, timeZone: string): number {
  let formatter = dateFormatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dateFormatters.set(timeZone, formatter);
  }
  return Date.parse(`${formatter.format(new Date(instant))}T00:00:00Z`) / DAY;
}

/** `day` minus `months`; a missing day is the month's last (clamp) or the next month's first (roll). */
function monthsBefore(day: number, months: number, overflow: 'clamp' | 'roll'): number {
  const date = new Date(day * DAY);
  const wanted = date.getUTCDate();
  const target = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - months, 1));
  const length = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  if (wanted <= length) return Date.UTC(target.getUTCFullYear(), target.getUTCMonth(), wanted) / DAY;
  return Date.UTC(target.getUTCFullYear(), target.getUTCMonth(), length) / DAY + (overflow === 'roll' ? 1 : 0);
}

/** A contract's field as rules read it: a plan that names no billing interval is billed once per term. */
function factOf(field: Condition['field'], facts: Contract): unknown {
  return field === 'billingIntervalMonths' && facts.billingIntervalMonths === undefined ? facts.termMonths : facts[field];
}

function conditionHolds(condition: Condition, facts: Contract): boolean {
  const value = factOf(condition.field, facts);
  if (condition.op === 'present') return value !== undefined;
  if (value === undefined) return false;
  if (condition.op === 'in') return condition.value.includes(String(value));
  const number = Number(value);
  return {
    gte: number >= condition.value,
    gt: number > condition.value,
    lte: number <= condition.value,
    lt: number < condition.value,
    eq: number === condition.value,
  }[condition.op];
}

function ruleApplies(rule: Rule, region: string, facts: Contract): boolean {
  const where = rule.jurisdiction === '*' || region === rule.jurisdiction || region.startsWith(`${rule.jurisdiction}-`);
  const all = rule.appliesWhen.all.every((condition) => conditionHolds(condition, facts));
  const any = rule.appliesWhen.any === undefined || rule.appliesWhen.any.some((condition) => conditionHolds(condition, facts));
  return rule.enabled && where && all && any;
}

function anchorOf(rule: Rule, charge: number, facts: Contract): number {
  const text = {
    charge: undefined,
    cancellation_deadline: facts.cancellationDeadlineAt,
    trial_end: facts.trialEndsAt,
    price_change: facts.priceChange?.effectiveAt,
  }[rule.anchor];
  return text === undefined ? charge : Date.parse(text);
}

/** Is `instant` at least `min` before the anchor by every reading? (calendar and exact days, hours, calendar months) */
function meetsFloor(rule: Rule, anchor: number, instant: number, timeZone: string): boolean {
  const { unit, min } = rule.window;
  if (min === undefined) return instant <= anchor;
  if (unit === 'hours') return anchor - instant >= min * HOUR;
  if (unit === 'days') return anchor - instant >= min * DAY && localDay(instant, timeZone) <= localDay(anchor, timeZone) - min;
  return localDay(instant, timeZone) <= monthsBefore(localDay(anchor, timeZone), min, 'clamp');
}

/** Is `instant` at most `max` before the anchor by every reading? */
function meetsCeiling(rule: Rule, anchor: number, instant: number, timeZone: string): boolean {
  const { unit, max } = rule.window;
  if (max === undefined) return true;
  if (unit === 'hours') return anchor - instant <= max * HOUR;
  if (unit === 'days') return anchor - instant <= max * DAY && localDay(instant, timeZone) >= localDay(anchor, timeZone) - max;
  return localDay(instant, timeZone) >= monthsBefore(localDay(anchor, timeZone), max, 'roll');
}

function withQuietHours(config: NoticeConfig, text: string | null): NoticeConfig {
  const quietHours = text === null ? null : parseQuietHours(text);
  return { ...config, noticeTypes: Object.fromEntries(Object.entries(config.noticeTypes).map(([name, type]) => [name, { ...type, quietHours }])) };
}

describe('planEvent, property', () => {
  it('plans inside every window, satisfies every applicable rule by both readings, and accounts for every required notice', () => {
    fc.assert(
      fc.property(scenario, ({ at, ...rest }) => {
        const s = { ...rest, ...at };
        const facts = s.contract.build(s.anchor);
        const now = new Date(s.anchor - s.nowBefore);
        const event: PlanningEvent = {
          type: 'subscription.renewal',
          anchorAt: new Date(s.anchor),
          recipient: { region: s.region, timeZone: s.timeZone },
          contract: facts,
        };
        const config = withQuietHours(shipped.config, s.quietHours);
        const result = planEvent({ config, ruleSet: shipped.ruleSet, event, now });
        const rulesById = new Map(shipped.ruleSet.rules.map((rule) => [`${rule.id}@${rule.version}`, rule]));

        for (const notice of result.planned) {
          const { earliest, latest } = notice.window;
          expect(earliest.getTime()).toBeGreaterThanOrEqual(now.getTime());
          expect(earliest.getTime()).toBeLessThanOrEqual(latest.getTime());
          expect(notice.dueAt.getTime()).toBeGreaterThanOrEqual(earliest.getTime());
          expect(notice.dueAt.getTime()).toBeLessThanOrEqual(latest.getTime());
          expect(windowVerdict(notice.window, notice.dueAt)).toEqual({ verdict: 'open' });
          const quiet = config.noticeTypes[notice.noticeType]?.quietHours ?? null;
          if (quiet && notice.quietHours !== 'overridden')
            expect(quietHoursEnd({ now: notice.dueAt, timeZone: s.timeZone, window: quiet }), 'due inside quiet hours').toBeNull();
          // Due at the first instant it may go: the window's start, or where the quiet hours end.
          if (notice.quietHours === 'moved' && quiet) {
            expect(
              quietHoursEnd({ now: new Date(notice.dueAt.getTime() - 1), timeZone: s.timeZone, window: quiet }),
              'due after the quiet hours end',
            ).not.toBeNull();
          } else expect(notice.dueAt.getTime()).toBe(earliest.getTime());
          const type = config.noticeTypes[notice.noticeType];
          if (type?.window) {
            expect(earliest.getTime()).toBeGreaterThanOrEqual(s.anchor + type.window.from);
            expect(latest.getTime()).toBeLessThanOrEqual(s.anchor + type.window.to);
          }
          for (const ref of notice.ruleIds) {
            const rule = rulesById.get(ref);
            if (!rule) throw new Error(`unknown rule ${ref}`);
            const anchor = anchorOf(rule, s.anchor, facts);
            expect(meetsFloor(rule, anchor, latest.getTime(), s.timeZone), `${ref} floor at ${latest.toISOString()}`).toBe(true);
            expect(meetsCeiling(rule, anchor, earliest.getTime(), s.timeZone), `${ref} ceiling at ${earliest.toISOString()}`).toBe(true);
          }
        }

        for (const type of Object.values(config.noticeTypes).filter((candidate) => candidate.enabled && candidate.event === event.type)) {
          const listed = [...result.planned, ...result.unplanned].filter((notice) => notice.noticeType === type.name);
          const applicable = shipped.ruleSet.rules.filter((rule) => rule.obligation === type.obligation && ruleApplies(rule, s.region, facts));
          const calledFor = type.category === 'courtesy' || applicable.length > 0;
          expect(listed, `${type.name} listed once when called for`).toHaveLength(calledFor ? 1 : 0);
          if (calledFor) expect([...(listed[0]?.ruleIds ?? [])].sort()).toEqual(applicable.map((rule) => `${rule.id}@${rule.version}`).sort());
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it('gives the widest window both readings allow: one millisecond later is outside a day or hour rule', () => {
    fc.assert(
      fc.property(scenario, ({ at, ...rest }) => {
        const s = { ...rest, ...at };
        const facts = s.contract.build(s.anchor);
        const event: PlanningEvent = {
          type: 'subscription.renewal',
          anchorAt: new Date(s.anchor),
          recipient: { region: s.region, timeZone: s.timeZone },
          contract: facts,
        };
        const result = planEvent({ config: shipped.config, ruleSet: shipped.ruleSet, event, now: new Date(s.anchor - s.nowBefore) });
        for (const notice of result.planned.filter((candidate) => candidate.category === 'required' && candidate.ruleIds.length > 0)) {
          const rules = notice.ruleIds
            .map((ref) => shipped.ruleSet.rules.find((rule) => `${rule.id}@${rule.version}` === ref))
            .filter((rule): rule is Rule => rule !== undefined);
          // A month floor (France) has no exact 24-hour reading to be one millisecond from; a month
          // ceiling (California's annual reminder) does not bound latest.
          if (rules.some((rule) => rule.window.unit === 'months' && rule.window.min !== undefined)) continue;
          const after = notice.window.latest.getTime() + 1;
          expect(rules.some((rule) => !meetsFloor(rule, anchorOf(rule, s.anchor, facts), after, s.timeZone))).toBe(true);
        }
      }),
      { numRuns: 1_000 },
    );
  });
});

// ——— the rules added for issue 28: Mastercard AN 4934 and California's AB 2863 ———

const refOf = (rule: Rule) => `${rule.id}@${rule.version}`;
function shippedRule(id: string): Rule {
  const rule = shipped.ruleSet.rules.find((candidate) => candidate.id === id);
  if (!rule) throw new Error(`no shipped rule ${id}`);
  return rule;
}
const mastercardBilling = shippedRule('mastercard/an4934-subscription-billing');
const mastercardTrial = shippedRule('mastercard/an4934-trial');
const californiaReminder = shippedRule('US-CA/ab2863-annual-reminder');
const californiaRenewal = shippedRule('US-CA/arl-annual');
const networks = ['visa', 'mastercard', 'amex', 'rupay', 'upi', 'other'] as const;
const quiet = withQuietHours(shipped.config, null);
/** Where, when and on which card: the draws every network rule's property starts from. */
const anywhereOnAnyCard = { at: fc.oneof(anyTime, nearTransition), region: fc.constantFrom(...regions), network: fc.constantFrom(...networks) };

/** A rule's window is exactly its bounds: both ends meet the rule, one millisecond outside does not. */
function expectExactBounds(rule: Rule, anchor: number, window: { earliest: Date; latest: Date }, now: number, timeZone: string): void {
  const { earliest, latest } = { earliest: window.earliest.getTime(), latest: window.latest.getTime() };
  expect(meetsFloor(rule, anchor, latest, timeZone), `${rule.id} floor`).toBe(true);
  expect(meetsFloor(rule, anchor, latest + 1, timeZone), `${rule.id} floor + 1 ms`).toBe(false);
  expect(meetsCeiling(rule, anchor, earliest, timeZone), `${rule.id} ceiling`).toBe(true);
  if (earliest > now) expect(meetsCeiling(rule, anchor, earliest - 1, timeZone), `${rule.id} ceiling − 1 ms`).toBe(false);
}

function planFor({
  anchor,
  timeZone,
  region,
  contract,
  now,
  config = quiet,
  ruleSet = shipped.ruleSet,
}: {
  anchor: number;
  timeZone: string;
  region: string;
  contract: Contract;
  now: number;
  config?: NoticeConfig;
  ruleSet?: typeof shipped.ruleSet;
}) {
  const event: PlanningEvent = { type: 'subscription.renewal', anchorAt: new Date(anchor), recipient: { region, timeZone }, contract };
  return planEvent({ config, ruleSet, event, now: new Date(now) });
}

describe('Mastercard AN 4934 and California AB 2863, property', () => {
  it('a Mastercard plan billed less often than every six months gets a reminder 3–7 days before each charge, and only then', () => {
    fc.assert(
      fc.property(
        fc.record({
          ...anywhereOnAnyCard,
          termMonths: fc.constantFrom(1, 6, 7, 12, 24),
          billingIntervalMonths: fc.option(fc.constantFrom(1, 5, 6, 7, 12), { nil: undefined }),
          // Far enough ahead that the whole window is still to come; sometimes inside it, but before its
          // floor, which the calendar reading can put up to a day (and a DST hour) before 3 × 24 h.
          nowBefore: fc.oneof(fc.integer({ min: 8 * DAY, max: 120 * DAY }), fc.integer({ min: 5 * DAY, max: 8 * DAY })),
        }),
        ({ at: { anchor, timeZone }, region, network, termMonths, billingIntervalMonths, nowBefore }) => {
          const now = anchor - nowBefore;
          const result = planFor({ anchor, timeZone, region, now, contract: { termMonths, billingIntervalMonths, paymentNetwork: network } });
          const listed = [...result.planned, ...result.unplanned].filter((notice) => notice.noticeType === 'billing_reminder');
          // "Less often than every six months": a billing interval of more than six, the term's when none is given.
          const interval = billingIntervalMonths ?? termMonths;
          const calledFor = network === 'mastercard' && interval > 6;
          expect(listed, `billing_reminder for ${network} every ${interval} months`).toHaveLength(calledFor ? 1 : 0);
          if (!calledFor) return;
          const notice = result.planned.find((candidate) => candidate.noticeType === 'billing_reminder');
          if (!notice) throw new Error(`not planned: ${JSON.stringify(result.unplanned)}`);
          expect(notice.ruleIds).toEqual([refOf(mastercardBilling)]);
          expect(notice.requirements).toEqual(['subscription_terms', 'how_to_cancel', 'electronic']);
          expectExactBounds(mastercardBilling, anchor, notice.window, now, timeZone);
          const lead = { most: anchor - notice.window.earliest.getTime(), least: anchor - notice.window.latest.getTime() };
          expect(lead.least).toBeGreaterThanOrEqual(3 * DAY);
          expect(lead.least).toBeLessThan(4 * DAY);
          expect(lead.most).toBeLessThanOrEqual(7 * DAY);
          expect(notice.dueAt.getTime()).toBe(Math.max(now, anchor - lead.most));
          // Its own notice: a state's renewal notice 15–45 days out is planned beside it, not in conflict.
          expect(result.unplanned.filter((gap) => gap.reason === 'rules_conflict')).toEqual([]);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('a Mastercard trial or promotion longer than 7 days: 3–7 days before it ends, with the laws that also apply', () => {
    fc.assert(
      fc.property(
        fc.record({
          ...anywhereOnAnyCard,
          trialDays: fc.option(fc.constantFrom(0, 6, 7, 8, 14, 31, 45), { nil: undefined }),
          promoDays: fc.option(fc.constantFrom(0, 7, 8, 32), { nil: undefined }),
          trialEndBefore: fc.option(fc.integer({ min: 0, max: 2 * DAY }), { nil: undefined }),
          nowBefore: fc.oneof(fc.integer({ min: 25 * DAY, max: 60 * DAY }), fc.integer({ min: 0, max: 8 * DAY })),
        }),
        ({ at: { anchor, timeZone }, region, network, trialDays, promoDays, trialEndBefore, nowBefore }) => {
          const now = anchor - nowBefore;
          const contract: Contract = {
            trialDays,
            promoDays,
            paymentNetwork: network,
            trialEndsAt: trialEndBefore === undefined ? undefined : iso(anchor - trialEndBefore),
          };
          const result = planFor({ anchor, timeZone, region, now, contract });
          const trial = [...result.planned, ...result.unplanned].find((notice) => notice.noticeType === 'trial_conversion_notice');
          const calledFor = network === 'mastercard' && ((trialDays ?? 0) > 7 || (promoDays ?? 0) > 7);
          expect(trial?.ruleIds.includes(refOf(mastercardTrial)) ?? false, `Mastercard trial rule for ${network}, ${trialDays}/${promoDays} days`).toBe(
            calledFor,
          );
          // One card, one network: Visa's rule never shares a notice with Mastercard's.
          if (trial) expect(trial.ruleIds.some((ref) => ref.startsWith('visa/')) && trial.ruleIds.some((ref) => ref.startsWith('mastercard/'))).toBe(false);
          if (!calledFor || !trial) return;
          // 3–7 days sits inside California's 3–21 and Virginia's 0–30, all counted from the trial's end.
          expect(result.unplanned.filter((gap) => gap.reason === 'rules_conflict')).toEqual([]);
          const planned = result.planned.find((notice) => notice.noticeType === 'trial_conversion_notice');
          if (!planned) {
            expect(trial).toMatchObject({ reason: 'window_passed' });
            return;
          }
          const end = anchorOf(mastercardTrial, anchor, contract);
          expect(meetsFloor(mastercardTrial, end, planned.window.latest.getTime(), timeZone)).toBe(true);
          expect(meetsCeiling(mastercardTrial, end, planned.window.earliest.getTime(), timeZone)).toBe(true);
          // Mastercard's 3–7 days is the narrowest rule here, so the window is exactly its own.
          expectExactBounds(mastercardTrial, end, planned.window, now, timeZone);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('California: an annual term’s renewal notice is also its annual reminder, inside the year before the charge', () => {
    fc.assert(
      fc.property(
        fc.record({
          at: fc.oneof(anyTime, nearTransition),
          region: fc.constantFrom('US-CA', 'US-CA', 'US-NY', 'US-TX', 'FR'),
          termMonths: fc.constantFrom(1, 11, 12, 13, 24),
          nowBefore: fc.integer({ min: 0, max: 400 * DAY }),
          renewalRuleOff: fc.boolean(),
        }),
        ({ at: { anchor, timeZone }, region, termMonths, nowBefore, renewalRuleOff }) => {
          const now = anchor - nowBefore;
          const loaded = renewalRuleOff ? withRules([{ id: 'US-CA/arl-annual', enabled: false }]) : shipped;
          const result = planFor({
            anchor,
            timeZone,
            region,
            now,
            contract: { termMonths },
            config: withQuietHours(loaded.config, null),
            ruleSet: loaded.ruleSet,
          });
          const renewal = [...result.planned, ...result.unplanned].find((notice) => notice.noticeType === 'auto_renewal_notice');
          const calledFor = region === 'US-CA' && termMonths >= 12;
          expect(renewal?.ruleIds.includes(refOf(californiaReminder)) ?? false).toBe(calledFor);
          if (!calledFor) return;
          expect(renewal?.ruleIds.includes(refOf(californiaRenewal))).toBe(!renewalRuleOff);
          const planned = result.planned.find((notice) => notice.noticeType === 'auto_renewal_notice');
          if (!planned) {
            expect(renewal).toMatchObject({ reason: 'window_passed' });
            return;
          }
          expect(planned.requirements).toEqual(expect.arrayContaining(['product_or_service', 'charge_frequency_and_amount', 'how_to_cancel']));
          // Never more than 12 calendar months before the charge, in the recipient's calendar.
          expect(localDay(planned.window.earliest.getTime(), timeZone)).toBeGreaterThanOrEqual(monthsBefore(localDay(anchor, timeZone), 12, 'roll'));
          expect(meetsCeiling(californiaReminder, anchor, planned.window.earliest.getTime(), timeZone)).toBe(true);
          if (renewalRuleOff) {
            // Alone, the reminder may go any time in the year before the charge, up to the charge.
            expect(planned.window.latest.getTime()).toBe(anchor);
            // and from the same calendar date a year earlier (the next one, when the anchor's time into
            // its day runs past the end of a 23-hour day), unless that has already passed.
            const yearBefore = monthsBefore(localDay(anchor, timeZone), 12, 'roll');
            if (planned.window.earliest.getTime() > now) expect([yearBefore, yearBefore + 1]).toContain(localDay(planned.window.earliest.getTime(), timeZone));
          } else {
            // With the 15–45-day notice the window is that notice's: the reminder narrows nothing.
            expectExactBounds(californiaRenewal, anchor, planned.window, now, timeZone);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('plans with the rule set it is given and records its version: an operator’s switch takes a rule out', () => {
    const withoutMastercard = withRules([
      { id: 'mastercard/an4934-subscription-billing', enabled: false },
      { id: 'mastercard/an4934-trial', enabled: false },
    ]);
    expect(withoutMastercard.ruleSet.version).not.toBe(shipped.ruleSet.version);
    fc.assert(
      fc.property(
        fc.record({ at: fc.oneof(anyTime, nearTransition), region: fc.constantFrom(...regions), nowBefore: fc.integer({ min: 0, max: 60 * DAY }), contract }),
        ({ at: { anchor, timeZone }, region, nowBefore, contract: facts }) => {
          const built = { ...facts.build(anchor), paymentNetwork: 'mastercard' as const };
          const now = anchor - nowBefore;
          for (const loaded of [shipped, withoutMastercard]) {
            const result = planFor({ anchor, timeZone, region, now, contract: built, config: withQuietHours(loaded.config, null), ruleSet: loaded.ruleSet });
            const all = [...result.planned, ...result.unplanned];
            for (const notice of all) expect(notice.ruleSetVersion).toBe(loaded.ruleSet.version);
            if (loaded === withoutMastercard) {
              expect(all.map((notice) => notice.noticeType)).not.toContain('billing_reminder');
              expect(all.flatMap((notice) => notice.ruleIds).filter((ref) => ref.startsWith('mastercard/'))).toEqual([]);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

function withRules(rules: unknown[]): ReturnType<typeof loadNoticeConfig> {
  const json = JSON.parse(readFileSync('config/notice-ledger.json', 'utf8')) as Record<string, unknown>;
  return parseNoticeConfig({ ...json, rules }, 'operator.json');
}
