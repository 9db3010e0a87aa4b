import { describe, expect, it } from 'vitest';
import { noticeKey } from '@/lib/ledger/notice-key';
import { noticeKeyFor } from './keys';
import { loadNoticeConfig } from './load-config';
import type { NoticeFact } from './notice-fact';

const secret = 'pin-secret-0123456789abcdef0123456789';
const { config } = loadNoticeConfig('config/notice-ledger.json');

// The hex below was computed on 2026-12-01 with lib/ledger/notice-key.ts (the code-registry path every
// stored ledger row was keyed by). It is a regression pin: if configuration-driven keys ever
// differ, every existing notice would be minted again under a new key and sent twice.
const pins: { fact: NoticeFact; key: string }[] = [
  {
    fact: { type: 'renewal_notice_t72', identity: { subscription_id: 'sub_8812', period_start: '2026-10-01' }, revision: 0 },
    key: '17e03c488e9251b70cd2a044b4a121a4e7d61820c94b188fa207a233f2cba16f',
  },
  {
    fact: { type: 'renewal_notice_t24', identity: { subscription_id: 'sub_8812', period_start: '2026-10-01' }, revision: 3 },
    key: 'af0ae2fa7d7295520ee2f81ee61f5b1c79d16f7d78bc8506ccf8bdb074bf0a35',
  },
  {
    fact: { type: 'payment_recovery', identity: { account_id: 'acct_1', reconciliation_id: 'recon_2026-11', exception_id: 'exc_7' }, revision: 1 },
    key: '6cfda6aa94011efb5644212837aec3e84277700b3748810b40b72f37922166c0',
  },
];

describe('notice keys from the shipped configuration', () => {
  it.each(pins)('$fact.type keeps the key it has today', ({ fact, key }) => {
    expect(noticeKeyFor(secret, config, { noticeType: fact.type, identity: fact.identity, revision: fact.revision })).toBe(key);
    expect(noticeKey(secret, fact, config)).toBe(key);
  });

  it('lists the identity fields of the three original types in the order their keys were minted in', () => {
    // The order of the code registry these types came from (deleted once the configuration became the only one).
    expect(config.noticeTypes.renewal_notice_t72?.identity).toEqual(['subscription_id', 'period_start']);
    expect(config.noticeTypes.renewal_notice_t24?.identity).toEqual(['subscription_id', 'period_start']);
    expect(config.noticeTypes.payment_recovery?.identity).toEqual(['account_id', 'reconciliation_id', 'exception_id']);
  });

  it('does not depend on the order of the identity object', () => {
    const reordered = { exception_id: 'exc_7', reconciliation_id: 'recon_2026-11', account_id: 'acct_1' };
    expect(noticeKeyFor(secret, config, { noticeType: 'payment_recovery', identity: reordered, revision: 1 })).toBe(pins[2]?.key);
  });

  it('refuses an unknown type and a missing identity field', () => {
    expect(() => noticeKeyFor(secret, config, { noticeType: 'nope', identity: {}, revision: 0 })).toThrow(/unknown notice type "nope"/);
    expect(() => noticeKeyFor(secret, config, { noticeType: 'renewal_notice_t72', identity: { subscription_id: 's' }, revision: 0 })).toThrow(
      /period_start missing/,
    );
  });
});
