import type { RuntimeControlRow } from '@/db/schema/controls';

/**
 * The operator's runtime controls as one pure snapshot: which pauses hold and the ledger mode.
 * Workers keep one, refreshed by lib/controls/worker-controls.ts every RUNTIME_CONTROLS_REFRESH;
 * the send path asks it synchronously (no query per notice).
 */

export const pauseChannels = ['email', 'sms'] as const;
export type PauseTarget = { scope: 'all' } | { scope: 'notice_type'; noticeType: string } | { scope: 'channel'; channel: (typeof pauseChannels)[number] };

export function pauseControlName(target: PauseTarget): string {
  if (target.scope === 'all') return 'pause:all';
  if (target.scope === 'notice_type') return `pause:notice_type:${target.noticeType}`;
  return `pause:channel:${target.channel}`;
}

export function parsePauseControlName(name: string): PauseTarget | null {
  if (name === 'pause:all') return { scope: 'all' };
  const type = /^pause:notice_type:(.+)$/.exec(name);
  if (type) return { scope: 'notice_type', noticeType: type[1] ?? '' };
  const channel = /^pause:channel:(email|sms)$/.exec(name);
  if (channel) return { scope: 'channel', channel: channel[1] as 'email' | 'sms' };
  return null;
}

export type ActivePause = { name: string; target: PauseTarget; reason: string; changedBy: string; since: Date };

export type ControlsSnapshot = {
  pauses: ActivePause[];
  /** The stored ledger mode; null: never set, LEDGER_MODE applies. */
  ledgerMode: 'shadow' | 'enforce' | null;
};

export const emptySnapshot: ControlsSnapshot = { pauses: [], ledgerMode: null };

export function snapshotOf(rows: readonly RuntimeControlRow[]): ControlsSnapshot {
  const pauses: ActivePause[] = [];
  let ledgerMode: ControlsSnapshot['ledgerMode'] = null;
  for (const row of rows) {
    if (row.name === 'ledger_mode' && (row.value === 'shadow' || row.value === 'enforce')) ledgerMode = row.value;
    const target = parsePauseControlName(row.name);
    if (target && row.value === 'paused') pauses.push({ name: row.name, target, reason: row.reason, changedBy: row.changedBy, since: row.changedAt });
  }
  return { pauses, ledgerMode };
}

/** The pause that stops a job of this type on this channel, if any (all first, then channel, then type). */
export function pauseFor(snapshot: ControlsSnapshot, job: { noticeType: string; channel: string }): ActivePause | null {
  if (snapshot.pauses.length === 0) return null;
  return (
    snapshot.pauses.find((p) => p.target.scope === 'all') ??
    snapshot.pauses.find((p) => p.target.scope === 'channel' && p.target.channel === job.channel) ??
    snapshot.pauses.find((p) => p.target.scope === 'notice_type' && p.target.noticeType === job.noticeType) ??
    null
  );
}

export function describePause(target: PauseTarget): string {
  if (target.scope === 'all') return 'all sending';
  if (target.scope === 'notice_type') return `notice type ${target.noticeType}`;
  return `channel ${target.channel}`;
}
