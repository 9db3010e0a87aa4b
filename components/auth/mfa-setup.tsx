'use client';

import { useState, type FormEvent } from 'react';
import { beginMfaContract, confirmMfaContract, disableMfaContract, regenerateRecoveryCodesContract } from '@/lib/api/console/users';
import type { MfaStatus } from '@/lib/console/mfa';
import { callConsole } from '@/lib/http/client';

type Message = { tone: 'ok' | 'critical'; text: string };

function RecoveryCodes({ codes }: { codes: string[] }) {
  return (
    <div data-testid="mfa-recovery-codes">
      <p>
        <strong>Recovery codes, shown only now.</strong> Keep them somewhere safe (a password manager). Each signs you in once in place of a code, if you lose
        your phone.
      </p>
      <ul className="mono" style={{ columns: 2, listStyle: 'none', padding: 0 }}>
        {codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ul>
    </div>
  );
}

export function MfaSetup({ initial }: { initial: MfaStatus }) {
  const [state, setState] = useState(initial.state);
  const [enrollment, setEnrollment] = useState<{ secret: string; uri: string } | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [message, setMessage] = useState<Message | null>(null);
  const [busy, setBusy] = useState(false);

  async function begin(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const currentPassword = String(new FormData(event.currentTarget).get('current') ?? '');
    setBusy(true);
    const result = await callConsole(beginMfaContract, { currentPassword });
    setBusy(false);
    if (!result.ok) return setMessage({ tone: 'critical', text: result.refusal.message });
    setMessage(null);
    setEnrollment(result.data);
  }

  async function confirm(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const code = String(new FormData(event.currentTarget).get('code') ?? '');
    setBusy(true);
    const result = await callConsole(confirmMfaContract, { code });
    setBusy(false);
    if (!result.ok) return setMessage({ tone: 'critical', text: result.refusal.message });
    setEnrollment(null);
    setCodes(result.data.recoveryCodes);
    setState('enabled');
    setMessage({ tone: 'ok', text: 'Authenticator set up. From now on, sign in with your password and the code your app shows.' });
  }

  async function change(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const action = (event.nativeEvent as SubmitEvent).submitter?.getAttribute('value');
    const input = { currentPassword: String(form.get('current') ?? ''), code: String(form.get('code') ?? '') };
    setBusy(true);
    if (action === 'disable') {
      const result = await callConsole(disableMfaContract, input);
      setBusy(false);
      if (!result.ok) return setMessage({ tone: 'critical', text: result.refusal.message });
      setState('none');
      setCodes(null);
      return setMessage({ tone: 'ok', text: 'Authenticator turned off. Sign-in asks for your password only (an admin or manager must set one up again).' });
    }
    const result = await callConsole(regenerateRecoveryCodesContract, input);
    setBusy(false);
    if (!result.ok) return setMessage({ tone: 'critical', text: result.refusal.message });
    setCodes(result.data.recoveryCodes);
    setMessage({ tone: 'ok', text: 'New recovery codes made; the old ones no longer work.' });
  }

  return (
    <section className="card" data-testid="mfa-setup" style={{ maxWidth: 520, marginTop: 16 }}>
      <h2>Authenticator app (two-step sign-in)</h2>
      {message ? (
        <div className={`banner ${message.tone}`} data-testid="mfa-message" role={message.tone === 'critical' ? 'alert' : 'status'}>
          {message.text}
        </div>
      ) : null}
      {codes ? <RecoveryCodes codes={codes} /> : null}
      {state !== 'enabled' && !enrollment ? (
        <form onSubmit={begin}>
          <p>Sign-in will ask for a six-digit code from an app such as Google Authenticator, 1Password or Aegis, as well as your password.</p>
          <div className="field">
            <label htmlFor="mfa-begin-password">Your password</label>
            <input id="mfa-begin-password" name="current" type="password" autoComplete="current-password" required style={{ width: '100%' }} />
          </div>
          <button type="submit" className="primary" disabled={busy}>
            Set up an authenticator app
          </button>
        </form>
      ) : null}
      {enrollment ? (
        <form onSubmit={confirm}>
          <p>Add this account to your app: open the link on your phone, or type the key by hand (time-based, 6 digits, 30 seconds).</p>
          <div className="field">
            <label>Key</label>
            <code data-testid="mfa-secret" style={{ wordBreak: 'break-all' }}>
              {enrollment.secret.replace(/(.{4})/g, '$1 ').trim()}
            </code>
          </div>
          <div className="field">
            <label>Setup link</label>
            <a href={enrollment.uri} data-testid="mfa-uri" className="small" style={{ wordBreak: 'break-all' }}>
              {enrollment.uri}
            </a>
          </div>
          <div className="field">
            <label htmlFor="mfa-confirm-code">The code your app shows now</label>
            <input id="mfa-confirm-code" name="code" inputMode="numeric" autoComplete="one-time-code" maxLength={6} required />
          </div>
          <button type="submit" className="primary" disabled={busy}>
            Confirm and turn on
          </button>
        </form>
      ) : null}
      {state === 'enabled' ? (
        <form onSubmit={change}>
          <p data-testid="mfa-enabled">
            Two-step sign-in is on{initial.enabledAt && initial.state === 'enabled' ? ` since ${new Date(initial.enabledAt).toLocaleDateString()}` : ''}
            {initial.state === 'enabled' && !codes ? `; ${initial.recoveryCodesLeft} recovery codes left` : ''}. To make new recovery codes or turn it off, give
            your password and a current code.
          </p>
          <div className="field">
            <label htmlFor="mfa-current-password">Password</label>
            <input id="mfa-current-password" name="current" type="password" autoComplete="current-password" required style={{ width: '100%' }} />
          </div>
          <div className="field">
            <label htmlFor="mfa-change-code">Code (or a recovery code)</label>
            <input id="mfa-change-code" name="code" autoComplete="one-time-code" maxLength={64} required />
          </div>
          <div style={{ display: 'flex', gap: 8 }}>
            <button type="submit" value="recovery" disabled={busy}>
              New recovery codes
            </button>
            <button type="submit" value="disable" className="danger" disabled={busy}>
              Turn off
            </button>
          </div>
        </form>
      ) : null}
    </section>
  );
}
