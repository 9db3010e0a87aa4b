import { createHash, randomBytes } from 'node:crypto';
import type { APIRequestContext } from '@playwright/test';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * The local OpenID Connect issuer the single sign-on specs run against refuses what a real
 * provider refuses. Without that, a console that stopped sending PKCE, state or a nonce, or a
 * fixture that stopped checking them, would still pass e2e/ui/single-sign-on.spec.ts.
 */

const issuer = process.env.OIDC_ISSUER ?? '';
const clientId = process.env.OIDC_CLIENT_ID ?? '';
const clientSecret = process.env.OIDC_CLIENT_SECRET ?? '';
const redirectUri = `http://127.0.0.1:${process.env.E2E_PORT ?? ''}/api/auth/callback/oidc`;
const form = { 'content-type': 'application/x-www-form-urlencoded' };
const basic = (id: string, secret: string) => ({
  ...form,
  authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
});

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizeUrl(overrides: Record<string, string | null> = {}): string {
  const params: Record<string, string | null> = {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email profile',
    state: 'st-1',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    nonce: 'nonce-1',
    ...overrides,
  };
  const query = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== null));
  return `${issuer}/authorize?${query.toString()}`;
}

/** Through the consent page as `identity`: the code the issuer sends back to the console. */
async function codeFor(
  request: APIRequestContext,
  { challenge, identity = 'oncall', nonce = 'nonce-1' }: { challenge: string; identity?: string; nonce?: string },
): Promise<string> {
  const page = await request.get(authorizeUrl({ code_challenge: challenge, nonce }));
  expect(page.status()).toBe(200);
  const requestId = /name="request" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  const decision = await request.post(`${issuer}/authorize/decision`, { form: { request: requestId, identity }, maxRedirects: 0 });
  expect(decision.status()).toBe(302);
  const back = new URL(decision.headers().location ?? '');
  expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
  expect(back.searchParams.get('state')).toBe('st-1');
  return back.searchParams.get('code') ?? '';
}

test.beforeAll(() => {
  expect(issuer, 'OIDC_ISSUER is set by scripts/e2e.ts').toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
});

