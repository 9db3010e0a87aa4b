import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@/lib/config';
import { defaultRules } from './default-rules';
import { derivedEvidenceRef, evidenceRefProblem } from './evidence-ref';
import { loadNoticeConfig, NoticeConfigError, parseNoticeConfig } from './load-config';
import { ruleSchema } from './rules';

type Json = Record<string, unknown>;

const shippedFile = 'config/notice-ledger.json';
const shippedJson = JSON.parse(readFileSync(shippedFile, 'utf8')) as Json;

function changed(change: (json: Json) => void): Json {
  const json = structuredClone(shippedJson);
  change(json);
  return json;
}

function noticeType(json: Json, name: string): Json {
  const entry = (json.noticeTypes as Record<string, Json | undefined>)[name];
  if (!entry) throw new Error(`no notice type ${name}`);
  return entry;
}

function eventType(json: Json, name: string): Json {
  const entry = (json.eventTypes as Record<string, Json | undefined>)[name];
  if (!entry) throw new Error(`no event type ${name}`);
  return entry;
}

/** The problems a configuration is refused with (and that it is refused, not accepted). */
function problemsOf(json: unknown, file = 'operator.json'): string[] {
  try {
    parseNoticeConfig(json, file);
  } catch (error) {
    if (error instanceof NoticeConfigError) {
      expect(error.message).toContain(file);
      return error.problems;
    }
    throw error;
  }
  throw new Error('the configuration was accepted');
}

const wholeRule = {
  id: 'US-CA/arl-annual',
  version: 2,
  title: 'Counsel: California annual notice 20–40 days before',
  jurisdiction: 'US-CA',
  obligation: 'auto_renewal_notice',
  appliesWhen: { all: [{ field: 'termMonths', op: 'gte', value: 12 }] },
  anchor: 'charge',
  window: { unit: 'days', min: 20, max: 40 },
  dutyHolder: 'merchant',
  sourceUrl: 'https://example.com/counsel-memo',
  checkedAt: '2026-12-01',
};

