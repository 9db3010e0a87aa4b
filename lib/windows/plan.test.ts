import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadNoticeConfig, parseNoticeConfig } from './load-config';
import { planEvent, type Plan, type PlanningEvent } from './plan';
import { windowVerdict } from './verdict';
import type { Contract } from './rules';

/**
 * Every expected instant below was worked out by hand from the rule's text, the zone's offsets
 * and its DST dates (US 2027: 14 March / 7 November; EU: 28 March / 31 October; New Zealand:
 * 4 April / 26 September), not by running the code. The comments give the local reading.
 */
const shipped = loadNoticeConfig('config/notice-ledger.json');
type Json = Record<string, unknown>;

const shippedJson = JSON.parse(readFileSync('config/notice-ledger.json', 'utf8')) as Json;

/** The shipped file's entry for one notice type, to change in a copy. */
function noticeTypeIn(json: Json, name: string): Json {
  const entry = (json.noticeTypes as Record<string, Json | undefined>)[name];
  if (!entry) throw new Error(`no notice type ${name}`);
  return entry;
}

function withChanges(changes: (json: Json) => void) {
  const json = structuredClone(shippedJson);
  changes(json);
  return parseNoticeConfig(json, 'test.json');
}

function plan({
  region,
  timeZone,
  anchorAt,
  now,
  contract = {},
  type = 'subscription.renewal',
  loaded = shipped,
}: {
  region: string;
  timeZone: string;
  anchorAt: string;
  now: string;
  contract?: Contract;
  type?: string;
  loaded?: ReturnType<typeof loadNoticeConfig>;
}): Plan {
  const event: PlanningEvent = { type, anchorAt: new Date(anchorAt), recipient: { region, timeZone }, contract };
  return planEvent({ config: loaded.config, ruleSet: loaded.ruleSet, event, now: new Date(now) });
}

function planned(result: Plan, noticeType: string) {
  const found = result.planned.find((notice) => notice.noticeType === noticeType);
  if (!found) throw new Error(`${noticeType} not planned: ${JSON.stringify(result.unplanned)}`);
  return {
    earliest: found.window.earliest.toISOString(),
    latest: found.window.latest.toISOString(),
    dueAt: found.dueAt.toISOString(),
    ruleIds: found.ruleIds,
    notice: found,
  };
}

const typesOf = (result: Plan) => ({
  planned: result.planned.map((notice) => notice.noticeType),
  unplanned: result.unplanned.map((notice) => notice.noticeType),
});

describe('courtesy notices: the merchant window only', () => {
  it('plans t72 and t24 around the charge, and no required notice where no rule applies', () => {
    const result = plan({
      region: 'US-TX',
      timeZone: 'America/Chicago',
      anchorAt: '2027-01-20T15:00:00Z',
      now: '2027-01-01T00:00:00Z',
      contract: { termMonths: 1 },
    });
    expect(typesOf(result)).toEqual({ planned: ['renewal_notice_t72', 'renewal_notice_t24'], unplanned: [] });
    expect(planned(result, 'renewal_notice_t72')).toMatchObject({
      earliest: '2027-01-17T15:00:00.000Z',
      latest: '2027-01-19T15:00:00.000Z',
      dueAt: '2027-01-17T15:00:00.000Z',
      ruleIds: [],
    });
  });

  it('starts the window at now when part of it has passed, and reports a passed one', () => {
    const result = plan({ region: 'US-TX', timeZone: 'UTC', anchorAt: '2027-01-20T15:00:00Z', now: '2027-01-19T20:00:00Z' });
    expect(result.unplanned).toEqual([
      expect.objectContaining({ noticeType: 'renewal_notice_t72', category: 'courtesy', reason: 'window_passed', ruleIds: [] }),
    ]);
    expect(planned(result, 'renewal_notice_t24')).toMatchObject({ earliest: '2027-01-19T20:00:00.000Z', dueAt: '2027-01-19T20:00:00.000Z' });
  });

  it('plans payment recovery from the reconciliation to 48 h after it', () => {
    const result = plan({
      type: 'reconciliation.exception',
      region: 'DE',
      timeZone: 'Europe/Berlin',
      anchorAt: '2027-02-01T09:00:00Z',
      now: '2027-02-01T09:05:00Z',
    });
    expect(typesOf(result)).toEqual({ planned: ['payment_recovery'], unplanned: [] });
    expect(planned(result, 'payment_recovery')).toMatchObject({ earliest: '2027-02-01T09:05:00.000Z', latest: '2027-02-03T09:00:00.000Z' });
  });

  it('refuses an event type the configuration does not know, and an unknown zone', () => {
    expect(() => plan({ type: 'order.shipped', region: 'US', timeZone: 'UTC', anchorAt: '2027-01-01T00:00:00Z', now: '2026-12-01T00:00:00Z' })).toThrow(
      /unknown event type "order.shipped"/,
    );
  });
});

