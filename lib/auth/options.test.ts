import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { authLogger, authOptions, oidcEnabled } from './options';

const saved = { ...process.env };

afterEach(() => {
  for (const name of ['NEXTAUTH_SECRET', 'OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe('next-auth options', () => {
  it('refuses to build without NEXTAUTH_SECRET', () => {
    delete process.env.NEXTAUTH_SECRET;
    expect(() => authOptions()).toThrow(/NEXTAUTH_SECRET is not set/);
  });

  it('uses JWT sessions, the custom sign-in page and only credentials without OIDC settings', () => {
    process.env.NEXTAUTH_SECRET = 'n'.repeat(32);
    const options = authOptions();
    expect(options.session).toMatchObject({ strategy: 'jwt', maxAge: 12 * 3600 });
    expect(options.pages?.signIn).toBe('/signin');
    expect(options.providers.map((provider) => provider.id)).toEqual(['credentials']);
    expect(oidcEnabled()).toBe(false);
  });

  it('adds the OIDC provider, discovered from the issuer, when all three settings are present', () => {
    Object.assign(process.env, {
      NEXTAUTH_SECRET: 'n'.repeat(32),
      OIDC_ISSUER: 'https://idp.example.com/realms/ops/',
      OIDC_CLIENT_ID: 'console',
      OIDC_CLIENT_SECRET: 's3cret',
    });
    const oidc = authOptions().providers.find((provider) => provider.id === 'oidc');
    expect(oidc).toMatchObject({
      type: 'oauth',
      wellKnown: 'https://idp.example.com/realms/ops/.well-known/openid-configuration',
      clientId: 'console',
      checks: ['pkce', 'state', 'nonce'],
    });
  });
});

describe("next-auth's own failures", () => {
  it('are logged as one warning with the code, provider and message, never the metadata that may carry tokens', () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>), done()),
    });
    const logger = authLogger(pino({ level: 'info' }, sink));
    logger.error('OAUTH_CALLBACK_ERROR', {
      error: new Error('failed to validate JWT signature'),
      providerId: 'oidc',
      id_token: 'eyJhbGciOiJSUzI1NiJ9.secret-claims.sig',
      message: 'failed',
    });
    logger.error('SIGNIN_OAUTH_ERROR', new Error('connect ECONNREFUSED 127.0.0.1:1'));
    expect(lines.map(({ code, provider, err, msg }) => ({ code, provider, err, msg }))).toEqual([
      { code: 'OAUTH_CALLBACK_ERROR', provider: 'oidc', err: 'failed to validate JWT signature', msg: 'sign-in did not complete' },
      { code: 'SIGNIN_OAUTH_ERROR', provider: undefined, err: 'connect ECONNREFUSED 127.0.0.1:1', msg: 'sign-in did not complete' },
    ]);
    expect(JSON.stringify(lines)).not.toContain('secret-claims');
  });
});
