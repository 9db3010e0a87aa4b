'use client';

import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { receivedMessageContract, type ReceivedMessage } from '@/lib/api/console/received';
import { consoleQuery } from '@/lib/http/client';
import { ErrorState, SkeletonLines } from '@/components/ui/states';

/**
 * The timeline's "What the customer received": on opening, the sent notice re-rendered on the
 * server from its stored payload and the template version its send recorded (audited there). The
 * HTML goes into a frame with `sandbox=""` (no script, no same-origin, no navigation), as the
 * Templates page shows it; the text version (or the SMS) beside it, one at a time.
 */
export function ReceivedMessagePanel({ noticeKey }: { noticeKey: string }) {
  const [open, setOpen] = useState(false);
  return (
    <details className="received" data-testid="received" onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary data-testid="received-open">Show it, re-rendered from the stored payload</summary>
      {open ? <Received noticeKey={noticeKey} /> : null}
    </details>
  );
}

function Received({ noticeKey }: { noticeKey: string }) {
  const query = useQuery({ ...consoleQuery(receivedMessageContract, { notice: noticeKey }), staleTime: Infinity });
  if (query.isPending) return <SkeletonLines lines={4} />;
  if (query.isError) return <ErrorState error={query.error} retry={() => void query.refetch()} />;
  return <Shown received={query.data} />;
}

function Shown({ received }: { received: ReceivedMessage }) {
  const [part, setPart] = useState<'html' | 'text'>('html');
  const note = (
    <p className={`small ${received.status === 'rendered' ? 'muted' : ''}`} data-testid="received-note" data-status={received.status}>
      {received.status === 'rendered' ? <span className="badge warn">re-render</span> : <span className="badge">{received.status.replace('_', ' ')}</span>}{' '}
      {received.message}
    </p>
  );
  if (received.sms) {
    return (
      <>
        {note}
        <pre data-testid="received-sms" className="small" style={{ whiteSpace: 'pre-wrap' }}>
          {received.sms.body}
        </pre>
      </>
    );
  }
  if (!received.email) return note;
  const { email } = received;
  return (
    <>
      {note}
      <p>
        <span className="muted small">Subject:</span> <strong data-testid="received-subject">{email.subject}</strong>{' '}
        <span className="muted small">· {email.locale}</span>
      </p>
      <div className="segmented small" role="tablist" aria-label="Message part" style={{ marginBottom: 8 }}>
        {(['html', 'text'] as const).map((name) => (
          <button
            key={name}
            type="button"
            role="tab"
            aria-pressed={part === name}
            aria-selected={part === name}
            onClick={() => setPart(name)}
            data-testid={`received-tab-${name}`}
          >
            {name === 'html' ? 'HTML' : 'Text'}
          </button>
        ))}
      </div>
      {part === 'html' ? (
        <iframe
          title={`What the customer received, ${email.locale} HTML`}
          sandbox=""
          srcDoc={email.html}
          data-testid="received-html"
          style={{ width: '100%', height: 620, border: '1px solid var(--border, #d0d5dd)', borderRadius: 6, background: '#f3f4f6' }}
        />
      ) : (
        <pre data-testid="received-text" className="small" style={{ whiteSpace: 'pre-wrap', margin: 0, overflow: 'auto', maxHeight: 620 }}>
          {email.text}
        </pre>
      )}
    </>
  );
}