describe('California', () => {
  it('annual term, spring forward inside the window: 00:30 PDT on 20 March', () => {
    // Floor, 15 days: exact 5 Mar 07:30Z (4 Mar 23:30 PST) is before the calendar end of 5 March.
    // Ceiling, 45 days: exact 3 Feb 07:30Z is 2 Feb 23:30 PST, so the calendar start of 3 Feb wins.
    const result = plan({
      region: 'US-CA',
      timeZone: 'America/Los_Angeles',
      anchorAt: '2027-03-20T07:30:00Z',
      now: '2027-01-01T00:00:00Z',
      contract: { termMonths: 12 },
    });
    expect(planned(result, 'auto_renewal_notice')).toMatchObject({
      earliest: '2027-02-03T08:00:00.000Z',
      latest: '2027-03-05T07:30:00.000Z',
      dueAt: '2027-02-03T08:00:00.000Z',
      ruleIds: ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1'],
    });
  });

  it('annual term, fall back inside the window: 23:30 PST on 20 November', () => {
    // Floor: exact 6 Nov 07:30Z is 6 Nov 00:30 PDT, a day too late by the calendar; the calendar
    // end of 5 Nov (07:00Z on the 6th) wins. Ceiling: exact 7 Oct 07:30Z is after 6 Oct's start.
    const result = plan({
      region: 'US-CA',
      timeZone: 'America/Los_Angeles',
      anchorAt: '2027-11-21T07:30:00Z',
      now: '2027-09-01T00:00:00Z',
      contract: { termMonths: 12 },
    });
    expect(planned(result, 'auto_renewal_notice')).toMatchObject({ earliest: '2027-10-07T07:30:00.000Z', latest: '2027-11-06T06:59:59.999Z' });
  });

  it('annual term: open at the last instant of the floor, a gap one millisecond later', () => {
    const base = { region: 'US-CA', timeZone: 'America/Los_Angeles', anchorAt: '2027-11-21T07:30:00Z', contract: { termMonths: 12 } };
    expect(planned(plan({ ...base, now: '2027-11-06T06:59:59.999Z' }), 'auto_renewal_notice')).toMatchObject({
      earliest: '2027-11-06T06:59:59.999Z',
      latest: '2027-11-06T06:59:59.999Z',
    });
    const late = plan({ ...base, now: '2027-11-06T07:00:00.000Z' });
    expect(late.unplanned).toContainEqual(
      expect.objectContaining({
        noticeType: 'auto_renewal_notice',
        category: 'required',
        reason: 'window_passed',
        ruleIds: ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1'],
      }),
    );
    expect(late.planned.map((notice) => notice.noticeType)).not.toContain('auto_renewal_notice');
  });

  it('annual reminder (§17602(h)): it rides on the renewal notice, and alone it may go any time in the year before the charge', () => {
    const base = { region: 'US-CA', timeZone: 'America/Los_Angeles', anchorAt: '2027-03-20T07:30:00Z', contract: { termMonths: 12 } };
    const both = planned(plan({ ...base, now: '2026-01-01T00:00:00Z' }), 'auto_renewal_notice');
    expect(both.notice.requirements).toEqual(expect.arrayContaining(['how_to_cancel', 'renewal_terms', 'product_or_service', 'charge_frequency_and_amount']));
    // Without the 15–45-day rule: from 00:30 PDT on 20 March 2026 (DST began on 8 March) to the charge.
    const alone = plan({ ...base, now: '2026-01-01T00:00:00Z', loaded: withChanges((json) => (json.rules = [{ id: 'US-CA/arl-annual', enabled: false }])) });
    expect(planned(alone, 'auto_renewal_notice')).toMatchObject({
      earliest: '2026-03-20T07:30:00.000Z',
      latest: '2027-03-20T07:30:00.000Z',
      dueAt: '2026-03-20T07:30:00.000Z',
      ruleIds: ['US-CA/ab2863-annual-reminder@1'],
    });
  });

  it('an 11-month term calls for no auto-renewal notice', () => {
    const result = plan({
      region: 'US-CA',
      timeZone: 'America/Los_Angeles',
      anchorAt: '2027-06-30T17:00:00Z',
      now: '2027-05-01T00:00:00Z',
      contract: { termMonths: 11 },
    });
    expect(typesOf(result).planned).not.toContain('auto_renewal_notice');
  });

  it('trial of 31 days: 3–21 days before it ends; a 30-day trial calls for nothing', () => {
    // 10:00 PDT on 30 June: floor 27 Jun 17:00Z, ceiling 9 Jun 17:00Z (both exact readings win).
    const base = { region: 'US-CA', timeZone: 'America/Los_Angeles', anchorAt: '2027-06-30T17:00:00Z', now: '2027-05-01T00:00:00Z' };
    expect(planned(plan({ ...base, contract: { trialDays: 31 } }), 'trial_conversion_notice')).toMatchObject({
      earliest: '2027-06-09T17:00:00.000Z',
      latest: '2027-06-27T17:00:00.000Z',
      ruleIds: ['US-CA/arl-trial-promo@1'],
    });
    expect(typesOf(plan({ ...base, contract: { trialDays: 30 } })).planned).not.toContain('trial_conversion_notice');
  });

  it('trial paid by Visa: California and Visa together, 7–21 days', () => {
    const result = plan({
      region: 'US-CA',
      timeZone: 'America/Los_Angeles',
      anchorAt: '2027-06-30T17:00:00Z',
      now: '2027-05-01T00:00:00Z',
      contract: { trialDays: 31, paymentNetwork: 'visa' },
    });
    const notice = planned(result, 'trial_conversion_notice');
    expect(notice).toMatchObject({
      earliest: '2027-06-09T17:00:00.000Z',
      latest: '2027-06-23T17:00:00.000Z',
      ruleIds: ['US-CA/arl-trial-promo@1', 'visa/trial-promo@1'],
    });
    expect(notice.notice.requirements).toContain('online_cancel_link');
  });

  it('price change: 7–30 days before it takes effect, from its own date', () => {
    // Effective 00:00 PDT on 1 August; the charge is later and does not matter.
    const result = plan({
      region: 'US-CA',
      timeZone: 'America/Los_Angeles',
      anchorAt: '2027-08-15T17:00:00Z',
      now: '2027-06-01T00:00:00Z',
      contract: { priceChange: { effectiveAt: '2027-08-01T07:00:00Z' } },
    });
    expect(planned(result, 'price_change_notice')).toMatchObject({
      earliest: '2027-07-02T07:00:00.000Z',
      latest: '2027-07-25T07:00:00.000Z',
      ruleIds: ['US-CA/ab2863-price-change@1'],
    });
  });
});

