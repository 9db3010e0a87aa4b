import type { z } from 'zod';
import type { ruleSchema } from './rules';

/**
 * The shipped jurisdiction rules: a default, not legal advice. Each was checked on `checkedAt`
 * against the source it names; what the source did not settle is listed in `unconfirmed`, and
 * where it left a bound open the rule says what it assumed. docs/send-windows.md has the same table with the sources. Bump `version` whenever a
 * rule's meaning changes: a planned notice records the rule ids and versions that set its window.
 */
type RuleInput = z.input<typeof ruleSchema>;

const checkedAt = '2026-12-01';
/** The rules added or re-read against a primary source for issue 28. */
const recheckedAt = '2026-12-02';

/**
 * California's chaptered AB 2863 (Stats. 2024, ch. 515), the text of §§ 17601 and 17602 as amended
 * for contracts entered into, amended or extended on or after 1 July 2025 (§ 17601(b), § 17602(j)).
 * leginfo cannot be reached from where the rules were written; the bill text was read whole from a
 * verbatim copy of this page kept in a public repository (docs/send-windows.md names it).
 */
const caAb2863Text = 'https://leginfo.legislature.ca.gov/faces/billTextClient.xhtml?bill_id=202320240AB2863';
const visaDocument =
  "Visa's own document (article AI09067, usa.visa.com/dam/VCOM/global/support-legal/documents/subscription-merchants-visa-public.pdf) was not in reach on 2026-12-02, only quoted by others";
const mastercardRules =
  "Mastercard's own Transaction Processing Rules and the announcement AN 4934 were not in reach (AN 4934 is published to Mastercard's customers only)";
const readFromCopy = 'the chaptered text was read in a verbatim copy of the leginfo page (leginfo itself could not be reached), not on leginfo';

