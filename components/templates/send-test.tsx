'use client';

import { useState } from 'react';
import { sendTestContract } from '@/lib/api/console/templates';
import { callConsole } from '@/lib/http/client';

/** "Send a test" of one template × locale's sample to an address, through the real mail transport. */
export function SendTest({ template, locale }: { template: string; locale: string }) {
  const [to, setTo] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const testId = `send-test-${template}-${locale}`;

  async function send() {
    setBusy(true);
    setMessage(null);
    const result = await callConsole(sendTestContract, { template, locale, to: to.trim() });
    setBusy(false);
    if (result.ok) setMessage({ ok: true, text: `Sent "${result.data.subject}" to an address at ${result.data.domain}. Recorded in the audit log.` });
    else setMessage({ ok: false, text: result.refusal.message });
  }

  return (
    <form
      className="send-test"
      data-testid={testId}
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
      style={{ display: 'flex', flexWrap: 'wrap', gap: 8, alignItems: 'center' }}
    >
      <label className="small" htmlFor={`${testId}-to`}>
        Send a test to
      </label>
      <input
        id={`${testId}-to`}
        data-testid={`${testId}-to`}
        type="text"
        inputMode="email"
        autoComplete="email"
        placeholder="you@example.com"
        value={to}
        onChange={(event) => setTo(event.target.value)}
        style={{ minWidth: 220, flex: '1 1 220px' }}
      />
      <button type="submit" disabled={busy || to.trim() === ''} data-testid={`${testId}-submit`}>
        {busy ? 'Sending…' : 'Send test'}
      </button>
      {message ? (
        <span className={message.ok ? 'small' : 'small error-text'} data-testid={`${testId}-result`} style={{ flexBasis: '100%' }}>
          {message.text}
        </span>
      ) : null}
    </form>
  );
}
