'use client';

import { signIn } from 'next-auth/react';
import { useState, type FormEvent } from 'react';
import { throttledMinutesOf } from '@/lib/auth/sign-in-errors';

const errorText: Record<string, string> = {
  CredentialsSignin: 'That email and password do not match an active account.',
  AccountLocked: 'Too many failed attempts: this account is locked for a few minutes. Wait, then try again, or ask an admin.',
  NoConsoleAccount: 'Single sign-on worked, but there is no console account for that email. Ask an admin to create one.',
  AccessDenied: 'Single sign-on worked, but there is no console account for that email. Ask an admin to create one.',
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
    const result = await signIn('credentials', { email: String(form.get('email') ?? ''), password: String(form.get('password') ?? ''), redirect: false, callbackUrl });
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
        <div className="notice error" data-testid="signin-error" style={{ marginBottom: 12 }}>
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
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
      {oidc ? (
        <>
          <p className="muted small" style={{ textAlign: 'center', margin: '12px 0' }}>
            or
          </p>
          <button type="button" onClick={() => void signIn('oidc', { callbackUrl })}>
            Sign in with single sign-on
          </button>
        </>
      ) : null}
    </form>
  );
}
