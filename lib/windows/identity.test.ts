import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseIdentity } from './identity';
import { loadNoticeConfig } from './load-config';
import { InvalidNoticeError, parseNoticeFact } from './notice-fact';

const { config } = loadNoticeConfig('config/notice-ledger.json');

// The identity rules of the code registry the three original types came from
// (lib/ledger/notice-types.ts, deleted when the configuration became the only registry), frozen
// here as the specification: a stored fact that was valid then must stay valid, and no more.
const registryId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\p{L}\p{N}_.:@/+-]+$/u, 'may contain letters, digits and _ . : @ / + - only');
const noticeTypes = {
  renewal_notice_t72: { identity: z.strictObject({ subscription_id: registryId, period_start: z.iso.date() }) },
  renewal_notice_t24: { identity: z.strictObject({ subscription_id: registryId, period_start: z.iso.date() }) },
  payment_recovery: { identity: z.strictObject({ account_id: registryId, reconciliation_id: registryId, exception_id: registryId }) },
} as const;

function registryAccepts(type: keyof typeof noticeTypes, identity: unknown): boolean {
  return noticeTypes[type].identity.safeParse(identity).success;
}

function factAccepted(type: string, identity: unknown): boolean {
  try {
    parseNoticeFact({ type, identity }, config);
    return true;
  } catch (error) {
    if (error instanceof InvalidNoticeError) return false;
    throw error;
  }
}

const value = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('sub_1', '2026-10-01', '2026-02-30', 'a b', 'x'.repeat(201), 'é:@/+'), fc.integer());

describe('parseIdentity', () => {
  it('accepts and refuses exactly what the deleted code registry did for the three original types', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...(Object.keys(noticeTypes) as (keyof typeof noticeTypes)[])).chain((type) => {
          const fields = Object.keys(noticeTypes[type].identity.shape);
          // Half the time exactly the type's fields (so valid identities are common), else any keys.
          const exact = fc.tuple(...fields.map(() => value)).map((values) => Object.fromEntries(fields.map((field, index) => [field, values[index]])));
          const any = fc.dictionary(fc.constantFrom(...fields, 'account_id', 'period_start', 'extra'), value);
          return fc.tuple(fc.constant(type), fc.oneof(exact, any));
        }),
        ([type, identity]) => {
          expect(parseIdentity(config, type, identity).ok).toBe(registryAccepts(type, identity));
          expect(factAccepted(type, identity)).toBe(registryAccepts(type, identity));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('validates a configured type the code registry never knew, naming the field', () => {
    expect(parseIdentity(config, 'auto_renewal_notice', { subscription_id: 'sub_1', period_start: '2026-10-01' })).toEqual({
      ok: true,
      identity: { subscription_id: 'sub_1', period_start: '2026-10-01' },
    });
    const refused = parseIdentity(config, 'auto_renewal_notice', { subscription_id: 'sub_1', period_start: '1 October' });
    expect(refused.ok).toBe(false);
    expect(refused.ok ? [] : refused.problems).toEqual([expect.stringMatching(/^identity\.period_start: /)]);
    expect(parseIdentity(config, 'nope', {})).toEqual({ ok: false, problems: [expect.stringMatching(/^unknown notice type "nope"/)] });
  });
});
