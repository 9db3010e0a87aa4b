import { describe, expect, it } from 'vitest';
import { loadNoticeConfig } from './load-config';
import { allIdentityFields, identityFieldsOf, InvalidNoticeError, parseNoticeFact, subjectOf } from './notice-fact';

const { config } = loadNoticeConfig('config/notice-ledger.json');

describe('parseNoticeFact', () => {
  it('accepts a well-formed fact and defaults the revision', () => {
    expect(parseNoticeFact({ type: 'renewal_notice_t72', identity: { subscription_id: 'sub_1', period_start: '2026-10-01' } }, config).revision).toBe(0);
  });

  it.each([
    [{ type: 'nope', identity: {} }, /unknown notice type "nope"; known: renewal_notice_t72, renewal_notice_t24, payment_recovery, auto_renewal_notice, /],
    [{ type: 'constructor', identity: {} }, /unknown notice type "constructor"/],
    [{ type: 'renewal_notice_t72', identity: { subscription_id: 'sub_1' } }, /period_start/],
    [{ type: 'renewal_notice_t72', identity: { subscription_id: 'sub_1', period_start: '2026-10-01', extra: 'x' } }, /invalid identity/],
    [
      { type: 'renewal_notice_t72', identity: { subscription_id: 'a|b', period_start: '2026-10-01' } },
      /invalid identity for renewal_notice_t72: subscription_id: may contain/,
    ],
    [
      { type: 'price_change_notice', identity: { subscription_id: 'sub_1', period_start: '1 October' } },
      /invalid identity for price_change_notice: period_start: /,
    ],
    [{ type: 'payment_recovery', identity: { account_id: 'a', reconciliation_id: 'r', exception_id: 'e' }, revision: -1 }, /revision/],
  ])('rejects %j', (input, message) => {
    expect(() => parseNoticeFact(input, config)).toThrow(InvalidNoticeError);
    expect(() => parseNoticeFact(input, config)).toThrow(message);
  });

  it('knows the configured types the code registry never had, with their subject', () => {
    for (const type of ['auto_renewal_notice', 'trial_conversion_notice', 'price_change_notice', 'pre_debit_notice']) {
      const fact = parseNoticeFact({ type, identity: { period_start: '2026-10-01', subscription_id: 'sub_9' }, revision: 2 }, config);
      expect(fact).toEqual({ type, identity: { subscription_id: 'sub_9', period_start: '2026-10-01' }, revision: 2 });
      expect(subjectOf(fact, config)).toBe('sub_9');
      expect(identityFieldsOf(type, config)).toEqual(['subscription_id', 'period_start']);
    }
    expect(subjectOf({ type: 'payment_recovery', identity: { account_id: 'acct_1', reconciliation_id: 'r', exception_id: 'e' }, revision: 0 }, config)).toBe(
      'acct_1',
    );
    expect(identityFieldsOf('nope', config)).toEqual([]);
    expect(allIdentityFields(config)).toEqual(['subscription_id', 'period_start', 'account_id', 'reconciliation_id', 'exception_id']);
  });
});
