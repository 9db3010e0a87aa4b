import { describe, expect, it } from 'vitest';
import { openMfaSecret, sealMfaSecret } from './mfa-secret';
import { acceptedTotpStep, hashRecoveryCode, newRecoveryCodes, newTotpSecret, otpauthUri, secondFactorKind, totpCodeAt, totpStepAt } from './totp';

// RFC 6238 appendix B's SHA-1 secret, "12345678901234567890", in base32.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

describe('TOTP check (RFC 6238, 30 s steps, one step either side)', () => {
  const now = new Date('2026-12-02T05:00:10Z');

  it("matches RFC 6238's SHA-1 test vectors to six digits (94287082 at 59 s, 07081804 at 1111111109 s)", () => {
    expect(totpCodeAt({ secret: RFC_SECRET, now: new Date(59_000) })).toBe('287082');
    expect(totpCodeAt({ secret: RFC_SECRET, now: new Date(1_111_111_109_000) })).toBe('081804');
  });

  it('accepts the current code and the codes one step before and after, and says which step each belongs to', () => {
    const secret = newTotpSecret();
    const step = totpStepAt(now);
    for (const offset of [-1, 0, 1]) {
      const code = totpCodeAt({ secret, now: new Date(now.getTime() + offset * 30_000) });
      expect(acceptedTotpStep({ secret, code, now, lastStep: null })).toBe(step + offset);
    }
  });

  it('refuses a code two steps away, a wrong one, and anything not six digits', () => {
    const secret = newTotpSecret();
    for (const offset of [-2, 2]) {
      const code = totpCodeAt({ secret, now: new Date(now.getTime() + offset * 30_000) });
      expect(acceptedTotpStep({ secret, code, now, lastStep: null })).toBeNull();
    }
    const right = totpCodeAt({ secret, now });
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
    expect(acceptedTotpStep({ secret, code: wrong, now, lastStep: null })).toBeNull();
    for (const code of ['', '12345', '1234567', 'abcdef', ` ${right}`]) expect(acceptedTotpStep({ secret, code, now, lastStep: null })).toBeNull();
  });

  it('refuses a replay: the code of a step already used, or of an earlier step still inside the window', () => {
    const secret = newTotpSecret();
    const code = totpCodeAt({ secret, now });
    const step = acceptedTotpStep({ secret, code, now, lastStep: null });
    expect(step).toBe(totpStepAt(now));
    expect(acceptedTotpStep({ secret, code, now, lastStep: step })).toBeNull();
    const earlier = totpCodeAt({ secret, now: new Date(now.getTime() - 30_000) });
    expect(acceptedTotpStep({ secret, code: earlier, now, lastStep: step })).toBeNull();
    // Control: the next step's code is accepted once the clock gets there.
    const later = new Date(now.getTime() + 30_000);
    expect(acceptedTotpStep({ secret, code: totpCodeAt({ secret, now: later }), now: later, lastStep: step })).toBe(totpStepAt(later));
  });

  it('builds the otpauth URI authenticator apps scan', () => {
    const uri = new URL(otpauthUri({ email: 'ada@example.com', secret: RFC_SECRET }));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(uri.searchParams.get('secret')).toBe(RFC_SECRET);
    expect(uri.searchParams.get('issuer')).toBe('notice-ledger');
    expect(decodeURIComponent(uri.pathname)).toBe('/notice-ledger:ada@example.com');
  });
});

describe('recovery codes', () => {
  it('are ten distinct codes, told apart from TOTP codes, hashed alike however they are typed', () => {
    const codes = newRecoveryCodes();
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) {
      expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
      expect(secondFactorKind(code)).toBe('recovery');
      expect(hashRecoveryCode(` ${code.toUpperCase().replace('-', ' ')} `)).toBe(hashRecoveryCode(code));
    }
    expect(secondFactorKind('123456')).toBe('totp');
    expect(secondFactorKind('12345')).toBeNull();
  });
});

describe('the sealed TOTP secret', () => {
  const key = 'k'.repeat(40);
  const userId = '6f1d2c3b-1111-4222-8333-944455556666';

  it('opens with the same key and user only; the stored text does not contain the secret', () => {
    const secret = newTotpSecret();
    const sealed = sealMfaSecret({ secret, userId, noticeKeySecret: key });
    expect(sealed).not.toContain(secret);
    expect(openMfaSecret({ sealed, userId, noticeKeySecret: key })).toBe(secret);
    expect(openMfaSecret({ sealed, userId, noticeKeySecret: 'x'.repeat(40) })).toBeNull();
    expect(openMfaSecret({ sealed, userId: '6f1d2c3b-1111-4222-8333-944455556667', noticeKeySecret: key })).toBeNull();
    const [version, iv, tag, body] = sealed.split('.');
    const flipped = `${body?.[0] === 'A' ? 'B' : 'A'}${body?.slice(1) ?? ''}`;
    expect(openMfaSecret({ sealed: [version, iv, tag, flipped].join('.'), userId, noticeKeySecret: key })).toBeNull();
  });
});
