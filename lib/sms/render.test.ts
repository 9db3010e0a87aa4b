import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultLinkKeyRing } from '@/lib/recipient/link-keys';
import { recipientPageUrl } from '@/lib/recipient/page-link';
import { prepareTemplates } from '@/lib/templates/load';
import { renderSms, type RenderRequest } from '@/lib/templates/render';
import { activeNoticeConfig } from '@/lib/windows/active';
import { segmentsOf } from './render';

/**
 * Every shipped SMS template, in every locale it declares, with its declared sample payload and
 * the link a real notice carries (the signed recipient-page URL on a realistic PUBLIC_BASE_URL):
 * a courtesy text says how to opt out (CTIA: "Reply STOP to opt out."), a required one does not
 * offer it, and either fits the segment cap of every notice type that uses the template. The
 * budget a text is written to: an English one in 1 GSM-7 segment (160 characters), a German one
 * in 2; a type's maxSegments (config/notice-ledger.json) is the cap the send path enforces.
 */

const { config } = activeNoticeConfig();
const optOut: Record<string, string> = { en: 'Reply STOP to opt out.', de: 'Antworten Sie STOP, um sich abzumelden.' };
// A recipient locale per template locale, formatting dates and amounts as a real recipient's would.
const recipientLocale: Record<string, { locale: string; timeZone: string }> = {
  en: { locale: 'en-US', timeZone: 'America/Los_Angeles' },
  de: { locale: 'de-DE', timeZone: 'Europe/Berlin' },
};

// September: the longest month name in both languages.
const anchorAt = new Date('2026-09-30T09:00:00Z');
const baseUrl = 'https://notices.example-merchant.com';
const manage = recipientPageUrl({ keys: defaultLinkKeyRing(process.env.NOTICE_KEY_SECRET ?? ''), baseUrl, noticeKey: randomBytes(32).toString('hex') });
const segmentBudget: Record<string, number> = { en: 1, de: 2 };

function request(template: string, noticeType: string, category: RenderRequest['category'], locale: string): RenderRequest {
  const recipient = recipientLocale[locale] ?? { locale, timeZone: 'UTC' };
  return {
    template,
    noticeType,
    category,
    locale: recipient.locale,
    timeZone: recipient.timeZone,
    payload: { ...config.templates?.definitions[template]?.sample },
    anchorAt,
    windowClosesAt: new Date(anchorAt.getTime() - 24 * 3_600_000),
    code: 'ABCD2345EF',
    links: { manage, unsubscribe: null },
  };
}

describe('shipped SMS templates', () => {
  it('the link they are measured with is the real recipient-page URL: at most 40 characters after the host', () => {
    expect(manage).toMatch(/^https:\/\/notices\.example-merchant\.com\/r\/[A-Za-z0-9_-]{34}$/);
    expect(manage.length - baseUrl.length).toBeLessThanOrEqual(40);
  });

  it('every template × locale: a courtesy text carries the opt-out, a required one does not, and both fit maxSegments of every type using it', async () => {
    const set = await prepareTemplates(config);
    const measured: string[] = [];
    for (const entry of set.entries.values()) {
      const types = Object.values(config.noticeTypes).filter((type) => type.template === entry.id);
      for (const locale of entry.sms.keys()) {
        const words = optOut[locale];
        if (!words) throw new Error(`no opt-out wording known for locale ${locale}: add it to this test`);
        for (const type of types) {
          const courtesy = renderSms(set, request(entry.id, type.name, 'courtesy', locale));
          expect(courtesy.locale).toBe(locale);
          expect(courtesy.text).toContain(manage);
          expect(courtesy.text.endsWith(words)).toBe(true);
          const required = renderSms(set, request(entry.id, type.name, 'required', locale));
          expect(required.text).not.toContain('STOP');
          for (const text of [courtesy.text, required.text]) {
            const { segments, encoding } = segmentsOf(text);
            measured.push(`${type.name}/${locale}: ${String(text.length)} chars, ${encoding}, ${String(segments)}/${String(type.maxSegments)}`);
            expect(segments, `${type.name} sms.${locale}: ${text}`).toBeLessThanOrEqual(type.maxSegments);
            expect(encoding, `${type.name} sms.${locale}: ${text}`).toBe('GSM-7');
            expect(segments, `${type.name} sms.${locale} is written to ${String(segmentBudget[locale])} segments: ${text}`).toBeLessThanOrEqual(
              segmentBudget[locale] ?? 1,
            );
          }
        }
      }
    }
    // payment_recovery, renewal_notice_t72 and renewal_notice_t24, in en and de.
    expect(measured).toHaveLength(3 * 2 * 2);
  });

  it('the opt-out line keeps the text GSM-7 (no character that forces UCS-2)', async () => {
    for (const words of Object.values(optOut)) expect(segmentsOf(words).encoding).toBe('GSM-7');
  });
});