describe('Illinois, Colorado, Virginia, New York', () => {
  it('Illinois counts from the cancellation deadline, not the charge', () => {
    // Deadline 23:59:59 CDT on 30 April. Floor 30 days: exact 1 Apr 04:59:59Z (31 Mar 23:59:59 CDT)
    // is a millisecond inside the calendar end of 31 March, so it wins. Ceiling 60 days:
    // exact 2 Mar 04:59:59Z (1 Mar 22:59:59 CST) is after the calendar start of 1 March.
    const result = plan({
      region: 'US-IL',
      timeZone: 'America/Chicago',
      anchorAt: '2027-05-01T17:00:00Z',
      now: '2027-01-01T00:00:00Z',
      contract: { termMonths: 12, cancellationDeadlineAt: '2027-05-01T04:59:59Z' },
    });
    expect(planned(result, 'auto_renewal_notice')).toMatchObject({
      earliest: '2027-03-02T04:59:59.000Z',
      latest: '2027-04-01T04:59:59.000Z',
      ruleIds: ['US-IL/acra-renewal@1'],
    });
  });

  it('Colorado: 25–40 days before the renewal', () => {
    // 00:00 MDT on 15 September: floor 21 Aug 06:00Z, ceiling 6 Aug 06:00Z (the readings agree).
    const result = plan({
      region: 'US-CO',
      timeZone: 'America/Denver',
      anchorAt: '2027-09-15T06:00:00Z',
      now: '2027-07-01T00:00:00Z',
      contract: { termMonths: 12 },
    });
    expect(planned(result, 'auto_renewal_notice')).toMatchObject({
      earliest: '2027-08-06T06:00:00.000Z',
      latest: '2027-08-21T06:00:00.000Z',
      ruleIds: ['US-CO/arl-renewal@1'],
    });
  });

  it('Virginia: a trial longer than 30 days, within 30 days of its end, across spring forward', () => {
    // Trial ends 00:00 EDT on 1 April. Ceiling: exact 2 Mar 04:00Z is 1 Mar 23:00 EST, so the
    // calendar start of 2 March (05:00Z) wins. No floor: any time before the end.
    const base = { region: 'US-VA', timeZone: 'America/New_York', anchorAt: '2027-04-01T04:00:00Z', now: '2027-02-01T00:00:00Z' };
    expect(planned(plan({ ...base, contract: { trialDays: 31 } }), 'trial_conversion_notice')).toMatchObject({
      earliest: '2027-03-02T05:00:00.000Z',
      latest: '2027-04-01T04:00:00.000Z',
      ruleIds: ['US-VA/free-trial@1'],
    });
    expect(typesOf(plan({ ...base, contract: { trialDays: 30 } })).planned).not.toContain('trial_conversion_notice');
  });

  it('Virginia: renewal terms longer than 12 months only', () => {
    const base = { region: 'US-VA', timeZone: 'America/New_York', anchorAt: '2027-09-01T16:00:00Z', now: '2027-06-01T00:00:00Z' };
    expect(planned(plan({ ...base, contract: { termMonths: 24 } }), 'auto_renewal_notice').ruleIds).toEqual(['US-VA/long-term-renewal@1']);
    expect(typesOf(plan({ ...base, contract: { termMonths: 12 } })).planned).not.toContain('auto_renewal_notice');
  });

  it('New York: annual term, 15–45 days before the charge, due at the 45th day', () => {
    const result = plan({
      region: 'US-NY',
      timeZone: 'America/New_York',
      anchorAt: '2027-06-15T16:00:00Z',
      now: '2027-04-01T00:00:00Z',
      contract: { termMonths: 12 },
    });
    expect(planned(result, 'auto_renewal_notice')).toMatchObject({
      earliest: '2027-05-01T16:00:00.000Z',
      latest: '2027-05-31T16:00:00.000Z',
      dueAt: '2027-05-01T16:00:00.000Z',
    });
  });
});

