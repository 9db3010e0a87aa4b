import type { NoticeConfig } from '@/lib/windows/load-config';
import { templatesOf } from '@/lib/templates/load';
import type { RenderRequest } from '@/lib/templates/render';

export type RenderCase = { id: string; channel: 'email' | 'sms'; request: RenderRequest };

/**
 * Every notice type of a configuration, by every channel its template has a file for, in en and
 * de (a type without de falls back to en) and three zones, with the template's sample payload:
 * the renders a change to rendering must leave byte-identical.
 */
export function renderCasesOf(noticeConfig: NoticeConfig): RenderCase[] {
  const cases: RenderCase[] = [];
  const definitions = noticeConfig.templates?.definitions ?? {};
  const set = templatesOf(noticeConfig);
  for (const [name, type] of Object.entries(noticeConfig.noticeTypes)) {
    const entry = set.entries.get(type.template);
    for (const locale of ['en', 'de']) {
      for (const timeZone of ['UTC', 'Europe/Berlin', 'America/New_York']) {
        const request: RenderRequest = {
          template: type.template,
          noticeType: name,
          category: type.category,
          locale,
          timeZone,
          payload: { ...definitions[type.template]?.sample },
          anchorAt: new Date('2026-10-01T02:30:00Z'),
          windowClosesAt: new Date('2026-09-30T23:30:00Z'),
          code: 'ABCD2345EF',
          links: { manage: 'https://notices.example/r/abc?x=1&y=2', unsubscribe: type.category === 'courtesy' ? 'https://notices.example/u/abc' : null },
          cancellable: type.cancel !== undefined,
        };
        if (entry?.email.size) cases.push({ id: `${name} email ${locale} ${timeZone}`, channel: 'email', request });
        if (entry?.sms.size) cases.push({ id: `${name} sms ${locale} ${timeZone}`, channel: 'sms', request });
      }
    }
  }
  return cases;
}
