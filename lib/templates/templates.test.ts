import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { activeNoticeConfig } from '@/lib/windows/active';
import { loadNoticeConfig, NoticeConfigError } from '@/lib/windows/load-config';
import { textEngine } from './engine';
import { loadTemplates, prepareTemplates, TemplateConfigError } from './load';
import { localeCandidates, renderEmail, renderSms, RenderError, type RenderRequest } from './render';

const { config } = activeNoticeConfig();
// The configuration file as JSON, edited field by field in the load-error tests.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;
const links = { manage: 'https://notices.example/r/abc?x=1&y=2', unsubscribe: 'https://notices.example/u/abc' };

function request(template: string, overrides: Partial<RenderRequest> = {}): RenderRequest {
  const type = Object.values(config.noticeTypes).find((candidate) => candidate.template === template);
  return {
    template,
    noticeType: type?.name ?? template,
    category: type?.category ?? 'courtesy',
    locale: 'en',
    timeZone: 'UTC',
    payload: { ...config.templates?.definitions[template]?.sample },
    anchorAt: new Date('2026-10-01T09:00:00Z'),
    windowClosesAt: new Date('2026-09-30T09:00:00Z'),
    code: 'ABCD2345EF',
    links,
    cancellable: type?.cancel !== undefined,
    ...overrides,
  };
}

