import { describe, expect, it } from 'vitest';
import { mintOneTimeCode } from '@/lib/ledger/one-time-code';
import { RenderError } from '@/lib/templates/render';
import { activeNoticeConfig } from '@/lib/windows/active';
import { renderNotice, type RenderInput } from './render';

const { config } = activeNoticeConfig();

function job(overrides: Partial<RenderInput['job']> = {}): RenderInput['job'] {
  return {
    noticeType: 'renewal_notice_t72',
    category: 'courtesy',
    payload: { customer_name: 'Ada', plan_name: 'Box <Deluxe>', amount: '29.00', currency: 'EUR', card_number: '4111' },
    recipientLocale: 'en',
    recipientTimeZone: 'UTC',
    anchorAt: new Date('2026-10-01T09:00:00Z'),
    deadlineAt: new Date('2026-09-30T09:00:00Z'),
    ...overrides,
  };
}

describe('renderNotice', () => {
  it('renders the job through its template: text, escaped HTML, the code and the manage link; undeclared payload keys never reach it', async () => {
    const mail = await renderNotice({ config, job: job(), oneTimeCode: 'ABCD2345EF', links: { manage: 'https://x.test/cancel?n=1&c=2' } });
    expect(mail.subject).toBe('Your Box <Deluxe> renews on October 1, 2026');
    expect(mail.text).toContain('ABCD2345EF');
    expect(mail.text).toContain('€29.00');
    expect(mail.text).toContain('https://x.test/cancel?n=1&c=2');
    expect(mail.html).toContain('Box &lt;Deluxe&gt;');
    expect(mail.html).toContain('href="https://x.test/cancel?n=1&amp;c=2"');
    expect(mail.text).not.toContain('4111');
    expect(mail.html).not.toContain('4111');
  });

  it('refuses a type that is not configured, inherited names included, with a reason', async () => {
    for (const noticeType of ['nope', 'constructor']) {
      await expect(renderNotice({ config, job: job({ noticeType }), oneTimeCode: 'C', links: { manage: 'https://x.test/' } })).rejects.toThrow(RenderError);
    }
  });

  it('a notice without an anchor cannot show its charge date: a RenderError naming the variable', async () => {
    const error = await renderNotice({ config, job: job({ anchorAt: null }), oneTimeCode: 'C', links: { manage: 'https://x.test/' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RenderError);
    expect((error as RenderError).reason).toMatch(/renewal_notice_t72\/email\.en\.subject: undefined variable: anchor_at/);
  });
});

describe('one-time code', () => {
  it('mints distinct typeable codes', () => {
    const codes = new Set(Array.from({ length: 200 }, mintOneTimeCode));
    expect(codes.size).toBe(200);
    for (const code of codes) expect(code).toMatch(/^[A-Z2-9]{10}$/);
  });

  it('across many refills of its random pool: no code twice, and every one of the 32 characters about equally often', () => {
    const codes = Array.from({ length: 3_000 }, mintOneTimeCode);
    expect(new Set(codes).size).toBe(codes.length);
    const counts = new Map<string, number>();
    for (const code of codes) for (const character of code) counts.set(character, (counts.get(character) ?? 0) + 1);
    expect([...counts.keys()].sort().join('')).toBe('23456789ABCDEFGHJKLMNPQRSTUVWXYZ');
    // 30 000 characters over 32: 937.5 each, standard deviation about 30.
    for (const [character, count] of counts) {
      expect(count, character).toBeGreaterThan(700);
      expect(count, character).toBeLessThan(1_180);
    }
  });
});