export const defaultRules: readonly RuleInput[] = [
  {
    id: 'US-CA/arl-annual',
    version: 1,
    title: 'California BPC §17602(b)(2): initial term of one year or longer, notice 15–45 days before renewal',
    jurisdiction: 'US-CA',
    obligation: 'auto_renewal_notice',
    appliesWhen: { all: [{ field: 'termMonths', op: 'gte', value: 12 }] },
    anchor: 'charge',
    window: { unit: 'days', min: 15, max: 45 },
    requirements: ['how_to_cancel', 'renewal_terms'],
    dutyHolder: 'merchant',
    sourceUrl: caAb2863Text,
    checkedAt: recheckedAt,
    unconfirmed: [
      readFromCopy,
      'contracts before 1 July 2025 are under the earlier text, which the AB 390 digest says also asks that the term renew for more than one month; contracts carry only termMonths, so every term of 12 months or more is included',
    ],
  },
  {
    id: 'US-CA/arl-trial-promo',
    version: 1,
    title: 'California BPC §17602(b)(1): free trial or promotional price of more than 31 days, notice 3–21 days before it ends',
    jurisdiction: 'US-CA',
    obligation: 'trial_conversion_notice',
    appliesWhen: {
      all: [],
      any: [
        { field: 'trialDays', op: 'gte', value: 31 },
        { field: 'promoDays', op: 'gte', value: 31 },
      ],
    },
    anchor: 'trial_end',
    window: { unit: 'days', min: 3, max: 21 },
    requirements: ['how_to_cancel', 'price_after_trial'],
    dutyHolder: 'merchant',
    sourceUrl: caAb2863Text,
    checkedAt: recheckedAt,
    unconfirmed: [
      readFromCopy,
      'the amended text says "more than 31 days" for both a trial and a promotional price; 31-day ones stay included because the AB 390 digest gives trials "lasting 31 or more days" for contracts before 1 July 2025 (the stricter reading)',
      'when a contract calls for both this notice and the one-year renewal notice, §17602(b) requires only the renewal notice; both are planned here',
      'the exemption of §17602(b)(1)(B) (contract not entered electronically and no electronic contact collected) is not modelled',
    ],
  },
  {
    id: 'US-CA/ab2863-price-change',
    version: 1,
    title: 'California BPC §17602(g)(2) (AB 2863): a change in the fee, notice 7–30 days before it takes effect',
    jurisdiction: 'US-CA',
    obligation: 'price_change_notice',
    appliesWhen: { all: [{ field: 'priceChange', op: 'present' }] },
    anchor: 'price_change',
    window: { unit: 'days', min: 7, max: 30 },
    requirements: ['how_to_cancel', 'new_price'],
    dutyHolder: 'merchant',
    sourceUrl: caAb2863Text,
    checkedAt: recheckedAt,
    unconfirmed: [
      readFromCopy,
      'applies to contracts entered into, amended or extended on or after 1 July 2025; the contract date is not a contract field, so older contracts get it too, where §17602(g)(1) asks only for a notice before the change, which a notice 7–30 days ahead also is',
    ],
  },
  {
    id: 'US-CA/ab2863-annual-reminder',
    version: 1,
    title: 'California BPC §17602(h) (AB 2863): annual reminder of the product, the frequency and amount of the charges and the means to cancel',
    jurisdiction: 'US-CA',
    // An annual agreement renews once a year, so one reminder per renewal, in the year before it, is
    // "annually" (§17602(i)(4)). It shares the auto-renewal notice, whose 15–45 days it leaves as they
    // are: that notice already discloses all §17602(h)(2) asks, and one message a year does both.
    obligation: 'auto_renewal_notice',
    appliesWhen: { all: [{ field: 'termMonths', op: 'gte', value: 12 }] },
    anchor: 'charge',
    window: { unit: 'months', max: 12 },
    requirements: ['product_or_service', 'charge_frequency_and_amount', 'how_to_cancel'],
    dutyHolder: 'merchant',
    sourceUrl: caAb2863Text,
    checkedAt: recheckedAt,
    unconfirmed: [
      readFromCopy,
      '"an annual automatic renewal agreement or continuous service agreement": a monthly plan that continues until cancelled is a continuous service agreement too, and its yearly reminder is not planned, because a monthly renewal event does not say which charge is the anniversary',
      'a term longer than a year gets one reminder per renewal, not one a year',
      'the reminder must go "in the same medium" as the activation; the channel is the notice type\'s, not checked against how the consumer signed up',
      'applies to contracts entered into, amended or extended on or after 1 July 2025; the contract date is not checked (an older contract gets the same notice it already gets under §17602(b)(2))',
    ],
  },
  {
    id: 'US-IL/acra-renewal',
    version: 1,
    title: 'Illinois Automatic Contract Renewal Act: term of 12 months or more, written notice 30–60 days before the cancellation deadline',
    jurisdiction: 'US-IL',
    obligation: 'auto_renewal_notice',
    appliesWhen: { all: [{ field: 'termMonths', op: 'gte', value: 12 }] },
    anchor: 'cancellation_deadline',
    window: { unit: 'days', min: 30, max: 60 },
    requirements: ['will_renew_unless_cancelled', 'where_to_find_cancellation_procedure'],
    dutyHolder: 'merchant',
    sourceUrl: 'https://www.legalfix.com/statutes/state-codes/illinois/chapter-815/act-815-ilcs-601',
    checkedAt,
    unconfirmed: ['the statute also requires the renewal term to be longer than one month; assumed from termMonths'],
  },
  {
    id: 'US-CO/arl-renewal',
    version: 1,
    title: 'Colorado C.R.S. 6-1-732: initial term of 12 months, notice 25–40 days before renewal',
    jurisdiction: 'US-CO',
    obligation: 'auto_renewal_notice',
    appliesWhen: { all: [{ field: 'termMonths', op: 'gte', value: 12 }] },
    anchor: 'charge',
    window: { unit: 'days', min: 25, max: 40 },
    requirements: ['how_to_cancel'],
    dutyHolder: 'merchant',
    sourceUrl: 'https://tsscolorado.com/does-new-law-boost-consumer-protection-or-turn-colorado-into-sippy-cup-state',
    checkedAt: recheckedAt,
    unconfirmed: [
      'the 25–40 days come from a news report of the 2021 law; the statute text of the subsection was not found (searched again on 2026-12-02: HB21-1239 enrolled text and C.R.S. 6-1-732 not in reach; SB25-145 as enrolled amends only (1)(d), (2)(d) and adds (1)(d.7), (2.5), (7))',
      'the 12-month threshold comes from a bill summary of HB21-1239 that was cut off; whether the anchor is the renewal or the end of the term is not confirmed',
      "a lawyer's summary (courtcoaching.com) says a term shorter than a year also gets the notice, 25–40 days before the renewal that carries it past each anniversary; not modelled",
    ],
  },
  {
    id: 'US-VA/free-trial',
    version: 1,
    title: 'Virginia §59.1-207.46 (HB 1517): free trial longer than 30 days, notice within 30 days of its end',
    jurisdiction: 'US-VA',
    obligation: 'trial_conversion_notice',
    appliesWhen: { all: [{ field: 'trialDays', op: 'gt', value: 30 }] },
    anchor: 'trial_end',
    window: { unit: 'days', min: 0, max: 30 },
    requirements: ['option_to_cancel_before_trial_ends'],
    dutyHolder: 'merchant',
    sourceUrl: 'https://legiequity.us/va/bill/1643607/hb1517-virginia-consumer-protection-act-automatic-renewal-or-continuous-service-offers',
    checkedAt,
    unconfirmed: ['no minimum lead is stated; the notice must only come before the trial ends'],
  },
  {
    id: 'US-VA/long-term-renewal',
    version: 1,
    title: 'Virginia §59.1-207.46 (HB 744): renewal for more than 12 months, notice 30–60 days before the cancellation deadline',
    jurisdiction: 'US-VA',
    obligation: 'auto_renewal_notice',
    appliesWhen: { all: [{ field: 'termMonths', op: 'gt', value: 12 }] },
    anchor: 'cancellation_deadline',
    window: { unit: 'days', min: 30, max: 60 },
    requirements: ['option_to_cancel'],
    dutyHolder: 'merchant',
    sourceUrl: 'https://legacylis.virginia.gov/cgi-bin/legp604.exe?ses=241&typ=bil&val=hb744',
    checkedAt,
    unconfirmed: ['"before the cancellation deadline or the end of the current contract term": the cancellation deadline (the earlier) is used'],
  },
  {
    id: 'US-NY/gbl-527a-annual',
    version: 1,
    title: 'New York GBL §527-a(3)(b): initial paid term of one year or longer, notice 15–45 days before the cancellation deadline',
    jurisdiction: 'US-NY',
    obligation: 'auto_renewal_notice',
    appliesWhen: { all: [{ field: 'termMonths', op: 'gte', value: 12 }] },
    anchor: 'cancellation_deadline',
    // The bill (S5941-B) is titled "forty-five days prior to such charge"; a third-party compliance
    // write-up quotes 15–45 days before the cancellation deadline. The planner sends at a window's
    // start, so an on-time notice also meets a reading of "at least 45 days before".
    window: { unit: 'days', min: 15, max: 45 },
    requirements: ['how_to_cancel'],
    dutyHolder: 'merchant',
    sourceUrl: 'https://legiscan.com/NY/text/S05941/id/2807508/New_York-2023-S05941-Amended.html',
    checkedAt: recheckedAt,
    unconfirmed: [
      'the bounds of subdivision 3(b) were not read in the statute: only the bill title ("forty-five days prior to such charge"), the opening of 3(b) in the bill text (which breaks off before its days) and an unattributed write-up (15–45 days before the cancellation deadline); nysenate.gov/legislation/laws/GBS/527-A not in reach on 2026-12-02',
      'that write-up also limits it to renewals for a paid term of six months or longer; contracts carry only termMonths',
    ],
  },
  {
    id: 'US-NY/gbl-527a-price-increase',
    version: 1,
    title: 'New York GBL §527-a (as amended 5 Nov 2025): material change including a price increase, notice 5 (business) to 30 days before it',
    jurisdiction: 'US-NY',
    obligation: 'price_change_notice',
    appliesWhen: { all: [{ field: 'priceChange', op: 'present' }] },
    anchor: 'price_change',
    // One summary says 5–30 days, another "at least 5 business days". Business days are not
    // modelled: 9 calendar days hold 5 business days even around a weekend and two holidays.
    window: { unit: 'days', min: 9, max: 30 },
    requirements: ['how_to_cancel', 'new_price'],
    dutyHolder: 'merchant',
    sourceUrl: 'https://www.mondaq.com/unitedstates/advertising-marketing-branding/1636502/ny-quietly-amends-automatic-renewal-law',
    checkedAt: recheckedAt,
    unconfirmed: [
      'from a law-firm summary of Part W of the 2025–26 budget bill (5–30 days) and an unattributed write-up (5 business days), not the statute text; 9 calendar days is our conservative stand-in for 5 business days',
    ],
  },
  {
    id: 'FR/conso-L215-1',
    version: 1,
    title: 'France, Code de la consommation L215-1: tacitly renewed fixed-term service contract, dedicated notice 1–3 months before the non-renewal deadline',
    jurisdiction: 'FR',
    obligation: 'auto_renewal_notice',
    appliesWhen: { all: [{ field: 'termMonths', op: 'gte', value: 2 }] },
    anchor: 'cancellation_deadline',
    window: { unit: 'months', min: 1, max: 3 },
    requirements: ['dedicated_message', 'deadline_in_visible_box'],
    dutyHolder: 'merchant',
    sourceUrl: 'https://french-business-law.com/french-legislation-art/article-l215-1-of-the-french-consumer-code',
    checkedAt,
    unconfirmed: [
      'the article has no term threshold; a monthly plan without commitment is usually an indefinite-term contract outside it, so contracts shorter than 2 months are assumed out of scope',
    ],
  },
  {
    id: 'visa/trial-promo',
    version: 1,
    title: 'Visa: trial or introductory offer ending, electronic reminder with an online cancel link at least 7 days before the recurring charge',
    jurisdiction: '*',
    obligation: 'trial_conversion_notice',
    appliesWhen: {
      all: [{ field: 'paymentNetwork', op: 'in', value: ['visa'] }],
      any: [
        { field: 'trialDays', op: 'gt', value: 0 },
        { field: 'promoDays', op: 'gt', value: 0 },
      ],
    },
    anchor: 'charge',
    window: { unit: 'days', min: 7 },
    requirements: ['online_cancel_link', 'electronic'],
    dutyHolder: 'merchant',
    sourceUrl: 'https://www.payvision.com/scheme-updates/visa-updt-policy-subs-merchs-off-free-trials/',
    checkedAt: recheckedAt,
    unconfirmed: [`read in acquirers' summaries of Visa's rule (effective 18 April 2020), not in Visa's own rules; ${visaDocument}`],
  },
  {
    id: 'visa/agreement-change',
    version: 1,
    title: 'Visa: the recurring agreement changed (price or billing period), electronic reminder with an online cancel link at least 7 days before the charge',
    jurisdiction: '*',
    obligation: 'price_change_notice',
    appliesWhen: {
      all: [
        { field: 'paymentNetwork', op: 'in', value: ['visa'] },
        { field: 'priceChange', op: 'present' },
      ],
    },
    anchor: 'charge',
    window: { unit: 'days', min: 7 },
    requirements: ['online_cancel_link', 'electronic'],
    dutyHolder: 'merchant',
    sourceUrl: 'https://www.paysafe.com/ca-en/industries-we-serve/nutraceutical-trial-continuity/enhanced-notification/',
    checkedAt: recheckedAt,
    unconfirmed: [
      `read in acquirers' summaries of Visa's rule, not in Visa's own rules; ${visaDocument}`,
      'a billing-period change is not a contract field yet',
    ],
  },
  {
    id: 'mastercard/an4934-subscription-billing',
    version: 1,
    title: 'Mastercard AN 4934 (22 Sep 2022): billing less often than every six months, electronic reminder 3–7 days before each billing',
    jurisdiction: '*',
    obligation: 'billing_reminder',
    // Less often than every six months: an interval of more than six. Without billingIntervalMonths
    // the term is the interval (contractNumber).
    appliesWhen: {
      all: [
        { field: 'paymentNetwork', op: 'in', value: ['mastercard'] },
        { field: 'billingIntervalMonths', op: 'gt', value: 6 },
      ],
    },
    anchor: 'charge',
    window: { unit: 'days', min: 3, max: 7 },
    requirements: ['subscription_terms', 'how_to_cancel', 'electronic'],
    dutyHolder: 'merchant',
    sourceUrl: 'https://navidor.com/mastercard-new-rules-subscriptions-recurring-billing-merchants-december-2021-june-2022/',
    checkedAt: recheckedAt,
    unconfirmed: [
      `read in acquirers' and processors' summaries of AN 4934 (navidor.com, wahospitality.org, corepay.net, developer.paypal.com/braintree); ${mastercardRules}`,
      'Mastercard\'s own materials were reported to conflict on "six months or greater" against "greater than six months" and on 3–7 days against "at least 7 days" (subscriptioninsider.com, Cobalt Law); the summaries that agree say less often than every six months, 3–7 days',
      'a later processor page (support.nets.eu, 2023) describes a 7–30-day reminder when billing is less frequent than every 180 days; not modelled',
    ],
  },
  {
    id: 'mastercard/an4934-trial',
    version: 1,
    title: 'Mastercard AN 4934 (22 Sep 2022): trial longer than 7 days, electronic reminder 3–7 days before the trial ends',
    jurisdiction: '*',
    obligation: 'trial_conversion_notice',
    appliesWhen: {
      all: [{ field: 'paymentNetwork', op: 'in', value: ['mastercard'] }],
      any: [
        { field: 'trialDays', op: 'gt', value: 7 },
        { field: 'promoDays', op: 'gt', value: 7 },
      ],
    },
    anchor: 'trial_end',
    window: { unit: 'days', min: 3, max: 7 },
    requirements: ['subscription_terms', 'how_to_cancel', 'electronic'],
    dutyHolder: 'merchant',
    sourceUrl: 'https://developer.paypal.com/braintree/articles/guides/recurring-billing/mastercard-requirements',
    checkedAt: recheckedAt,
    unconfirmed: [
      `read in acquirers' summaries of AN 4934 (developer.paypal.com/braintree, navidor.com, corepay.net); ${mastercardRules}`,
      'the rule is for trials of digital goods; contracts do not say digital or physical, so every trial is included (a physical-goods trial gets a reminder it may not need; its own 2019 rule, cardholder approval at the end of the trial, is not a notice and is not modelled)',
      'a "free or low-cost trial": a promotional price longer than 7 days is read as a low-cost trial',
    ],
  },
  {
    id: 'IN/rbi-emandate-pre-debit',
    version: 1,
    title: 'India, RBI e-mandate framework: pre-debit notification at least 24 hours before each recurring debit',
    jurisdiction: 'IN',
    obligation: 'pre_debit_notice',
    appliesWhen: { all: [] },
    anchor: 'charge',
    window: { unit: 'hours', min: 24 },
    requirements: ['merchant_name', 'amount', 'debit_date', 'opt_out'],
    dutyHolder: 'issuer',
    sourceUrl: 'https://vikaspedia.in/news/processing-of-e-mandates-for-recurring-transactions',
    checkedAt,
    unconfirmed: [
      'the duty is the card issuer’s (bank’s), not the merchant’s; a merchant notice does not discharge it',
      'FASTag/NCMC auto-replenishment is exempt (August 2024); no contract field tells that case apart',
    ],
  },
];
