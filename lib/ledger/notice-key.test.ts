import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalNotice, correlationFromMessageId, messageIdFor, noticeKey } from './notice-key';
import { InvalidNoticeError, parseNoticeFact, type NoticeFact } from './notice-types';

const secret = 'k'.repeat(32);
const value = fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom('a', 'b', '|', ':', '1', '9', 'é', '\u0000', ' ') });

const recovery = (account: string, reconciliation: string, exception: string, revision = 0): NoticeFact => ({
  type: 'payment_recovery',
  identity: { account_id: account, reconciliation_id: reconciliation, exception_id: exception },
  revision,
});

describe('noticeKey', () => {
  it('is stable for the same fact, whatever the field order of the input object', () => {
    fc.assert(
      fc.property(value, value, value, fc.nat(50), (a, r, e, rev) => {
        const reordered: NoticeFact = { type: 'payment_recovery', identity: { exception_id: e, account_id: a, reconciliation_id: r }, revision: rev };
        expect(noticeKey(secret, recovery(a, r, e, rev))).toBe(noticeKey(secret, reordered));
      }),
    );
  });

  it('changes when any field or the revision changes', () => {
    fc.assert(
      fc.property(fc.tuple(value, value, value, fc.nat(50)), fc.tuple(value, value, value, fc.nat(50)), (x, y) => {
        fc.pre(JSON.stringify(x) !== JSON.stringify(y));
        expect(noticeKey(secret, recovery(...x))).not.toBe(noticeKey(secret, recovery(...y)));
      }),
    );
  });

  it('cannot be made to collide by moving separators between fields', () => {
    fc.assert(
      fc.property(value, value, value, (a, b, c) => {
        const left = canonicalNotice(recovery(`${a}|${b}`, c, 'x'));
        const right = canonicalNotice(recovery(a, `${b}|${c}`, 'x'));
        expect(left).not.toBe(right);
      }),
    );
  });

  it('separates notice types that share identity fields', () => {
    const identity = { subscription_id: 'sub_8812', period_start: '2026-10-01' };
    expect(noticeKey(secret, { type: 'renewal_notice_t72', identity, revision: 0 })).not.toBe(
      noticeKey(secret, { type: 'renewal_notice_t24', identity, revision: 0 }),
    );
  });

  it('depends on the secret', () => {
    const fact = recovery('acc', 'rec', 'exc');
    expect(noticeKey(secret, fact)).not.toBe(noticeKey('z'.repeat(32), fact));
    expect(noticeKey(secret, fact)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('Message-ID correlation', () => {
  it('round-trips through the header form', () => {
    const key = noticeKey(secret, recovery('a', 'b', 'c'));
    const header = messageIdFor(key, 'notices.example.com');
    expect(header).toBe(`<${key.slice(0, 32)}@notices.example.com>`);
    expect(correlationFromMessageId(header)).toBe(key.slice(0, 32));
    expect(correlationFromMessageId('<random@ses.amazonaws.com>')).toBeNull();
  });
});

describe('parseNoticeFact', () => {
  it('accepts a well-formed fact and defaults the revision', () => {
    expect(parseNoticeFact({ type: 'renewal_notice_t72', identity: { subscription_id: 'sub_1', period_start: '2026-10-01' } }).revision).toBe(0);
  });

  it.each([
    [{ type: 'nope', identity: {} }, /unknown notice type/],
    [{ type: 'renewal_notice_t72', identity: { subscription_id: 'sub_1' } }, /period_start/],
    [{ type: 'renewal_notice_t72', identity: { subscription_id: 'sub_1', period_start: '2026-10-01', extra: 'x' } }, /invalid identity/],
    [{ type: 'renewal_notice_t72', identity: { subscription_id: 'a|b', period_start: '2026-10-01' } }, /may contain/],
    [{ type: 'payment_recovery', identity: { account_id: 'a', reconciliation_id: 'r', exception_id: 'e' }, revision: -1 }, /revision/],
  ])('rejects %j', (input, message) => {
    expect(() => parseNoticeFact(input)).toThrow(InvalidNoticeError);
    expect(() => parseNoticeFact(input)).toThrow(message);
  });
});
