import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { activeNoticeConfig } from '@/lib/windows/active';
import { loadNoticeConfig, type NoticeConfig } from '@/lib/windows/load-config';
import { renderCasesOf, type RenderCase } from '@/testing/render-cases';
import { textEngine } from './engine';
import { prepareTemplates } from './load';
import { renderEmail, renderSms } from './render';

/**
 * Rendering keeps what it can build once (the html-to-text converter, the Intl formatters, the
 * compiled layout by its source's digest). Kept or built afresh, every output must be the same
 * byte for byte: "cold" renders each notice in a fresh copy of the modules, where nothing is
 * kept yet (the uncached path); "warm" renders them all in one copy, twice, in two orders, so
 * every formatter and layout is reused across templates, locales and zones.
 */

const { config } = activeNoticeConfig();

type Modules = { prepare: typeof prepareTemplates; email: typeof renderEmail; sms: typeof renderSms };

async function renderCase(modules: Modules, noticeConfig: NoticeConfig, { channel, request }: RenderCase): Promise<string> {
  const set = await modules.prepare(noticeConfig);
  return JSON.stringify(channel === 'sms' ? modules.sms(set, request) : await modules.email(set, request));
}

async function freshModules(): Promise<Modules> {
  vi.resetModules();
  const load = await import('./load');
  const render = await import('./render');
  return { prepare: load.prepareTemplates, email: render.renderEmail, sms: render.renderSms };
}

describe('rendering with what is kept and without it', () => {
  it('every shipped template, email and SMS, in en and de and three zones, renders byte-identically', async () => {
    const cases = renderCasesOf(config);
    // 8 types with an email template, 3 with SMS ones; × en, de × 3 zones.
    expect(cases.length).toBe((8 + 3) * 2 * 3);
    const cold = new Map<string, string>();
    for (const item of cases) cold.set(item.id, await renderCase(await freshModules(), config, item));
    const warm = { prepare: prepareTemplates, email: renderEmail, sms: renderSms };
    for (const order of [cases, [...cases].reverse()]) {
      for (const item of order) expect(await renderCase(warm, config, item), item.id).toBe(cold.get(item.id));
    }
    // The comparison sees what a zone changes: 02:30 UTC on 1 October is still 30 September in New York.
    expect(cold.get('renewal_notice_t72 email en America/New_York')).toContain('September 30, 2026');
    expect(cold.get('renewal_notice_t72 email en UTC')).toContain('October 1, 2026');
  }, 120_000);

  it('every filter, across locales, zones, styles and currencies, formats as a fresh formatter does', async () => {
    const source = "{{ anchor_at | local_date }}|{{ anchor_at | local_date: 'month_day' }}|{{ amount | money: currency }}";
    const scopes = ['en', 'de', 'de-AT', 'en-GB', 'fr'].flatMap((locale) =>
      ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'].flatMap((time_zone) =>
        ['EUR', 'USD', 'JPY'].map((currency) => ({
          anchor_at: new Date('2026-10-01T02:30:00Z'),
          amount: '1234.50',
          currency,
          recipient: { locale, time_zone },
        })),
      ),
    );
    const cold: string[] = [];
    for (const scope of scopes) {
      vi.resetModules();
      const engine = (await import('./engine')).textEngine;
      cold.push(engine.parseAndRenderSync(source, scope) as string);
    }
    const template = textEngine.parse(source);
    for (const round of [0, 1]) {
      const order = round === 0 ? scopes.map((_, i) => i) : scopes.map((_, i) => scopes.length - 1 - i);
      for (const i of order) expect(textEngine.renderSync(template, scopes[i]), JSON.stringify(scopes[i])).toBe(cold[i]);
    }
    // 5 locales × 3 currencies × 2 dates (New York is still on 30 September) format differently, so
    // a formatter kept under too short a key would show.
    expect(new Set(cold).size).toBe(5 * 3 * 2);
  }, 60_000);
});

describe('a changed template is picked up: the compiled layout is kept by its source digest', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('an edited layout or template file renders the edit; an unchanged layout is reused, not compiled again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'templates-cache-'));
    dirs.push(dir);
    cpSync('config/templates', join(dir, 'templates'), { recursive: true });
    writeFileSync(join(dir, 'notice-ledger.json'), readFileSync('config/notice-ledger.json', 'utf8'));
    const load = () => loadNoticeConfig(join(dir, 'notice-ledger.json')).config;
    const [email, sms] = ['email', 'sms'].map((channel) => renderCasesOf(config).find((c) => c.id === `renewal_notice_t72 ${channel} en UTC`));
    if (!email || !sms) throw new Error('renewal_notice_t72 sends email and SMS in the shipped configuration');
    const render = async (noticeConfig: NoticeConfig) => {
      const set = await prepareTemplates(noticeConfig);
      return { set, mail: await renderEmail(set, email.request), sms: renderSms(set, sms.request).text };
    };

    const first = await render(load());
    const again = await render(load());
    expect(again.set).not.toBe(first.set);
    expect(again.set.compiledLayout).toBe(first.set.compiledLayout);
    expect(again.mail).toEqual(first.mail);

    const layoutFile = join(dir, 'templates/_layout/email.mjml');
    writeFileSync(layoutFile, readFileSync(layoutFile, 'utf8').replace('{{ body | raw }}', '{{ body | raw }}<p>Edited layout</p>'));
    const bodyFile = join(dir, 'templates/renewal_notice_t72/email.en.html.liquid');
    writeFileSync(bodyFile, `${readFileSync(bodyFile, 'utf8')}<p>Edited body</p>`);
    const smsFile = join(dir, 'templates/renewal_notice_t72/sms.en.liquid');
    writeFileSync(smsFile, `Edited SMS ${readFileSync(smsFile, 'utf8')}`);
    const edited = await render(load());
    expect(edited.set.compiledLayout).not.toBe(first.set.compiledLayout);
    expect(edited.mail.html).toContain('<p>Edited layout</p>');
    expect(edited.mail.html).toContain('<p>Edited body</p>');
    expect(edited.mail.text).toContain('Edited body');
    expect(edited.sms.startsWith('Edited SMS ')).toBe(true);
    expect(first.mail.html).not.toContain('Edited');
    // The set loaded before the edit keeps rendering what it was loaded with.
    expect(await renderEmail(first.set, email.request)).toEqual(first.mail);
  }, 60_000);
});
