import { describe, expect, it } from 'vitest';
import { loadConfig, recipientLinkKeys } from '@/lib/config';
import { DEFAULT_LINK_KEYS, derivedLinkKey, parseLinkKeys } from './link-keys';

const secret = 'n'.repeat(40);
const base = { NOTICE_KEY_SECRET: 's'.repeat(40) };

describe('RECIPIENT_LINK_KEYS', () => {
  it('unset: one key, id 0, derived from NOTICE_KEY_SECRET as links always were — nothing changes for a deployment that never set it', () => {
    const keys = recipientLinkKeys(loadConfig(base));
    expect(DEFAULT_LINK_KEYS).toBe('0:derived');
    expect(keys.signing).toEqual({ kid: '0', key: derivedLinkKey(base.NOTICE_KEY_SECRET), retiresAt: null });
    expect(keys.derived).toBe(keys.signing);
    expect([...keys.byKid.keys()]).toEqual(['0']);
  });

  it('the first key signs; the others verify, until their date when they have one', () => {
    const keys = recipientLinkKeys(loadConfig({ ...base, RECIPIENT_LINK_KEYS: `2:${secret}, 1:${'m'.repeat(32)}:2028-01-31,0:derived:2027-06-30` }));
    expect(keys.signing.kid).toBe('2');
    expect([...keys.byKid.values()].map((key) => [key.kid, key.retiresAt?.toISOString() ?? null])).toEqual([
      ['2', null],
      ['1', '2028-01-31T00:00:00.000Z'],
      ['0', '2027-06-30T00:00:00.000Z'],
    ]);
    expect(keys.derived?.kid).toBe('0');
    // An operator's secret is never the key itself: it is derived for this use.
    expect(keys.signing.key.toString('utf8')).not.toContain(secret);
    expect(recipientLinkKeys(loadConfig({ ...base, RECIPIENT_LINK_KEYS: `2:${secret}` })).derived).toBeNull();
  });

  it('refuses a malformed list at start-up, naming the setting and never echoing a secret', () => {
    const cases: [string, RegExp][] = [
      ['', /entry 1/],
      [`22:${secret}`, /one letter or digit/],
      ['1:short', /at least 32 characters/],
      [`1:${secret},1:${'m'.repeat(32)}`, /listed twice/],
      [`1:${secret}:2028-02-30`, /first key .* cannot have an end date|not a date/],
      [`1:${secret},2:${'m'.repeat(32)}:2028-02-30`, /not a date like 2028-01-31/],
      [`1:${secret},2:${'m'.repeat(32)}:tomorrow`, /not a date/],
      [`1:${secret},2:${'m'.repeat(32)}:2028-01-31:x`, /kid:secret or kid:secret:YYYY-MM-DD/],
      [`1:${secret}:2028-01-31`, /first key \(1\) signs new links and cannot have an end date/],
      ['1:derived,2:derived', /"derived" is listed twice/],
      [`1:${secret};x,2:derived`, /at least 32 characters/],
    ];
    for (const [value, message] of cases) {
      const parsed = parseLinkKeys(value);
      expect(parsed.ok, value).toBe(false);
      if (!parsed.ok) {
        expect(parsed.message, value).toMatch(message);
        expect(parsed.message).not.toContain(secret);
      }
    }
    expect(() => loadConfig({ ...base, RECIPIENT_LINK_KEYS: '1:short' })).toThrow(/RECIPIENT_LINK_KEYS .*at least 32 characters/);
  });
});
