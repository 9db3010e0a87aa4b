import type { Window } from './rule-window';

/**
 * The one check of a send window, both ends included: before it opens the notice waits (no
 * attempt counted), after its latest instant it is never sent. The planner's windows are
 * `{ earliest, latest }`; a job stores its window as `[window_earliest ?? due_at, deadline_at]`,
 * opening at the later of the two (quiet hours may have moved the due time inside the window),
 * and the send path (lib/jobs/policy.ts, lib/jobs/handle-wakeup.ts) passes the job itself: the
 * check costs no allocation when the window is open or missed, and reads no time zone.
 */
export type StoredWindow = { dueAt: Date; windowEarliest: Date | null; deadlineAt: Date };

export type WindowVerdict = { verdict: 'early'; until: Date } | { verdict: 'open' } | { verdict: 'missed' };

const open: WindowVerdict = Object.freeze({ verdict: 'open' });
const missed: WindowVerdict = Object.freeze({ verdict: 'missed' });

/** The first instant a stored window lets a send happen: its earliest, or the due time when that is later. */
export function sendOpensAt(window: Pick<StoredWindow, 'dueAt' | 'windowEarliest'>): Date {
  return window.windowEarliest && window.windowEarliest.getTime() > window.dueAt.getTime() ? window.windowEarliest : window.dueAt;
}

export function windowVerdict(window: Window | StoredWindow, now: Date): WindowVerdict {
  const stored = 'deadlineAt' in window;
  const earliest = stored ? sendOpensAt(window) : window.earliest;
  if (now.getTime() < earliest.getTime()) return { verdict: 'early', until: earliest };
  if (now.getTime() > (stored ? window.deadlineAt : window.latest).getTime()) return missed;
  return open;
}