describe('New York price increase', () => {
  it('9–30 days before the change: 5 business days read as 9 calendar days', () => {
    // Effective 00:00 EST on 1 March 2027. Floor 9 days: 20 Feb 05:00Z; ceiling 30: 30 Jan 05:00Z.
    const result = plan({
      region: 'US-NY',
      timeZone: 'America/New_York',
      anchorAt: '2027-03-05T17:00:00Z',
      now: '2027-01-01T00:00:00Z',
      contract: { priceChange: { effectiveAt: '2027-03-01T05:00:00Z' } },
    });
    expect(planned(result, 'price_change_notice')).toMatchObject({
      earliest: '2027-01-30T05:00:00.000Z',
      latest: '2027-02-20T05:00:00.000Z',
      ruleIds: ['US-NY/gbl-527a-price-increase@1'],
    });
  });
});

describe('France: calendar months before the non-renewal deadline', () => {
  it('31 March: the floor clamps to 28 February, across the March DST change', () => {
    // Deadline 23:59:59 CEST on 31 March. One month earlier has no 31st: 28 Feb, and the same time
    // into that (CET) day is 22:59:59Z. Three months earlier: 31 Dec at 23:59:59 CET.
    const result = plan({
      region: 'FR',
      timeZone: 'Europe/Paris',
      anchorAt: '2027-04-01T08:00:00Z',
      now: '2026-12-01T00:00:00Z',
      contract: { termMonths: 12, cancellationDeadlineAt: '2027-03-31T21:59:59Z' },
    });
    const notice = planned(result, 'auto_renewal_notice');
    expect(notice).toMatchObject({ earliest: '2026-12-31T22:59:59.000Z', latest: '2027-02-28T22:59:59.000Z', ruleIds: ['FR/conso-L215-1@1'] });
    expect(notice.notice.requirements).toEqual(['dedicated_message', 'deadline_in_visible_box']);
  });

  it('31 May: the ceiling rolls forward to 1 March', () => {
    // Deadline 12:00 CEST on 31 May. Three months earlier has no 31 February: 1 March, 12:00 CET.
    // One month earlier: 30 April, 12:00 CEST.
    const result = plan({
      region: 'FR',
      timeZone: 'Europe/Paris',
      anchorAt: '2027-06-01T08:00:00Z',
      now: '2027-01-01T00:00:00Z',
      contract: { termMonths: 12, cancellationDeadlineAt: '2027-05-31T10:00:00Z' },
    });
    expect(planned(result, 'auto_renewal_notice')).toMatchObject({ earliest: '2027-03-01T11:00:00.000Z', latest: '2027-04-30T10:00:00.000Z' });
  });

  it('a monthly plan is outside the rule; a region below FR is inside it', () => {
    const base = { timeZone: 'Europe/Paris', anchorAt: '2027-06-01T08:00:00Z', now: '2027-01-01T00:00:00Z' };
    expect(typesOf(plan({ ...base, region: 'FR', contract: { termMonths: 1 } })).planned).not.toContain('auto_renewal_notice');
    expect(typesOf(plan({ ...base, region: 'FR-75', contract: { termMonths: 12 } })).planned).toContain('auto_renewal_notice');
  });
});

