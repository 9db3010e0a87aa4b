import { quietHoursEnd, type QuietWindow } from './quiet-hours';
import type { Window } from './rule-window';

export type DueTime = {
  dueAt: Date;
  /** `clear`: `earliest` was outside quiet hours; `moved`: pushed to their end; `covers_window`: no quiet-free instant is left. */
  quietHours: 'clear' | 'moved' | 'covers_window';
};

/**
 * The due time is the window's first instant: the earliest send leaves the recipient the most
 * time to act and the send path the most room for retries before `latest`. Quiet hours move it
 * to their end, never past `latest`.
 */
export function chooseDueTime({ window, quietHours, timeZone }: { window: Window; quietHours: QuietWindow | null; timeZone: string }): DueTime {
  const end = quietHours ? quietHoursEnd({ now: window.earliest, timeZone, window: quietHours }) : null;
  if (!end) return { dueAt: window.earliest, quietHours: 'clear' };
  if (end.getTime() > window.latest.getTime()) return { dueAt: window.earliest, quietHours: 'covers_window' };
  return { dueAt: end, quietHours: 'moved' };
}
