import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalNotice, correlationFromMessageId, messageIdFor, noticeKey } from './notice-key';
import { referenceCanonicalNotice, referenceNoticeKey } from '@/testing/notice-key-reference';
import { activeNoticeConfig } from '@/lib/windows/active';
import type { NoticeFact } from '@/lib/windows/notice-fact';

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

const { config } = activeNoticeConfig();

/** Any fact of any configured type, values far outside what parseNoticeFact admits (unicode, surrogates, separators). */
const anyFact: fc.Arbitrary<NoticeFact> = fc.constantFrom(...Object.keys(config.noticeTypes)).chain((type) =>
  fc.record({
    type: fc.constant(type),
    identity: fc.record(
      Object.fromEntries(
        (config.noticeTypes[type]?.identity ?? []).map((field) => [
          field,
          fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ maxLength: 300 }), value),
        ]),
      ),
    ),
    revision: fc.oneof(fc.nat(1_000_000), fc.integer(), fc.double()),
  }),
);

describe('noticeKey equals the frozen v1 derivation (existing ledger rows keep their keys)', () => {
  it('byte for byte, over random facts and secrets', () => {
    fc.assert(
      fc.property(anyFact, fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.constant(secret)), (fact, anySecret) => {
        expect(canonicalNotice(fact)).toBe(referenceCanonicalNotice(fact));
        expect(noticeKey(anySecret, fact)).toBe(referenceNoticeKey(anySecret, fact));
      }),
      { numRuns: 2000 },
    );
  });

  it('matches HMAC-SHA256 computed outside Node (openssl dgst -sha256 -hmac)', () => {
    expect(noticeKey(secret, { type: 'renewal_notice_t72', identity: { subscription_id: 'sub_8812', period_start: '2026-10-01' }, revision: 0 })).toBe(
      'bc89a408589703a1ba690da40a20f38259e197cdedb983c285791e3b38ff9620',
    );
    expect(noticeKey(secret, recovery('acc_é1', 'rec_9', 'exc_|1', 3))).toBe('5e6a09a178ddee5752027d12583663a17eaea1e826b97c8cc557a3d72f136bb5');
  });

  it('refuses a fact that lacks an identity field, as the reference does', () => {
    const fact = { type: 'payment_recovery', identity: { account_id: 'a', reconciliation_id: 'r' }, revision: 0 } as NoticeFact;
    expect(() => referenceNoticeKey(secret, fact)).toThrow(/exception_id missing/);
    expect(() => noticeKey(secret, fact)).toThrow(/exception_id missing/);
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
