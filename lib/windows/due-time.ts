import { quietHoursEnd, type QuietWindow } from '@/lib/jobs/quiet-hours';
import type { Window } from './rule-window';

export type DueTime = {
  dueAt: Date;
  /** `clear`: `earliest` was outside quiet hours; `moved`: pushed to their end; `covers_window`: no quiet-free instant is left. */
  quietHours: 'clear' | 'moved' | 'covers_window';
};

/**
 * The due time is the window's first instant: the earliest send leaves the recipient the most
 * time to act and the send path the most room for retries before `latest`. Quiet hours move it
 * to their end, never past `latest`. `quietHoursEnd` can be an hour off on a DST night, so the
 * result is checked again (a few rounds suffice: each one leaves a quiet period).
 */
export function chooseDueTime({ window, quietHours, timeZone }: { window: Window; quietHours: QuietWindow | null; timeZone: string }): DueTime {
  if (!quietHours) return { dueAt: window.earliest, quietHours: 'clear' };
  let candidate = window.earliest;
  for (let round = 0; round < 4; round += 1) {
    const end = quietHoursEnd({ now: candidate, timeZone, window: quietHours });
    if (!end) break;
    candidate = end.getTime() > candidate.getTime() ? end : new Date(candidate.getTime() + 60_000);
  }
  const stillQuiet = quietHoursEnd({ now: candidate, timeZone, window: quietHours }) !== null;
  if (stillQuiet || candidate.getTime() > window.latest.getTime()) return { dueAt: window.earliest, quietHours: 'covers_window' };
  return { dueAt: candidate, quietHours: candidate === window.earliest ? 'clear' : 'moved' };
}