describe('the default templates', () => {
  it('every template renders for every locale and channel it declares, with its sample payload', async () => {
    const set = await prepareTemplates(config);
    let rendered = 0;
    for (const entry of set.entries.values()) {
      for (const locale of entry.email.keys()) {
        const mail = await renderEmail(set, request(entry.id, { locale }));
        expect(mail.locale).toBe(locale);
        expect(mail.subject.length).toBeGreaterThan(10);
        expect(mail.html).toContain('https://notices.example/r/abc?x=1&amp;y=2');
        expect(mail.html).toContain('ABCD2345EF');
        expect(mail.text).toContain('https://notices.example/r/abc?x=1&y=2');
        // No Liquid left over, no undefined value printed.
        for (const part of [mail.subject, mail.html, mail.text]) expect(part).not.toMatch(/\{\{|\{%|undefined|NaN/);
        rendered += 1;
      }
      for (const locale of entry.sms.keys()) {
        const sms = renderSms(set, request(entry.id, { locale }));
        expect(sms.text).toContain(links.manage);
        expect(sms.text).not.toMatch(/\{\{|undefined|NaN/);
        rendered += 1;
      }
    }
    // 8 types in en, 3 courtesy types in de, and their 6 SMS.
    expect(rendered).toBe(8 + 3 + 6);
  });

  it('formats for the recipient: de → 49,00 € and a German date; en-US → €49.00', async () => {
    const set = await prepareTemplates(config);
    const de = await renderEmail(set, request('renewal_notice_t72', { locale: 'de-DE', timeZone: 'Europe/Berlin' }));
    expect(de.locale).toBe('de');
    expect(de.subject).toBe('Ihr Abo Pro annual verlängert sich am 1. Oktober 2026');
    expect(de.text).toContain('49,00\u00a0€');
    expect(de.text).toContain('Verwalten oder kündigen: https://notices.example/r/abc?x=1&y=2');
    const en = await renderEmail(set, request('renewal_notice_t72', { locale: 'en-US' }));
    expect(en.text).toContain('€49.00');
    const inr = await renderEmail(set, request('pre_debit_notice', { locale: 'en-IN', timeZone: 'Asia/Kolkata' }));
    expect(inr.text).toContain('₹499.00');
    // A payment recovery has nothing to cancel: its button offers the details, not "cancel".
    const recovery = await renderEmail(set, request('payment_recovery'));
    expect(recovery.html).toContain('Review the details');
    expect(recovery.html).not.toContain('cancel');
  });

  it('shows the charge date in the recipient time zone across a day boundary', async () => {
    const set = await prepareTemplates(config);
    const anchorAt = new Date('2026-10-01T23:30:00Z');
    const berlin = await renderEmail(set, request('renewal_notice_t72', { locale: 'en', timeZone: 'Europe/Berlin', anchorAt }));
    const angeles = await renderEmail(set, request('renewal_notice_t72', { locale: 'en', timeZone: 'America/Los_Angeles', anchorAt }));
    expect(berlin.subject).toContain('October 2, 2026');
    expect(angeles.subject).toContain('October 1, 2026');
  });

  it("a text's date without its year: local_date: 'month_day' in the recipient's locale and zone; any other style is an error", async () => {
    const set = await prepareTemplates(config);
    const anchorAt = new Date('2026-10-01T23:30:00Z');
    expect(renderSms(set, request('renewal_notice_t72', { locale: 'en-US', timeZone: 'America/Los_Angeles', anchorAt })).text).toContain(' renews Oct 1 (');
    const render = (style: string, locale: string) =>
      textEngine.parseAndRenderSync(`{{ at | local_date: '${style}' }}`, { at: anchorAt, recipient: { locale, time_zone: 'Europe/Berlin' } });
    expect(render('month_day', 'de-DE')).toBe('2. Okt.');
    expect(render('long', 'de-DE')).toBe('2. Oktober 2026');
    expect(() => render('full', 'en-US')).toThrow(/local_date: the style is 'long' or 'month_day'/);
  });

  it("a date and time with the zone's name: local_datetime in the recipient's locale and zone", () => {
    const at = new Date('2026-10-01T23:30:00Z');
    const render = (locale: string, timeZone: string) =>
      textEngine.parseAndRenderSync('{{ at | local_datetime }}', { at, recipient: { locale, time_zone: timeZone } });
    expect(render('en-US', 'America/Los_Angeles')).toMatch(/^October 1, 2026.*4:30\sPM PDT$/);
    expect(render('de-DE', 'Europe/Berlin')).toMatch(/^2\. Oktober 2026.*01:30 MESZ$/);
  });

  it('falls back: de-AT → de, fr-FR (no French template) → en; the SMS the same way', async () => {
    const set = await prepareTemplates(config);
    expect(localeCandidates('de-AT', 'en')).toEqual(['de-AT', 'de', 'en']);
    const austrian = await renderEmail(set, request('payment_recovery', { locale: 'de-AT' }));
    expect(austrian.locale).toBe('de');
    // The recipient's own locale formats when the template speaks its language…
    expect(austrian.text).toContain('€\u00a0120,50');
    const fr = await renderEmail(set, request('payment_recovery', { locale: 'fr-FR' }));
    expect(fr.locale).toBe('en');
    // …and the template's when it does not: an English sentence with English dates and amounts.
    expect(fr.text).toContain('€120.50');
    expect(fr.text).not.toContain('120,50');
    expect(renderSms(set, request('payment_recovery', { locale: null })).locale).toBe('en');
    expect(renderSms(set, request('renewal_notice_t24', { locale: 'de-CH' })).text).toContain('Erinnerung');
  });

  it('a required notice says it is legally required instead of offering unsubscribe; a courtesy one links unsubscribe', async () => {
    const set = await prepareTemplates(config);
    const required = await renderEmail(set, request('auto_renewal_notice'));
    expect(required.text).toMatch(/legally required/);
    expect(required.html).not.toContain(links.unsubscribe);
    // The deadline in a visible box (the rules' deadline_in_visible_box) and the online cancel link.
    expect(required.html).toContain('To avoid the charge, cancel before October 1, 2026.');
    const courtesy = await renderEmail(set, request('renewal_notice_t72'));
    expect(courtesy.html).toContain(`href="${links.unsubscribe}"`);
    expect(courtesy.text).toContain(`Unsubscribe from these reminders: ${links.unsubscribe}`);
    const noLink = await renderEmail(set, request('renewal_notice_t72', { links: { manage: links.manage, unsubscribe: null } }));
    expect(noLink.text).not.toContain('Unsubscribe from');
  });

  it('a hostile value is escaped in HTML and never evaluated as Liquid', async () => {
    const set = await prepareTemplates(config);
    const payload = { customer_name: '<script>alert(1)</script>', plan_name: '{{ 7*7 }} {% raw %}', amount: '49.00', currency: 'EUR' };
    const mail = await renderEmail(set, request('renewal_notice_t72', { payload }));
    expect(mail.html).not.toContain('<script>alert(1)</script>');
    expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.subject).toContain('{{ 7*7 }} {% raw %}');
    expect(mail.html).not.toContain('49 {%');
    expect(mail.text).toContain('Hello <script>alert(1)</script>,');
    const hostileLink = await renderEmail(set, request('renewal_notice_t72', { links: { manage: 'https://x.test/"><script>', unsubscribe: null } }));
    expect(hostileLink.html).toContain('href="https://x.test/&#34;&gt;&lt;script&gt;"');
  });

  it('a missing value, a missing anchor or a bad amount is a RenderError naming the template and variable, never the value', async () => {
    const set = await prepareTemplates(config);
    const missing = await renderEmail(set, request('payment_recovery', { payload: { customer_name: 'Ada', amount: '1.00', currency: 'EUR' } })).catch(
      (e: unknown) => e,
    );
    expect(missing).toBeInstanceOf(RenderError);
    expect((missing as RenderError).reason).toMatch(/^payment_recovery\/email\.en\.subject: undefined variable: reference/);
    const anchorless = await renderEmail(set, request('renewal_notice_t24', { anchorAt: null })).catch((e: unknown) => e);
    expect((anchorless as RenderError).reason).toMatch(/undefined variable: anchor_at/);
    const secret = 'not-a-number-SECRET';
    const bad = await renderEmail(
      set,
      request('payment_recovery', { payload: { customer_name: 'Ada', amount: secret, currency: 'EUR', reference: 'R' } }),
    ).catch((e: unknown) => e);
    expect((bad as RenderError).reason).toMatch(/money: not a number/);
    expect((bad as RenderError).reason).not.toContain(secret);
    await expect(renderEmail(set, request('no_such_template'))).rejects.toThrow(/no template "no_such_template"/);
    await expect(renderEmail(set, request('renewal_notice_t72', { links: { manage: '' } }))).rejects.toThrow(/no manage link/);
  });
});

describe('loading templates: a bad file stops start-up naming the file and the variable', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** A copy of the default configuration and templates, edited by `edit`, loaded. */
  function loadEdited(edit: (dir: string, json: Json) => void) {
    const dir = mkdtempSync(join(tmpdir(), 'templates-'));
    dirs.push(dir);
    cpSync('config/templates', join(dir, 'templates'), { recursive: true });
    const json = JSON.parse(readFileSync('config/notice-ledger.json', 'utf8')) as Json;
    edit(dir, json);
    writeFileSync(join(dir, 'notice-ledger.json'), JSON.stringify(json));
    return async () => prepareTemplates(loadNoticeConfig(join(dir, 'notice-ledger.json')).config);
  }

  async function problemsOf(load: () => Promise<unknown>): Promise<string[]> {
    const error = await load().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemplateConfigError);
    return (error as TemplateConfigError).problems;
  }

  it('a template using a variable its definition does not declare', async () => {
    const load = loadEdited((dir) =>
      writeFileSync(join(dir, 'templates/renewal_notice_t72/email.de.html.liquid'), '<p>{{ customer_name }} {{ discount }}</p>'),
    );
    const problems = await problemsOf(load);
    expect(problems).toEqual([
      'renewal_notice_t72/email.de.html.liquid: variable "discount" is not declared in templates.definitions.renewal_notice_t72.variables (declared: customer_name, plan_name, amount, currency)',
    ]);
  });

  it('a file that does not parse, an unknown filter, a stray file name', async () => {
    const load = loadEdited((dir) => {
      writeFileSync(join(dir, 'templates/payment_recovery/email.en.subject.liquid'), 'Hello {% if %}');
      writeFileSync(join(dir, 'templates/payment_recovery/sms.en.liquid'), '{{ amount | shout }}');
      writeFileSync(join(dir, 'templates/payment_recovery/email.EN.html.liquid'), 'x');
    });
    const problems = await problemsOf(load);
    expect(problems.join('\n')).toMatch(/payment_recovery\/email\.en\.subject\.liquid: does not parse/);
    expect(problems.join('\n')).toMatch(/payment_recovery\/sms\.en\.liquid: does not parse: undefined filter: shout/);
    expect(problems.join('\n')).toMatch(/payment_recovery\/email\.EN\.html\.liquid: not a template file name/);
  });

  it('a type whose template lacks the fallback locale, and an include (no file can be read from a template)', async () => {
    const load = loadEdited((dir) => {
      rmSync(join(dir, 'templates/renewal_notice_t24/email.en.subject.liquid'));
      writeFileSync(join(dir, 'templates/renewal_notice_t72/email.en.html.liquid'), "{% include '../../notice-ledger.json' %}");
    });
    const problems = await problemsOf(load);
    expect(problems.join('\n')).toMatch(/renewal_notice_t24\/email\.en: needs both/);
    expect(problems.join('\n')).toMatch(
      /renewal_notice_t24\/email\.en: notice type renewal_notice_t24 sends email, so its template needs the fallback locale en/,
    );
    expect(problems.join('\n')).toMatch(/renewal_notice_t72\/email\.en\.html\.liquid: does not parse: ENOENT/);
    // Parsing passes, rendering cannot read the file: the in-memory template map is empty.
    const set = loadTemplates(loadNoticeConfig('config/notice-ledger.json').config);
    expect(set.entries.size).toBe(8);
  });

  it('the configuration: an undefined template, a sample that breaks its declarations, a required type that does not meet its rules', () => {
    const dir = mkdtempSync(join(tmpdir(), 'templates-config-'));
    dirs.push(dir);
    const json = JSON.parse(readFileSync('config/notice-ledger.json', 'utf8')) as Json;
    json.noticeTypes.renewal_notice_t72.template = 'renewal_v2';
    json.templates.definitions.payment_recovery.sample.currency = 'euro';
    json.templates.definitions.price_change_notice.meets = ['how_to_cancel'];
    json.templates.definitions.payment_recovery.variables.amount = 'money';
    writeFileSync(join(dir, 'notice-ledger.json'), JSON.stringify(json));
    const error = (() => {
      try {
        loadNoticeConfig(join(dir, 'notice-ledger.json'));
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(NoticeConfigError);
    expect((error as NoticeConfigError).problems.join('\n')).toMatch(/templates\.definitions\.payment_recovery\.variables\.amount/);
    json.templates.definitions.payment_recovery.variables.amount = 'decimal';
    writeFileSync(join(dir, 'notice-ledger.json'), JSON.stringify(json));
    const second = (() => {
      try {
        loadNoticeConfig(join(dir, 'notice-ledger.json'));
      } catch (caught) {
        return caught as NoticeConfigError;
      }
      return null;
    })();
    expect(second?.problems).toEqual([
      'noticeTypes.renewal_notice_t72.template: "renewal_v2" is not defined in templates.definitions',
      'templates.definitions.price_change_notice.meets: the rules for price_change_notice require new_price, which the template does not say it meets',
      'templates.definitions.payment_recovery.sample.currency: must be an ISO 4217 currency code such as EUR (upper case)',
    ]);
  });
});
