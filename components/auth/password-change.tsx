'use client';

import { signIn } from 'next-auth/react';
import { useState, type FormEvent } from 'react';
import { changePasswordContract } from '@/lib/api/console/users';
import { MIN_PASSWORD_LENGTH as MIN_LENGTH } from '@/lib/auth/password-rules';
import { callConsole } from '@/lib/http/client';

export function PasswordChange({ email }: { email: string }) {
  const [message, setMessage] = useState<{ tone: 'ok' | 'critical'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const currentPassword = String(form.get('current') ?? '');
    const newPassword = String(form.get('next') ?? '');
    if (newPassword !== String(form.get('again') ?? '')) {
      setMessage({ tone: 'critical', text: 'The two new passwords differ; type the same one twice.' });
      return;
    }
    setBusy(true);
    const result = await callConsole(changePasswordContract, { currentPassword, newPassword });
    if (!result.ok) {
      setBusy(false);
      setMessage({ tone: 'critical', text: result.refusal.message });
      return;
    }
    // Every session ended, this one too: sign in again with the new password.
    const again = await signIn('credentials', { email, password: newPassword, redirect: false });
    setBusy(false);
    if (!again || again.error) {
      setMessage({ tone: 'ok', text: 'Password changed and every session ended. Sign in again with the new password.' });
      window.location.assign('/signin?callbackUrl=%2Faccount');
      return;
    }
    formElement.reset();
    setMessage({ tone: 'ok', text: 'Password changed. Every other session of yours has ended; this one continues with the new password.' });
  }

  return (
    <section className="card" data-testid="password-change" style={{ maxWidth: 520 }}>
      <h2>Change your password</h2>
      {message ? (
        <div className={`banner ${message.tone}`} data-testid="password-message" role={message.tone === 'critical' ? 'alert' : 'status'}>
          {message.text}
        </div>
      ) : null}
      <form onSubmit={submit}>
        <div className="field">
          <label htmlFor="current-password">Current password</label>
          <input id="current-password" name="current" type="password" autoComplete="current-password" required style={{ width: '100%' }} />
        </div>
        <div className="field">
          <label htmlFor="new-password">New password (at least {MIN_LENGTH} characters, not one leaked in a public breach)</label>
          <input id="new-password" name="next" type="password" autoComplete="new-password" minLength={MIN_LENGTH} required style={{ width: '100%' }} />
        </div>
        <div className="field">
          <label htmlFor="again-password">New password again</label>
          <input id="again-password" name="again" type="password" autoComplete="new-password" minLength={MIN_LENGTH} required style={{ width: '100%' }} />
        </div>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Changing…' : 'Change password'}
        </button>
      </form>
    </section>
  );
}
