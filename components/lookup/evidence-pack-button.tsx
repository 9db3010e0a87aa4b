'use client';

import { useState } from 'react';
import { exportEvidencePackContract } from '@/lib/api/console/evidence';
import { fetchConsole } from '@/lib/http/client';

/** The lookup's "Evidence pack": the notice's signed pack as a JSON file (the same as the API's and the CLI's), audited on the server. */
export function EvidencePackButton({ noticeKey }: { noticeKey: string }) {
  const [state, setState] = useState<'idle' | 'busy' | 'failed'>('idle');
  const download = async () => {
    setState('busy');
    try {
      const pack = await fetchConsole(exportEvidencePackContract, { notice: noticeKey });
      const url = URL.createObjectURL(new Blob([JSON.stringify(pack, null, 2)], { type: 'application/json' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = `evidence-${noticeKey.slice(0, 32)}.json`;
      link.click();
      URL.revokeObjectURL(url);
      setState('idle');
    } catch {
      setState('failed');
    }
  };
  return (
    <button type="button" className="small" data-testid="evidence-pack" disabled={state === 'busy'} onClick={() => void download()}>
      {state === 'failed' ? 'Evidence pack (failed, retry)' : 'Evidence pack'}
    </button>
  );
}
