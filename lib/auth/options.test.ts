import { afterEach, describe, expect, it } from 'vitest';
import { resetConfigForTests } from '../config';
import { authOptions, oidcEnabled } from './options';

const saved = { ...process.env };

afterEach(() => {
  for (const name of ['NEXTAUTH_SECRET', 'OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  resetConfigForTests();
});

describe('next-auth options', () => {
  it('refuses to build without NEXTAUTH_SECRET', () => {
    delete process.env.NEXTAUTH_SECRET;
    resetConfigForTests();
    expect(() => authOptions()).toThrow(/NEXTAUTH_SECRET is not set/);
  });

  it('uses JWT sessions, the custom sign-in page and only credentials without OIDC settings', () => {
    process.env.NEXTAUTH_SECRET = 'n'.repeat(32);
    resetConfigForTests();
    const options = authOptions();
    expect(options.session).toMatchObject({ strategy: 'jwt', maxAge: 12 * 3600 });
    expect(options.pages?.signIn).toBe('/signin');
    expect(options.providers.map((provider) => provider.id)).toEqual(['credentials']);
    expect(oidcEnabled()).toBe(false);
  });

  it('adds the OIDC provider, discovered from the issuer, when all three settings are present', () => {
    Object.assign(process.env, { NEXTAUTH_SECRET: 'n'.repeat(32), OIDC_ISSUER: 'https://idp.example.com/realms/ops/', OIDC_CLIENT_ID: 'console', OIDC_CLIENT_SECRET: 's3cret' });
    resetConfigForTests();
    const oidc = authOptions().providers.find((provider) => provider.id === 'oidc');
    expect(oidc).toMatchObject({ type: 'oauth', wellKnown: 'https://idp.example.com/realms/ops/.well-known/openid-configuration', clientId: 'console', checks: ['pkce', 'state'] });
  });
});