describe('the shipped configuration', () => {
  it('loads from the default NOTICE_CONFIG path with the three original types and the required ones', () => {
    const file = loadConfig({ NOTICE_KEY_SECRET: 'x'.repeat(32) }).NOTICE_CONFIG;
    expect(file).toBe(shippedFile);
    const { config, ruleSet } = loadNoticeConfig(file);
    expect(Object.keys(config.noticeTypes)).toEqual([
      'renewal_notice_t72',
      'renewal_notice_t24',
      'payment_recovery',
      'auto_renewal_notice',
      'trial_conversion_notice',
      'price_change_notice',
      'pre_debit_notice',
      'billing_reminder',
    ]);
    expect(config.noticeTypes.renewal_notice_t72).toMatchObject({
      category: 'courtesy',
      window: { from: -72 * 3_600_000, to: -24 * 3_600_000 },
      obligation: null,
    });
    expect(config.noticeTypes.payment_recovery).toMatchObject({ event: 'reconciliation.exception', window: { from: 0, to: 48 * 3_600_000 } });
    expect(config.noticeTypes.pre_debit_notice).toMatchObject({ category: 'required', obligation: 'pre_debit_notice', window: null, enabled: true });
    expect(ruleSet.rules.map((rule) => rule.id).sort()).toEqual(defaultRules.map((rule) => rule.id).sort());
    expect(ruleSet.version).toMatch(/^rules-[0-9a-f]{12}$/);
  });

  it('ships every rule with a source, the date it was checked, and a required notice type for its obligation', () => {
    const { config } = loadNoticeConfig(shippedFile);
    const fulfilled = new Set(Object.values(config.noticeTypes).map((type) => type.obligation));
    for (const input of defaultRules) {
      const rule = ruleSchema.parse(input);
      expect(rule.sourceUrl, rule.id).toMatch(/^https:\/\//);
      // First checked on 1 December; re-read against primary sources on 2 December (issue 28).
      expect(['2026-12-01', '2026-12-02'], rule.id).toContain(rule.checkedAt);
      expect(fulfilled.has(rule.obligation), `${rule.id} → ${rule.obligation}`).toBe(true);
    }
    expect(new Set(defaultRules.map((rule) => rule.id)).size).toBe(defaultRules.length);
  });
});

describe('a bad field is named by its path', () => {
  it.each([
    [
      'a merchant window offset',
      (json: Json) => (noticeType(json, 'renewal_notice_t72').window = { from: '72 hours', to: '-24h' }),
      'noticeTypes.renewal_notice_t72.window.from: "72 hours" is not an offset',
    ],
    [
      'a window that ends before it starts',
      (json: Json) => (noticeType(json, 'renewal_notice_t72').window = { from: '-24h', to: '-72h' }),
      'noticeTypes.renewal_notice_t72.window.to: must not end before it starts',
    ],
    ['a category', (json: Json) => (noticeType(json, 'renewal_notice_t24').category = 'optional'), 'noticeTypes.renewal_notice_t24.category:'],
    ['a channel', (json: Json) => (noticeType(json, 'payment_recovery').channel = 'fax'), 'noticeTypes.payment_recovery.channel:'],
    ['a quiet-hours rule', (json: Json) => (noticeType(json, 'renewal_notice_t72').quietHours = '9pm-8am'), 'noticeTypes.renewal_notice_t72.quietHours:'],
    ['the file-wide quiet hours', (json: Json) => (json.quietHours = '25:00-08:00'), 'quietHours: must look like 21:00-08:00'],
    ['a correction policy', (json: Json) => (noticeType(json, 'auto_renewal_notice').correction = 'sometimes'), 'noticeTypes.auto_renewal_notice.correction:'],
    [
      'a template id',
      (json: Json) => (noticeType(json, 'auto_renewal_notice').template = 'Auto Renewal!'),
      'noticeTypes.auto_renewal_notice.template: must be a template id',
    ],
    [
      'an unknown key',
      (json: Json) => (noticeType(json, 'renewal_notice_t72').deadline = '-24h'),
      'noticeTypes.renewal_notice_t72: Unrecognized key: "deadline"',
    ],
    [
      'an event identity kind',
      (json: Json) => (eventType(json, 'subscription.renewal').identity = { subscription_id: 'uuid' }),
      'eventTypes.subscription.renewal.identity.subscription_id:',
    ],
    ['the version', (json: Json) => (json.version = 2), 'version:'],
  ])('%s', (_, change, expected) => {
    expect(problemsOf(changed(change)).join('\n')).toContain(expected);
  });

  it('references between sections', () => {
    const problems = problemsOf(
      changed((json) => {
        noticeType(json, 'renewal_notice_t72').event = 'subscription.renewed';
        noticeType(json, 'renewal_notice_t24').identity = ['subscription_id', 'period_end'];
        noticeType(json, 'payment_recovery').obligation = 'pre_debit_notice';
        noticeType(json, 'auto_renewal_notice').obligation = null;
        delete noticeType(json, 'payment_recovery').window;
        eventType(json, 'reconciliation.exception').subjectField = 'customer_id';
        eventType(json, 'reconciliation.exception').customerField = 'customer_id';
      }),
    );
    expect(problems).toEqual([
      'eventTypes.reconciliation.exception.subjectField: "customer_id" is not one of its identity fields',
      'eventTypes.reconciliation.exception.customerField: "customer_id" is not one of its identity fields',
      'noticeTypes.renewal_notice_t72.event: "subscription.renewed" is not a configured event type (subscription.renewal, reconciliation.exception)',
      'noticeTypes.renewal_notice_t24.identity.1: "period_end" is not an identity field of subscription.renewal',
      'noticeTypes.payment_recovery.window: a courtesy notice needs a merchant window',
      'noticeTypes.payment_recovery.obligation: a courtesy notice fulfils no legal obligation (category required?)',
      'noticeTypes.auto_renewal_notice.obligation: a required notice must name the obligation it fulfils',
    ]);
  });

  it('a rule entry, at its own field', () => {
    const problems = problemsOf(
      changed(
        (json) =>
          (json.rules = [
            { ...wholeRule, window: { unit: 'weeks', min: 2 } },
            { ...wholeRule, id: 'x', jurisdiction: 'California' },
          ]),
      ),
    );
    expect(problems.join('\n')).toContain('rules.0.window.unit:');
    expect(problems.join('\n')).toContain('rules.1.jurisdiction: must be a country (FR), a subdivision (US-CA) or *');
  });

  it('a rule whose floor is above its ceiling', () => {
    expect(problemsOf(changed((json) => (json.rules = [{ ...wholeRule, window: { unit: 'days', min: 50, max: 40 } }])))).toEqual([
      'rules.0.window.min: min must not exceed max',
    ]);
  });

  it('switching off a rule that does not exist, and a rule listed twice', () => {
    const problems = problemsOf(changed((json) => (json.rules = [{ id: 'US-XX/none', enabled: false }, wholeRule, wholeRule])));
    expect(problems).toEqual([
      'rules.0.id: "US-XX/none" is not a known rule, so it cannot be switched off',
      'rules.2.id: "US-CA/arl-annual" appears twice in the file',
    ]);
  });
});

describe('operator rules', () => {
  const shipped = loadNoticeConfig(shippedFile).ruleSet;

  it('replace a shipped rule by id, and the rule set version changes', () => {
    const { ruleSet } = parseNoticeConfig(
      changed((json) => (json.rules = [wholeRule])),
      'operator.json',
    );
    expect(ruleSet.rules.find((rule) => rule.id === 'US-CA/arl-annual')).toMatchObject({ version: 2, window: { min: 20, max: 40 } });
    expect(ruleSet.rules).toHaveLength(shipped.rules.length);
    expect(ruleSet.version).not.toBe(shipped.version);
  });

  it('switch a shipped rule off, or add a new one', () => {
    const { ruleSet } = parseNoticeConfig(
      changed(
        (json) =>
          (json.rules = [
            { id: 'IN/rbi-emandate-pre-debit', enabled: false },
            { ...wholeRule, id: 'US-MN/counsel' },
          ]),
      ),
      'operator.json',
    );
    expect(ruleSet.rules.find((rule) => rule.id === 'IN/rbi-emandate-pre-debit')?.enabled).toBe(false);
    expect(ruleSet.rules.map((rule) => rule.id)).toContain('US-MN/counsel');
  });

  it('give the same version for the same rules', () => {
    expect(parseNoticeConfig(structuredClone(shippedJson), 'copy.json').ruleSet.version).toBe(shipped.version);
  });
});

describe('the file itself', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'notice-config-'));

  it('names a file that cannot be read', () => {
    const file = path.join(dir, 'missing.json');
    expect(() => loadNoticeConfig(file)).toThrow(new RegExp(`Invalid notice configuration in ${file}:\\n  - cannot be read`));
  });

  it('names a file that is not JSON', () => {
    const file = path.join(dir, 'broken.json');
    writeFileSync(file, '{ "version": 1,');
    expect(() => loadNoticeConfig(file)).toThrow(/broken\.json:\n {2}- is not JSON/);
  });

  it('names the file and the field of a bad one on disk', () => {
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify(changed((json) => (noticeType(json, 'renewal_notice_t72').window = { from: '-72x', to: '-24h' }))));
    expect(() => loadNoticeConfig(file)).toThrow(
      `Invalid notice configuration in ${file}:\n  - noticeTypes.renewal_notice_t72.window.from: "-72x" is not an offset like -72h, -3d, 0h or +48h`,
    );
  });
});

