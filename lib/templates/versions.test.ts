import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { activeNoticeConfig } from '@/lib/windows/active';
import { loadNoticeConfig } from '@/lib/windows/load-config';
import { prepareTemplates, templatesOf } from './load';
import { renderEmail, renderSms, type RenderRequest } from './render';
import { templateSetOfVersion, templateVersionContentSchema, templateVersionId, templateVersionOf } from './versions';

/**
 * A template version holds everything a render reads: rebuilt from its stored content alone (as
 * JSON, the way the table gives it back), it renders every shipped template × channel × locale
 * byte for byte as the full set does; its id moves with any file it holds and with nothing else.
 */

const { config } = activeNoticeConfig();
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function requestFor(name: string, locale: string | null): RenderRequest {
  const type = config.noticeTypes[name];
  if (!type) throw new Error(`no type ${name}`);
  return {
    template: type.template,
    noticeType: name,
    category: type.category,
    locale,
    timeZone: 'Europe/Berlin',
    payload: { ...config.templates?.definitions[type.template]?.sample },
    anchorAt: new Date('2026-10-01T02:30:00Z'),
    windowClosesAt: new Date('2026-09-30T23:30:00Z'),
    code: 'ABCD2345EF',
    links: { manage: 'https://notices.example/r/abc', unsubscribe: type.category === 'courtesy' ? 'https://notices.example/u/abc' : null },
    cancellable: type.cancel !== undefined,
  };
}

describe('template versions', () => {
  it('a set rebuilt from a stored version renders every shipped template, channel and locale exactly as the full set', async () => {
    const set = await prepareTemplates(config);
    let compared = 0;
    for (const name of Object.keys(config.noticeTypes)) {
      const entry = set.entries.get(config.noticeTypes[name]?.template ?? '');
      for (const locale of ['en', 'de', 'de-AT', 'fr', null]) {
        for (const channel of ['email', 'sms'] as const) {
          if ((channel === 'email' ? entry?.email.size : entry?.sms.size) === 0) continue;
          const request = requestFor(name, locale);
          const version = templateVersionOf(set, { template: request.template, channel, recipientLocale: locale });
          if (!version) throw new Error(`${name} ${channel} ${String(locale)}: no version`);
          const stored = templateVersionContentSchema.parse(JSON.parse(JSON.stringify(version.content)));
          expect(templateVersionId(stored)).toBe(version.id);
          const rebuilt = templateSetOfVersion(stored);
          const context = `${name} ${channel} ${String(locale)}`;
          if (channel === 'email') expect(await renderEmail(rebuilt, request), context).toEqual(await renderEmail(set, request));
          else expect(renderSms(rebuilt, request), context).toEqual(renderSms(set, request));
          compared += 1;
        }
      }
    }
    // 8 types with an email template and 3 with SMS ones, in five recipient locales.
    expect(compared).toBe((8 + 3) * 5);
  }, 60_000);

  it('the id changes with a file the version holds, and not with another locale’s file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'template-versions-'));
    dirs.push(dir);
    cpSync('config/templates', join(dir, 'templates'), { recursive: true });
    writeFileSync(join(dir, 'notice-ledger.json'), readFileSync('config/notice-ledger.json', 'utf8'));
    const load = () => templatesOf(loadNoticeConfig(join(dir, 'notice-ledger.json')).config);
    const idOf = (set: ReturnType<typeof load>, recipientLocale: string) =>
      templateVersionOf(set, { template: 'renewal_notice_t72', channel: 'email', recipientLocale })?.id;
    const first = load();
    const [en, de] = [idOf(first, 'en'), idOf(first, 'de')];
    expect(en).not.toBe(de);
    // The same files loaded again: the same ids; de-AT resolves to the de files and strings.
    expect(idOf(load(), 'en')).toBe(en);
    expect(idOf(first, 'de-AT')).toBe(de);
    const german = join(dir, 'templates/renewal_notice_t72/email.de.html.liquid');
    writeFileSync(german, `${readFileSync(german, 'utf8')}<p>neu</p>`);
    const edited = load();
    expect(idOf(edited, 'de')).not.toBe(de);
    expect(idOf(edited, 'en')).toBe(en);
    const layout = join(dir, 'templates/_layout/email.mjml');
    writeFileSync(layout, readFileSync(layout, 'utf8').replace('{{ body | raw }}', '{{ body | raw }}<p>x</p>'));
    expect(idOf(load(), 'en')).not.toBe(en);
  });
});
