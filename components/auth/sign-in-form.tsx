'use client';

import { signIn } from 'next-auth/react';
import { useState, type FormEvent } from 'react';
import { SIGN_IN_BUSY, throttledMinutesOf } from '@/lib/auth/sign-in-errors';

const noConsoleAccount =
  'Your single sign-on email does not match an active console account, or your identity provider has not verified it. Ask an admin to check that your console account exists, is enabled and uses that email.';

const errorText: Record<string, string> = {
  // One answer for a wrong password, an unknown email and a locked or disabled account: which of them it was is not told.
  CredentialsSignin:
    'That email and password (and authentication code, if you set one up) do not match an active account. After several failed attempts an account is locked for a few minutes: wait, or ask an admin to unlock it.',
  [SIGN_IN_BUSY]: 'The console is busy checking other sign-ins. Try again in a few seconds.',
  // One text for an unknown, unverified or disabled single sign-on email: the page does not say which.
  NoConsoleAccount: noConsoleAccount,
  AccessDenied: noConsoleAccount,
  OAuthSignin: 'Single sign-on cannot be reached right now. Sign in with your email and password, or try again later; if it keeps failing, ask an admin.',
  OAuthCallback:
    'Single sign-on did not finish: the console could not verify the answer from your identity provider. Try again; if it keeps failing, ask an admin.',
};

function explain(code: string | null | undefined): string | null {
  if (!code) return null;
  const minutes = throttledMinutesOf(code);
  if (minutes !== null) return `Too many failed sign-ins from your network. Try again in ${minutes === 1 ? '1 minute' : `${minutes} minutes`}.`;
  return errorText[code] ?? 'Sign-in failed. Try again; if it keeps failing, ask an admin.';
}

export function SignInForm({ callbackUrl, oidc, initialError }: { callbackUrl: string; oidc: boolean; initialError: string | null }) {
  const [error, setError] = useState<string | null>(explain(initialError));
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    const result = await signIn('credentials', {
      email: String(form.get('email') ?? ''),
      password: String(form.get('password') ?? ''),
      code: String(form.get('code') ?? ''),
      redirect: false,
      callbackUrl,
    });
    setBusy(false);
    if (!result || result.error) {
      setError(explain(result?.error ?? 'CredentialsSignin'));
      return;
    }
    window.location.assign(result.url ?? callbackUrl);
  }

  return (
    <form onSubmit={submit} noValidate data-testid="signin-form">
      {error ? (
        <div className="notice error" role="alert" data-testid="signin-error" style={{ marginBottom: 12 }}>
          {error}
        </div>
      ) : null}
      <div className="field">
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" autoComplete="username" required autoFocus />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required />
      </div>
      <div className="field">
        <label htmlFor="code">Authentication code (if you set up an authenticator app: its six digits, or a recovery code)</label>
        <input id="code" name="code" type="text" inputMode="numeric" autoComplete="one-time-code" maxLength={64} />
      </div>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
      {oidc ? (
        <>
          <p className="muted small" style={{ textAlign: 'center', margin: '12px 0' }}>
            or
          </p>
          <button type="button" data-testid="signin-oidc" onClick={() => void signIn('oidc', { callbackUrl })}>
            Sign in with single sign-on
          </button>
        </>
      ) : null}
    </form>
  );
}