describe('Visa, India, and zones far from UTC', () => {
  it('Visa alone: at least 7 days before the charge, from now', () => {
    const result = plan({
      region: 'US-TX',
      timeZone: 'UTC',
      anchorAt: '2027-01-20T12:00:00Z',
      now: '2027-01-01T00:00:00Z',
      contract: { trialDays: 7, paymentNetwork: 'visa' },
    });
    expect(planned(result, 'trial_conversion_notice')).toMatchObject({
      earliest: '2027-01-01T00:00:00.000Z',
      latest: '2027-01-13T12:00:00.000Z',
      ruleIds: ['visa/trial-promo@1'],
    });
  });

  it('Pacific/Auckland, NZDT ending inside the 7 days: the calendar reading sets the floor', () => {
    // Charge 23:30 NZST on 9 April. Exact: 2 Apr 11:30Z = 3 Apr 00:30 NZDT, a day late by the
    // calendar; the end of 2 April NZDT (11:00Z) minus a millisecond wins.
    const result = plan({
      region: 'NZ',
      timeZone: 'Pacific/Auckland',
      anchorAt: '2027-04-09T11:30:00Z',
      now: '2027-03-01T00:00:00Z',
      contract: { promoDays: 30, paymentNetwork: 'visa' },
    });
    expect(planned(result, 'trial_conversion_notice').latest).toBe('2027-04-02T10:59:59.999Z');
  });

  it('India: pre-debit at least 24 h before each debit, recorded as the issuer’s duty', () => {
    const base = { region: 'IN', timeZone: 'Asia/Kolkata', anchorAt: '2027-02-10T03:30:00Z' };
    const notice = planned(plan({ ...base, now: '2027-02-01T00:00:00Z' }), 'pre_debit_notice');
    expect(notice).toMatchObject({ earliest: '2027-02-01T00:00:00.000Z', latest: '2027-02-09T03:30:00.000Z', ruleIds: ['IN/rbi-emandate-pre-debit@1'] });
    expect(notice.notice.dutyHolders).toEqual(['issuer']);
    expect(plan({ ...base, now: '2027-02-09T03:30:00.001Z' }).unplanned).toContainEqual(
      expect.objectContaining({ noticeType: 'pre_debit_notice', reason: 'window_passed', ruleIds: ['IN/rbi-emandate-pre-debit@1'] }),
    );
  });

  it('India: an operator whose issuer sends it switches the type off', () => {
    const loaded = withChanges((json) => {
      noticeTypeIn(json, 'pre_debit_notice').enabled = false;
    });
    const result = plan({ loaded, region: 'IN', timeZone: 'Asia/Kolkata', anchorAt: '2027-02-10T03:30:00Z', now: '2027-02-01T00:00:00Z' });
    expect(typesOf(result)).toEqual({ planned: ['renewal_notice_t72', 'renewal_notice_t24'], unplanned: [] });
  });
});

