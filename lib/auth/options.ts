import type { AuthOptions } from 'next-auth';
import CredentialsProvider from 'next-auth/providers/credentials';
import { getDb } from '@/lib/process-db';
import { findUserById } from '@/db/queries/users';
import { config } from '@/lib/config';
import { createLogger, type Logger } from '@/lib/log';
import { signInClientOf } from './address-throttle';
import { authenticate } from './credentials';
import { findUserByIdentity } from '@/db/queries/user-identities';
import type { OidcSubject } from '@/db/queries/user-identities';
import { admitOidcSignIn, isEmailVerified } from './oidc-sign-in';
import { isRole } from './roles';
import { addressThrottledError, SIGN_IN_BUSY } from './sign-in-errors';
import { consoleSecret, liveSession, SESSION_MAX_AGE_S } from './session';
import { beginSession, endSessionsOnSignOut } from './session-lifecycle';

type OidcProfile = { iss?: string; sub: string; email?: string; name?: string; email_verified?: unknown };

/** The identity an id_token names: its issuer (checked against discovery by openid-client) and subject. */
function oidcSubjectOf(profile: OidcProfile | undefined, account: { providerAccountId: string }): OidcSubject {
  return { issuer: profile?.iss ?? config().OIDC_ISSUER ?? '', subject: profile?.sub ?? account.providerAccountId };
}

/** Present only when OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are all set. */
function oidcProvider(): AuthOptions['providers'] {
  const { OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET } = config();
  if (!OIDC_ISSUER || !OIDC_CLIENT_ID || !OIDC_CLIENT_SECRET) return [];
  return [
    {
      id: 'oidc',
      name: 'Single sign-on',
      type: 'oauth',
      wellKnown: `${OIDC_ISSUER.replace(/\/$/, '')}/.well-known/openid-configuration`,
      clientId: OIDC_CLIENT_ID,
      clientSecret: OIDC_CLIENT_SECRET,
      authorization: { params: { scope: 'openid email profile' } },
      idToken: true,
      // The nonce ties the id_token to this browser's request: a token minted for another login is refused.
      checks: ['pkce', 'state', 'nonce'],
      profile: (profile: OidcProfile) => ({ id: profile.sub, email: (profile.email ?? '').toLowerCase(), name: profile.name ?? profile.email ?? profile.sub }),
    },
  ];
}

export function oidcEnabled(): boolean {
  return oidcProvider().length > 0;
}

/**
 * next-auth v4 with JWT sessions. The token carries the user id and role for display, and the
 * user's session version and sign-in instant; authorization re-reads the user on every request
 * (lib/auth/session.ts), so a role change, a disabled account or a sign-out takes effect at once.
 * OIDC never creates accounts: an admin creates the user first and single sign-on finds them by
 * the linked issuer + subject (lib/auth/oidc-sign-in.ts).
 */
/**
 * next-auth's own failures (a forged or expired id_token, a state or PKCE mismatch, an
 * unreachable provider) happen before our sign-in callbacks, so they write no audit row: an
 * anonymous request can cause them at will. They are logged as one warning each — code,
 * provider and the error's message, never its metadata, which may carry tokens.
 */
export function authLogger(log: Logger): Required<NonNullable<AuthOptions['logger']>> {
  return {
    error: (code, metadata) => {
      const error = metadata instanceof Error ? metadata : metadata.error;
      const provider = metadata instanceof Error ? undefined : metadata.providerId;
      log.warn(
        { code, provider: typeof provider === 'string' ? provider : undefined, err: error instanceof Error ? error.message.slice(0, 300) : undefined },
        'sign-in did not complete',
      );
    },
    warn: (code) => log.warn({ code }, 'next-auth configuration warning'),
    debug: () => undefined,
  };
}

export function authOptions(): AuthOptions {
  return {
    secret: consoleSecret(),
    logger: authLogger(createLogger('console-auth')),
    session: { strategy: 'jwt', maxAge: SESSION_MAX_AGE_S },
    pages: { signIn: '/signin', error: '/signin' },
    providers: [
      CredentialsProvider({
        id: 'credentials',
        name: 'Email and password',
        credentials: {
          email: { label: 'Email', type: 'email' },
          password: { label: 'Password', type: 'password' },
          code: { label: 'Authentication code', type: 'text' },
        },
        authorize: async (credentials, req) => {
          // authenticate refuses (and audits) an empty or over-long password itself.
          const client = signInClientOf({ forwardedFor: req.headers?.['x-forwarded-for'] });
          const result = await authenticate(getDb(), {
            email: credentials?.email ?? '',
            password: credentials?.password ?? '',
            code: credentials?.code ?? '',
            client,
          });
          if (result.ok) return result.user;
          // Locked, disabled, unknown and wrong all answer alike: which one is in the audit log only.
          if (result.reason === 'throttled') throw new Error(addressThrottledError(result));
          if (result.reason === 'busy') throw new Error(SIGN_IN_BUSY);
          return null;
        },
      }),
      ...oidcProvider(),
    ],
    events: {
      signOut: async ({ token }) => endSessionsOnSignOut(getDb(), token),
    },
    callbacks: {
      signIn: async ({ user, account, profile }) => {
        if (account?.provider !== 'oidc') return true;
        return admitOidcSignIn(getDb(), {
          identity: oidcSubjectOf(profile as OidcProfile | undefined, account),
          email: user.email ?? '',
          verified: isEmailVerified((profile as OidcProfile | undefined)?.email_verified, {
            whenMissing: config().OIDC_EMAIL_VERIFIED === 'when-sent' ? 'trust' : 'refuse',
          }),
        });
      },
      jwt: async ({ token, user, account, profile }) => {
        if (!user) {
          // next-auth's own /api/auth/session re-reads the token: an ended session is refused there
          // too (the throw makes next-auth clear the cookie).
          if (!(await liveSession(getDb(), { token, now: new Date() }))) throw new Error('session ended');
          return token;
        }
        if (account?.provider === 'oidc') {
          const known = await findUserByIdentity(getDb(), oidcSubjectOf(profile as OidcProfile | undefined, account));
          if (!known || !isRole(known.role)) return token;
          return { ...token, sub: known.id, email: known.email, name: known.name, role: known.role, ...(await beginSession(getDb(), known.id)) };
        }
        const known = await findUserById(getDb(), { id: user.id });
        if (!known || !isRole(known.role)) return token;
        return { ...token, sub: known.id, email: known.email, name: known.name, role: known.role, ...(await beginSession(getDb(), known.id)) };
      },
      session: async ({ session, token }) => {
        if (!token.sub || !token.role || !token.email) return session;
        return { ...session, user: { id: token.sub, email: token.email, name: token.name ?? token.email, role: token.role } };
      },
    },
  };
}