describe('quiet hours resolution', () => {
  const window = { startMinute: 21 * 60, endMinute: 8 * 60 };
  const fallback = { startMinute: 22 * 60, endMinute: 6 * 60 };
  it("is the type's own, else the file's, else the process fallback (QUIET_HOURS); off is none", () => {
    const json = changed((json) => {
      noticeType(json, 'renewal_notice_t24').quietHours = '12:00-13:00';
      noticeType(json, 'payment_recovery').quietHours = 'off';
    });
    const { config } = parseNoticeConfig(json, 'test.json', { fallbackQuietHours: fallback });
    expect(config.noticeTypes.renewal_notice_t72?.quietHours).toEqual(fallback);
    expect(config.noticeTypes.renewal_notice_t24?.quietHours).toEqual({ startMinute: 12 * 60, endMinute: 13 * 60 });
    expect(config.noticeTypes.payment_recovery?.quietHours).toBeNull();
    expect(config.quietHours).toEqual(fallback);
    const withFile = parseNoticeConfig(
      changed((json) => (json.quietHours = '21:00-08:00')),
      'test.json',
      { fallbackQuietHours: fallback },
    ).config;
    expect(withFile.noticeTypes.renewal_notice_t72?.quietHours).toEqual(window);
    expect(withFile.quietHours).toEqual(window);
    expect(parseNoticeConfig(shippedJson, 'test.json').config.noticeTypes.renewal_notice_t72?.quietHours).toBeNull();
  });
});