describe('Mastercard AN 4934', () => {
  it('billed less often than every six months: 3–7 days before each charge, in a notice of its own', () => {
    // 10:00 CEST on 10 April: both exact readings win (3 Apr and 7 Apr 08:00Z).
    const base = { region: 'DE', timeZone: 'Europe/Berlin', anchorAt: '2027-04-10T08:00:00Z', now: '2027-03-01T00:00:00Z' };
    expect(planned(plan({ ...base, contract: { termMonths: 12, paymentNetwork: 'mastercard' } }), 'billing_reminder')).toMatchObject({
      earliest: '2027-04-03T08:00:00.000Z',
      latest: '2027-04-07T08:00:00.000Z',
      dueAt: '2027-04-03T08:00:00.000Z',
      ruleIds: ['mastercard/an4934-subscription-billing@1'],
    });
    // The interval is the billing's when given, else the term's; six months is not "less often than every six".
    const reminded = (contract: Contract) =>
      typesOf(plan({ ...base, contract: { paymentNetwork: 'mastercard', ...contract } })).planned.includes('billing_reminder');
    expect(reminded({ termMonths: 12, billingIntervalMonths: 1 })).toBe(false);
    expect(reminded({ termMonths: 1, billingIntervalMonths: 7 })).toBe(true);
    expect(reminded({ termMonths: 6 })).toBe(false);
    expect(reminded({ termMonths: 7 })).toBe(true);
    expect(reminded({ termMonths: 12, paymentNetwork: 'visa' })).toBe(false);
    expect(reminded({})).toBe(false);
  });

  it('across the November fall back in Los Angeles: the calendar reading sets the floor', () => {
    // Charge 23:30 PST on 9 November. Floor: exact 7 Nov 07:30Z is 23:30 PST on the 7th, a day late
    // by the calendar; the end of 6 November PDT (06:59:59.999Z on the 7th) wins. Ceiling: exact
    // 3 Nov 07:30Z is 00:30 PDT on 3 November, after the start of 2 November.
    const result = plan({
      region: 'US-CA',
      timeZone: 'America/Los_Angeles',
      anchorAt: '2027-11-10T07:30:00Z',
      now: '2027-10-01T00:00:00Z',
      contract: { termMonths: 12, paymentNetwork: 'mastercard' },
    });
    expect(planned(result, 'billing_reminder')).toMatchObject({ earliest: '2027-11-03T07:30:00.000Z', latest: '2027-11-07T06:59:59.999Z' });
    // California's renewal notice 15–45 days out is its own notice, not a conflict.
    expect(planned(result, 'auto_renewal_notice').ruleIds).toEqual(['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1']);
    expect(result.unplanned).toEqual([]);
  });

  it('a trial longer than 7 days: 3–7 days before it ends; with California’s trial rule, 3–7 days', () => {
    const texas = { region: 'US-TX', timeZone: 'UTC', anchorAt: '2027-01-20T12:00:00Z', now: '2027-01-01T00:00:00Z' };
    expect(planned(plan({ ...texas, contract: { trialDays: 8, paymentNetwork: 'mastercard' } }), 'trial_conversion_notice')).toMatchObject({
      earliest: '2027-01-13T12:00:00.000Z',
      latest: '2027-01-17T12:00:00.000Z',
      ruleIds: ['mastercard/an4934-trial@1'],
    });
    expect(typesOf(plan({ ...texas, contract: { trialDays: 7, paymentNetwork: 'mastercard' } })).planned).not.toContain('trial_conversion_notice');
    expect(typesOf(plan({ ...texas, contract: { promoDays: 8, paymentNetwork: 'mastercard' } })).planned).toContain('trial_conversion_notice');
    // 10:00 PDT on 30 June, the trial's end: California 9–27 June 17:00Z, Mastercard 23–27 June.
    const california = plan({
      region: 'US-CA',
      timeZone: 'America/Los_Angeles',
      anchorAt: '2027-06-30T17:00:00Z',
      now: '2027-05-01T00:00:00Z',
      contract: { trialDays: 31, paymentNetwork: 'mastercard' },
    });
    expect(planned(california, 'trial_conversion_notice')).toMatchObject({
      earliest: '2027-06-23T17:00:00.000Z',
      latest: '2027-06-27T17:00:00.000Z',
      ruleIds: ['US-CA/arl-trial-promo@1', 'mastercard/an4934-trial@1'],
    });
  });
});

