'use client';

import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { setPauseContract } from '@/lib/api/console/controls';
import { callConsole } from '@/lib/http/client';

type Target = { scope: 'all' } | { scope: 'notice_type'; noticeType: string } | { scope: 'channel'; channel: 'email' | 'sms' };

function targetOf(choice: string): Target {
  if (choice === 'all') return { scope: 'all' };
  if (choice === 'channel:email' || choice === 'channel:sms') return { scope: 'channel', channel: choice === 'channel:sms' ? 'sms' : 'email' };
  return { scope: 'notice_type', noticeType: choice.replace(/^notice_type:/, '') };
}

/** Pause or resume: all sending, a notice type or a channel, with a reason (audited). */
export function PauseForm({ noticeTypes, action, fixed }: { noticeTypes: readonly string[]; action: 'pause' | 'resume'; fixed?: string }) {
  const router = useRouter();
  const [choice, setChoice] = useState(fixed ?? 'all');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const testId = `controls-${action}${fixed ? `-${fixed}` : ''}`;

  async function submit() {
    setBusy(true);
    setError(null);
    const result = await callConsole(setPauseContract, { action, target: targetOf(choice), reason: reason.trim() });
    setBusy(false);
    if (!result.ok) return setError(result.refusal.message);
    setReason('');
    router.refresh();
  }

  return (
    <form
      data-testid={testId}
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
      style={{ display: 'flex', flexWrap: 'wrap', gap: 8, alignItems: 'center' }}
    >
      {fixed ? null : (
        <select aria-label="What to pause" value={choice} onChange={(event) => setChoice(event.target.value)} data-testid={`${testId}-target`}>
          <option value="all">All sending</option>
          <option value="channel:email">Channel: email</option>
          <option value="channel:sms">Channel: SMS</option>
          {noticeTypes.map((type) => (
            <option key={type} value={`notice_type:${type}`}>
              Notice type: {type}
            </option>
          ))}
        </select>
      )}
      <input
        aria-label="Reason"
        placeholder={action === 'pause' ? 'Why (e.g. incident 42: wrong amounts)' : 'Why it is safe to resume'}
        value={reason}
        onChange={(event) => setReason(event.target.value)}
        style={{ minWidth: 260, flex: '1 1 260px' }}
        data-testid={`${testId}-reason`}
      />
      <button type="submit" className={action === 'pause' ? 'danger' : undefined} disabled={busy || reason.trim().length < 3} data-testid={`${testId}-submit`}>
        {busy ? 'Saving…' : action === 'pause' ? 'Pause' : 'Resume'}
      </button>
      {error ? (
        <span className="small error-text" data-testid={`${testId}-error`} style={{ flexBasis: '100%' }}>
          {error}
        </span>
      ) : null}
    </form>
  );
}
