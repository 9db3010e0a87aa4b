import { describe, expect, it } from 'vitest';
import { codesMatch, cancelRedirectUrl } from './actions';
import { formatAmount, formatRangeForRecipient, maskAddress, phoneOf } from './notice-view';
import { recipientPageExpiry } from './page-link';

describe('what the recipient page shows', () => {
  it('formats an ISO amount for its currency and leaves anything else as given', () => {
    expect(formatAmount({ amount: '19.00', currency: 'EUR' })).toBe('€19.00');
    expect(formatAmount({ amount: '1250', currency: 'JPY' })).toBe('¥1,250');
    expect(formatAmount({ amount_due: '49.00 EUR' })).toBe('49.00 EUR');
    expect(formatAmount({ amount: 'about 20', currency: 'EUR' })).toBe('about 20 EUR');
    expect(formatAmount({})).toBeNull();
  });

  it('says a window once in the recipient’s zone, and masks addresses', () => {
    expect(formatRangeForRecipient(new Date('2026-12-01T16:51:00Z'), new Date('2026-12-01T22:52:00Z'), 'Europe/Berlin')).toBe('Dec 1, 2026, 5:51 – 11:52 PM');
    expect(formatRangeForRecipient(new Date('2026-12-01T16:51:00Z'), new Date('2026-12-01T22:52:00Z'), 'Not/AZone')).toBe('Dec 1, 2026, 4:51 – 10:52 PM UTC');
    expect(maskAddress('email', 'jane.doe@example.com')).toBe('j•••@example.com');
    expect(maskAddress('sms', '+4915112345642')).toBe('+49 ••• 42');
  });
});

describe('the link, the code and the redirect', () => {
  it('expires at the anchor when it is after the deadline, else at the deadline', () => {
    const deadlineAt = new Date('2026-12-01T23:00:00Z');
    expect(recipientPageExpiry({ anchorAt: new Date('2026-12-02T23:00:00Z'), deadlineAt })).toEqual(new Date('2026-12-02T23:00:00Z'));
    expect(recipientPageExpiry({ anchorAt: new Date('2026-11-29T00:00:00Z'), deadlineAt })).toEqual(deadlineAt);
    expect(recipientPageExpiry({ anchorAt: null, deadlineAt })).toEqual(deadlineAt);
  });

  it('matches a code as typed (case, spaces, dashes) and nothing else', () => {
    expect(codesMatch('abcd-efgh 23', 'ABCDEFGH23')).toBe(true);
    expect(codesMatch('ABCDEFGH24', 'ABCDEFGH23')).toBe(false);
    expect(codesMatch('', 'ABCDEFGH23')).toBe(false);
    expect(codesMatch('ABCDEFGH23ABCDEFGH23', 'ABCDEFGH23')).toBe(false);
  });

  it('fills a redirect template from the notice, percent-encoded, on its fixed host', () => {
    const notice = {
      job: { identity: { subscription_id: 'sub/../evil?x=1#', period_start: '2026-12-04' }, customerId: '@evil.example' },
    } as unknown as Parameters<typeof cancelRedirectUrl>[1];
    const url = new URL(cancelRedirectUrl('https://merchant.example/s/{subscription_id}/cancel?c={customer_id}', notice));
    expect(url.host).toBe('merchant.example');
    expect(url.toString()).toBe('https://merchant.example/s/sub%2F..%2Fevil%3Fx%3D1%23/cancel?c=%40evil.example');
  });

  it('offers the SMS preference for the number the notice went to, else the one its event gave', () => {
    const notice = (recipientPhone: string | null, eventPhone?: string) =>
      ({ job: { recipientPhone }, eventRecipient: eventPhone ? { email: 'a@example.com', phone: eventPhone } : null }) as unknown as Parameters<
        typeof phoneOf
      >[0];
    expect(phoneOf(notice('+14155550170'))).toBe('+14155550170');
    expect(phoneOf(notice(null, '+4915112345678'))).toBe('+4915112345678');
    expect(phoneOf(notice('+14155550170', '+4915112345678'))).toBe('+14155550170');
    expect(phoneOf(notice(null))).toBeNull();
    expect(phoneOf(notice(null, '0151 12345678'))).toBeNull();
  });
});