describe('quiet hours', () => {
  const quiet = withChanges((json) => {
    json.quietHours = '21:00-08:00';
  });

  it('moves the due time to their end in the recipient’s zone (Asia/Kolkata)', () => {
    // now 21:30 IST: the next 08:00 IST is 02:30Z.
    const result = plan({ loaded: quiet, region: 'IN', timeZone: 'Asia/Kolkata', anchorAt: '2027-02-10T03:30:00Z', now: '2027-02-01T16:00:00Z' });
    expect(planned(result, 'pre_debit_notice')).toMatchObject({ dueAt: '2027-02-02T02:30:00.000Z' });
    expect(planned(result, 'pre_debit_notice').notice.quietHours).toBe('moved');
  });

  it('ends them at 08:00 local on both DST nights in Los Angeles', () => {
    // t72 due 01:30 PDT on 7 Nov 2027 (08:30Z); clocks fall back at 02:00, so 08:00 PST is 16:00Z.
    const fall = plan({ loaded: quiet, region: 'US-TX', timeZone: 'America/Los_Angeles', anchorAt: '2027-11-10T08:30:00Z', now: '2027-11-01T00:00:00Z' });
    expect(planned(fall, 'renewal_notice_t72')).toMatchObject({ dueAt: '2027-11-07T16:00:00.000Z' });
    // t72 due 01:30 PST on 14 Mar 2027 (09:30Z); clocks spring forward at 02:00, so 08:00 PDT is 15:00Z.
    const spring = plan({ loaded: quiet, region: 'US-TX', timeZone: 'America/Los_Angeles', anchorAt: '2027-03-17T09:30:00Z', now: '2027-03-01T00:00:00Z' });
    expect(planned(spring, 'renewal_notice_t72')).toMatchObject({ dueAt: '2027-03-14T15:00:00.000Z' });
  });

  it('when they cover the rest of the window: a courtesy notice is unplanned, a required one goes inside them', () => {
    // UTC, charge 03:30 on 11 Jan, now 02:30 on 10 Jan: t72 has 02:30–03:30 left, all quiet.
    const result = plan({ loaded: quiet, region: 'IN', timeZone: 'UTC', anchorAt: '2027-01-11T03:30:00Z', now: '2027-01-10T02:30:00Z' });
    expect(result.unplanned).toEqual([expect.objectContaining({ noticeType: 'renewal_notice_t72', reason: 'quiet_hours_cover_window' })]);
    expect(planned(result, 'renewal_notice_t24')).toMatchObject({ dueAt: '2027-01-10T08:00:00.000Z' });
    // Pre-debit: 02:30–03:30 on 10 Jan, all quiet; the law's window wins over the night.
    expect(planned(result, 'pre_debit_notice')).toMatchObject({ dueAt: '2027-01-10T02:30:00.000Z', latest: '2027-01-10T03:30:00.000Z' });
    expect(planned(result, 'pre_debit_notice').notice.quietHours).toBe('overridden');
  });
});