describe('a notice type’s cancel redirect (no open redirect)', () => {
  const withRedirect = (redirect: unknown) => changed((json) => (noticeType(json, 'renewal_notice_t72').cancel = { redirect }));

  it('accepts an https URL with a fixed host and identity placeholders in the path or query', () => {
    const { config } = parseNoticeConfig(withRedirect('https://merchant.example/subscriptions/{subscription_id}/cancel?c={customer_id}'), 'operator.json');
    expect(config.noticeTypes.renewal_notice_t72?.cancel).toEqual({
      requiresCode: false,
      redirect: 'https://merchant.example/subscriptions/{subscription_id}/cancel?c={customer_id}',
    });
    expect(config.noticeTypes.auto_renewal_notice?.cancel).toEqual({ requiresCode: true });
    expect(config.noticeTypes.payment_recovery?.cancel).toBeUndefined();
  });

  it.each([
    ['http://merchant.example/cancel', 'must start with https://host/'],
    ['https://{subscription_id}.merchant.example/cancel', 'must start with https://host/'],
    ['https://merchant.example', 'must start with https://host/'],
    ['https://user:pw@merchant.example/cancel', 'must start with https://host/'],
    ['javascript:alert(1)//', 'must start with https://host/'],
    ['//merchant.example/cancel', 'must start with https://host/'],
    ['https://merchant.example/cancel?s={Subscription}', 'placeholders look like {subscription_id}'],
  ])('refuses %s', (redirect, message) => {
    expect(problemsOf(withRedirect(redirect)).join('\n')).toContain(message);
  });

  it('refuses a placeholder that is not an identity field of the type', () => {
    expect(problemsOf(withRedirect('https://merchant.example/cancel?e={email}'))).toEqual([
      'noticeTypes.renewal_notice_t72.cancel.redirect: {email} is not one of its identity fields (subscription_id, period_start) or customer_id',
    ]);
  });
});

describe('an event type’s evidence reference (lib/windows/evidence-ref.ts)', () => {
  it('is filled from each notice’s identity; a type whose event declares none cites nothing', () => {
    const { config } = parseNoticeConfig(shippedJson, 'operator.json');
    const identity = { account_id: 'acct_1', reconciliation_id: 'rec_1', exception_id: 'exc/7' };
    expect(derivedEvidenceRef(config, 'payment_recovery', identity)).toBe('recon:exc/7');
    expect(derivedEvidenceRef(config, 'renewal_notice_t72', { subscription_id: 'sub_1', period_start: '2026-10-01' })).toBeNull();
    expect(derivedEvidenceRef(config, 'no_such_type', identity)).toBeNull();
    expect(evidenceRefProblem(`recon:${'x'.repeat(200)}`)).toContain('at most 200');
  });

  it('refuses a placeholder the event or one of its notice types lacks, and a template with none', () => {
    const withRef = (ref: string) => changed((json) => (eventType(json, 'reconciliation.exception').evidenceRef = ref));
    expect(problemsOf(withRef('recon:{invoice_id}'))).toEqual([
      'eventTypes.reconciliation.exception.evidenceRef: {invoice_id} is not one of its identity fields',
    ]);
    expect(problemsOf(withRef('recon'))).toEqual([
      'eventTypes.reconciliation.exception.evidenceRef: names no identity field, so every event would cite one evidence reference (use {field})',
    ]);
    const narrower = changed((json) => (noticeType(json, 'payment_recovery').identity = ['account_id', 'reconciliation_id']));
    expect(problemsOf(narrower)).toContain(
      'eventTypes.reconciliation.exception.evidenceRef: {exception_id} is not in noticeTypes.payment_recovery.identity, so its notices could not cite the evidence',
    );
    expect(problemsOf(withRef('recon {exception_id}')).join('\n')).toContain('must be text of letters, digits');
  });
});

describe('emailWhenSmsRefused', () => {
  it('is on for a required type and off for a courtesy one by default; a courtesy type may not turn it on', () => {
    const { config } = parseNoticeConfig(shippedJson, 'operator.json');
    expect(config.noticeTypes.auto_renewal_notice?.emailWhenSmsRefused).toBe(true);
    expect(config.noticeTypes.payment_recovery?.emailWhenSmsRefused).toBe(false);
    const courtesy = changed((json) => (noticeType(json, 'payment_recovery').emailWhenSmsRefused = true));
    expect(problemsOf(courtesy)).toEqual([
      "noticeTypes.payment_recovery.emailWhenSmsRefused: a courtesy text never falls back to email (the recipient's STOP stands)",
    ]);
  });
});
