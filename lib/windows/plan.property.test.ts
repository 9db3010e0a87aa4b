import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuietHours, quietHoursEnd } from './quiet-hours';
import { loadNoticeConfig, type NoticeConfig } from './load-config';
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
      termMonths: fc.constantFrom(0, 1, 2, 6, 11, 12, 13, 24),
      trialDays: fc.constantFrom(0, 7, 14, 30, 31, 45),
      promoDays: fc.constantFrom(0, 30, 31, 90),
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

function conditionHolds(condition: Condition, facts: Contract): boolean {
  const value = facts[condition.field];
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
          if (rules.some((rule) => rule.window.unit === 'months')) continue;
          const after = notice.window.latest.getTime() + 1;
          expect(rules.some((rule) => !meetsFloor(rule, anchorOf(rule, s.anchor, facts), after, s.timeZone))).toBe(true);
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
