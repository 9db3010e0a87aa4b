import { describe, expect, it } from 'vitest';
import { isEmailVerified } from './oidc-sign-in';

describe('the email_verified claim of a single sign-on', () => {
  it('is verified only when the provider says true, as a boolean or as the string some providers send', () => {
    for (const whenMissing of ['refuse', 'trust'] as const) {
      for (const claim of [true, 'true', 'TRUE', ' true ']) expect(isEmailVerified(claim, { whenMissing }), JSON.stringify(claim)).toBe(true);
      for (const claim of [false, 'false', 'False', '', 'yes', 1, 0, null, {}])
        expect(isEmailVerified(claim, { whenMissing }), JSON.stringify(claim)).toBe(false);
    }
  });

  it('refuses a missing claim unless the deployment says its provider never sends one', () => {
    expect(isEmailVerified(undefined, { whenMissing: 'refuse' })).toBe(false);
    expect(isEmailVerified(undefined, { whenMissing: 'trust' })).toBe(true);
  });
});
