'use client';

import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { backfillContract, changeRolloutContract, decideEnforceContract, type BackfillCounts } from '@/lib/api/console/rollout';
import { callConsole } from '@/lib/http/client';
import type { Result } from '@/lib/http/refusal';

type Props = {
  /** The Backfill card's buttons, or the Enforce card's. */
  part: 'backfill' | 'enforce';
  mode: 'shadow' | 'enforce';
  request: { requestedBy: string } | null;
  canManage: boolean;
  canApprove: boolean;
  me: string;
};

/** The rollout's actions: backfill (dry run, then run), ask to enforce, a second person's decision, back to shadow. Each with a reason, audited. */
export function RolloutActions({ part, mode, request, canManage, canApprove, me }: Props) {
  const router = useRouter();
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [counts, setCounts] = useState<BackfillCounts | null>(null);
  const why = reason.trim();
  const id = part === 'backfill' ? 'rollout-backfill' : 'rollout';
  if (!canManage && !(canApprove && part === 'enforce')) return null;

  async function run<T>(action: () => Promise<Result<T>>, after?: (data: T) => void) {
    setBusy(true);
    setError(null);
    const result = await action();
    setBusy(false);
    if (!result.ok) return setError(result.refusal.message);
    after?.(result.data);
    setReason('');
    router.refresh();
  }

  const backfill = (dryRun: boolean) =>
    run(
      () => callConsole(backfillContract, { dryRun, reason: why }),
      (data) => setCounts(data),
    );

  return (
    <div data-testid={`${id}-actions`} style={{ display: 'grid', gap: 10 }}>
      <input
        aria-label="Reason"
        placeholder="Why (goes to the audit log), e.g. one full renewal cycle in shadow, 0.2% duplicates"
        value={reason}
        onChange={(event) => setReason(event.target.value)}
        data-testid={`${id}-reason`}
        style={{ minWidth: 320 }}
      />
      <div style={{ display: 'flex', flexWrap: 'wrap', gap: 8 }}>
        {canManage && part === 'backfill' ? (
          <>
            <button type="button" disabled={busy || why.length < 3} onClick={() => void backfill(true)} data-testid="rollout-backfill-dry-run">
              Backfill: dry run
            </button>
            <button type="button" disabled={busy || why.length < 3} onClick={() => void backfill(false)} data-testid="rollout-backfill-run">
              Backfill: run
            </button>
          </>
        ) : null}
        {part === 'enforce' && canManage && mode === 'shadow' && !request ? (
          <button
            type="button"
            className="danger"
            disabled={busy || why.length < 3}
            onClick={() => void run(() => callConsole(changeRolloutContract, { action: 'request_enforce', reason: why }))}
            data-testid="rollout-request-enforce"
          >
            Ask to enforce
          </button>
        ) : null}
        {part === 'enforce' && canManage && request ? (
          <button
            type="button"
            disabled={busy || why.length < 3}
            onClick={() => void run(() => callConsole(changeRolloutContract, { action: 'cancel_request', reason: why }))}
            data-testid="rollout-cancel-request"
          >
            Withdraw the request
          </button>
        ) : null}
        {part === 'enforce' && canApprove && request && request.requestedBy !== me ? (
          <>
            <button
              type="button"
              className="danger"
              disabled={busy || why.length < 3}
              onClick={() => void run(() => callConsole(decideEnforceContract, { decision: 'approve', reason: why }))}
              data-testid="rollout-approve"
            >
              Approve: enforce
            </button>
            <button
              type="button"
              disabled={busy || why.length < 3}
              onClick={() => void run(() => callConsole(decideEnforceContract, { decision: 'reject', reason: why }))}
              data-testid="rollout-reject"
            >
              Reject
            </button>
          </>
        ) : null}
        {part === 'enforce' && canManage && mode === 'enforce' ? (
          <button
            type="button"
            disabled={busy || why.length < 3}
            onClick={() => void run(() => callConsole(changeRolloutContract, { action: 'shadow', reason: why }))}
            data-testid="rollout-shadow"
          >
            Switch to shadow
          </button>
        ) : null}
      </div>
      {counts ? (
        <p className="small" data-testid="rollout-backfill-result">
          {counts.dryRun ? 'Dry run' : 'Backfill'}: {counts.total} sent job(s) looked at — {counts.dryRun ? 'would write' : 'wrote'} {counts.newKeys} new
          key(s), {counts.existing} already in the ledger (left as they are). Audited.
        </p>
      ) : null}
      {error ? (
        <p className="small error-text" role="alert" data-testid={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}