test('the issuer publishes its discovery document and an RSA signing key', async ({ request }) => {
  const discovery = await (await request.get(`${issuer}/.well-known/openid-configuration`)).json();
  expect(discovery).toMatchObject({
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks`,
    userinfo_endpoint: `${issuer}/userinfo`,
    response_types_supported: ['code'],
    id_token_signing_alg_values_supported: ['RS256'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  });
  const { keys } = await (await request.get(discovery.jwks_uri)).json();
  expect(keys).toEqual([expect.objectContaining({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String), n: expect.any(String), e: 'AQAB' })]);
  expect(keys[0]).not.toHaveProperty('d');
});

test('authorization requests: an unknown client or redirect_uri is answered, never redirected; missing state or PKCE goes back as an error', async ({
  request,
}) => {
  for (const [overrides, error] of [
    [{ client_id: 'someone-else' }, 'invalid_client'],
    [{ redirect_uri: 'http://127.0.0.1:1/steal' }, 'invalid_request'],
  ] as const) {
    const answer = await request.get(authorizeUrl(overrides), { maxRedirects: 0 });
    expect(answer.status()).toBe(400);
    expect(await answer.json()).toMatchObject({ error });
  }
  for (const [overrides, error] of [
    [{ state: null }, 'invalid_request'],
    [{ code_challenge: null }, 'invalid_request'],
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ nonce: null }, 'invalid_request'],
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ scope: 'email' }, 'invalid_scope'],
  ] as const) {
    const answer = await request.get(authorizeUrl(overrides), { maxRedirects: 0 });
    expect(answer.status(), JSON.stringify(overrides)).toBe(302);
    const back = new URL(answer.headers().location ?? '');
    expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
    expect(back.searchParams.get('error'), JSON.stringify(overrides)).toBe(error);
    expect(back.searchParams.has('code')).toBe(false);
  }
});

test('token requests: the client secret, the PKCE verifier and the redirect_uri are checked, and a code is spent by its first use', async ({
  request,
  seed,
}) => {
  const token = (data: Record<string, string>, headers: Record<string, string> = basic(clientId, clientSecret)) =>
    request.post(`${issuer}/token`, { headers, data: new URLSearchParams(data).toString() });
  const { verifier, challenge } = pkce();
  const grant = (code: string) => ({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });

  const code = await codeFor(request, { challenge });
  for (const [headers, status, error] of [
    [basic(clientId, 'not-the-secret'), 401, 'invalid_client'],
    [form, 401, 'invalid_client'],
  ] as const) {
    const answer = await token(grant(code), headers);
    expect(answer.status()).toBe(status);
    expect(await answer.json()).toMatchObject({ error });
  }
  // A wrong verifier spends the code: the right one cannot redeem it afterwards.
  const wrongVerifier = await token({ ...grant(code), code_verifier: pkce().verifier });
  expect(wrongVerifier.status()).toBe(400);
  expect(await wrongVerifier.json()).toMatchObject({ error: 'invalid_grant' });
  expect(await (await token(grant(code))).json()).toMatchObject({ error: 'invalid_grant' });

  const wrongRedirect = await token({ ...grant(await codeFor(request, { challenge })), redirect_uri: `${redirectUri}x` });
  expect(await wrongRedirect.json()).toMatchObject({ error: 'invalid_grant' });

  // client_secret_post works as well as basic; the answer is a bearer token and an RS256 id_token
  // for the client, carrying the nonce of its authorization request.
  const nonce = randomBytes(16).toString('base64url');
  const fresh = await codeFor(request, { challenge, nonce });
  const issued = await token({ ...grant(fresh), client_id: clientId, client_secret: clientSecret }, form);
  expect(issued.status()).toBe(200);
  const body = await issued.json();
  expect(body).toMatchObject({ token_type: 'Bearer', expires_in: expect.any(Number), access_token: expect.any(String), id_token: expect.any(String) });
  const [header, payload] = String(body.id_token)
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
  expect(header).toMatchObject({ alg: 'RS256', kid: expect.any(String) });
  expect(payload).toMatchObject({ iss: issuer, aud: clientId, sub: 'idp-oncall', email: seed.users.oncall.email, email_verified: true, nonce });
  expect(payload.exp).toBeGreaterThan(payload.iat);
  expect(await (await token(grant(fresh))).json()).toMatchObject({ error: 'invalid_grant' });

  const userinfo = await request.get(`${issuer}/userinfo`, { headers: { authorization: `Bearer ${body.access_token}` } });
  expect(await userinfo.json()).toEqual({ sub: 'idp-oncall', email: seed.users.oncall.email, email_verified: true, name: expect.any(String) });
  const anonymous = await request.get(`${issuer}/userinfo`);
  expect(anonymous.status()).toBe(401);
  expect(await anonymous.json()).toMatchObject({ error: 'invalid_token' });
});

test('malformed requests get OAuth error JSON, not a crash', async ({ request }) => {
  for (const [answer, status] of [
    [await request.post(`${issuer}/token`, { headers: { ...basic(clientId, clientSecret), 'content-type': 'application/json' }, data: '{}' }), 400],
    [await request.post(`${issuer}/token`, { headers: basic(clientId, clientSecret), data: `grant_type=${'x'.repeat(100_000)}` }), 413],
    [await request.post(`${issuer}/token`, { headers: basic(clientId, clientSecret), data: 'grant_type=password&username=a&password=b' }), 400],
    [await request.post(`${issuer}/token`, { headers: { ...form, authorization: 'Basic %%%' }, data: 'grant_type=authorization_code' }), 401],
    [await request.post(`${issuer}/authorize/decision`, { form: { request: 'made-up', identity: 'admin' }, maxRedirects: 0 }), 400],
    [await request.get(`${issuer}/token`), 405],
    [await request.get(`${issuer}/admin`), 404],
  ] as const) {
    expect(answer.status(), answer.url()).toBe(status);
    expect(await answer.json()).toMatchObject({ error: expect.any(String), error_description: expect.any(String) });
  }
  expect((await request.get(`${issuer}/.well-known/openid-configuration`)).ok()).toBe(true);
});
