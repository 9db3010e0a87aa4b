import { describe, expect, it } from 'vitest';
import { mintOneTimeCode } from '@/lib/ledger/one-time-code';
import { renderNotice } from './render';
import { loadNoticeConfig } from '@/lib/windows/load-config';

describe('renderNotice', () => {
  it('renders text and escaped HTML with the code and cancellation link', () => {
    const mail = renderNotice({
      noticeType: 'renewal_notice_t72',
      payload: { plan_name: 'Box <Deluxe>', amount: '29.00', currency: 'EUR', charge_date: '2026-10-01', card_number: '4111' },
      oneTimeCode: 'ABCD2345EF',
      cancelUrl: 'https://x.test/cancel?n=1&c=2',
    });
    expect(mail.subject).toBe('Your Box <Deluxe> renews in 3 days');
    expect(mail.text).toContain('ABCD2345EF');
    expect(mail.text).toContain('2026-10-01');
    expect(mail.html).toContain('Box &lt;Deluxe&gt;');
    expect(mail.html).toContain('href="https://x.test/cancel?n=1&amp;c=2"');
    expect(mail.text).not.toContain('4111');
  });

  it('has a template for every configured notice type and refuses unknown ones, inherited names included', () => {
    for (const noticeType of Object.keys(loadNoticeConfig('config/notice-ledger.json').config.noticeTypes)) {
      expect(renderNotice({ noticeType, payload: {}, oneTimeCode: 'C', cancelUrl: 'https://x.test/' }).text.length).toBeGreaterThan(20);
    }
    expect(() => renderNotice({ noticeType: 'nope', payload: {}, oneTimeCode: 'C', cancelUrl: 'https://x.test/' })).toThrow(/no template/);
    expect(() => renderNotice({ noticeType: 'constructor', payload: {}, oneTimeCode: 'C', cancelUrl: 'https://x.test/' })).toThrow(/no template/);
  });
});

describe('one-time code', () => {
  it('mints distinct typeable codes', () => {
    const codes = new Set(Array.from({ length: 200 }, mintOneTimeCode));
    expect(codes.size).toBe(200);
    for (const code of codes) expect(code).toMatch(/^[A-Z2-9]{10}$/);
  });
});