describe('rules that cannot be met together', () => {
  it('reports a required notice whose rules conflict, naming them', () => {
    const loaded = withChanges((json) => {
      json.rules = [
        {
          id: 'US-CA/house-rule',
          version: 1,
          title: 'Counsel: also at most 10 days before the charge',
          jurisdiction: 'US-CA',
          obligation: 'auto_renewal_notice',
          anchor: 'charge',
          window: { unit: 'days', max: 10 },
          dutyHolder: 'merchant',
          sourceUrl: 'https://example.com/memo',
          checkedAt: '2026-12-01',
        },
      ];
    });
    const result = plan({
      loaded,
      region: 'US-CA',
      timeZone: 'America/Los_Angeles',
      anchorAt: '2027-06-30T17:00:00Z',
      now: '2027-05-01T00:00:00Z',
      contract: { termMonths: 12 },
    });
    expect(result.unplanned).toEqual([
      expect.objectContaining({
        noticeType: 'auto_renewal_notice',
        category: 'required',
        reason: 'rules_conflict',
        ruleIds: ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1', 'US-CA/house-rule@1'],
      }),
    ]);
    expect(result.unplanned[0]?.ruleSetVersion).not.toBe(shipped.ruleSet.version);
  });

  it('reports a required notice whose operator window misses the rules', () => {
    const loaded = withChanges((json) => {
      noticeTypeIn(json, 'auto_renewal_notice').window = { from: '-72h', to: '-24h' };
    });
    const result = plan({
      loaded,
      region: 'US-CA',
      timeZone: 'America/Los_Angeles',
      anchorAt: '2027-06-30T17:00:00Z',
      now: '2027-05-01T00:00:00Z',
      contract: { termMonths: 12 },
    });
    expect(result.unplanned).toEqual([
      expect.objectContaining({
        noticeType: 'auto_renewal_notice',
        reason: 'outside_merchant_window',
        ruleIds: ['US-CA/ab2863-annual-reminder@1', 'US-CA/arl-annual@1'],
      }),
    ]);
  });
});

describe('windowVerdict', () => {
  const window = { earliest: new Date('2027-01-10T00:00:00Z'), latest: new Date('2027-01-12T00:00:00Z') };
  it('defers before earliest, is open on both ends, and missed after latest', () => {
    expect(windowVerdict(window, new Date('2027-01-09T23:59:59.999Z'))).toEqual({ verdict: 'early', until: window.earliest });
    expect(windowVerdict(window, window.earliest)).toEqual({ verdict: 'open' });
    expect(windowVerdict(window, window.latest)).toEqual({ verdict: 'open' });
    expect(windowVerdict(window, new Date('2027-01-12T00:00:00.001Z'))).toEqual({ verdict: 'missed' });
  });
});
