import type { Session } from 'next-auth';
import type { ReplayState } from '@/db/schema/states';
import { can } from '@/lib/auth/permissions';
import type { Role } from '@/lib/auth/roles';
import type { Refusal } from '@/lib/http/refusal';

/**
 * Who may move a replay where. The database holds the last line (check replays_four_eyes,
 * and every update is conditional on the state it leaves); this is the first line, with a
 * message a person can act on.
 */

export type Actor = { id: string; email: string; role: Role };

export type ReplayRef = { state: ReplayState; requestedBy: string };

export type ReplayRefusalCode = 'forbidden' | 'four_eyes' | 'conflict';

/** A conflict is a 409; a role or the four-eyes rule saying no is a 403. */
export function replayRefusal(code: ReplayRefusalCode, message: string): Refusal {
  return { kind: code === 'conflict' ? 'conflict' : 'forbidden', code, message };
}

export function actorOf(session: Session): Actor {
  return { id: session.user.id, email: session.user.email, role: session.user.role };
}

const terminal: readonly ReplayState[] = ['rejected', 'completed', 'cancelled', 'failed'];

export function checkDecision({ replay, actor }: { replay: ReplayRef; actor: Actor }): Refusal | null {
  // Four-eyes first: the requester hears the rule that actually binds them, whatever their role.
  if (actor.id === replay.requestedBy) {
    return replayRefusal('four_eyes', 'Four-eyes rule: you requested this replay, so a different manager must approve or reject it.');
  }
  if (!can(actor.role, 'replay.approve')) {
    return replayRefusal('forbidden', `Only a manager may approve or reject a replay; your role is ${actor.role}.`);
  }
  if (replay.state !== 'requested') return replayRefusal('conflict', `This replay is ${replay.state}; only a requested replay can be approved or rejected.`);
  return null;
}

export function checkRun({ replay, actor }: { replay: ReplayRef; actor: Actor }): Refusal | null {
  if (!can(actor.role, 'replay.request')) return replayRefusal('forbidden', `Your role (${actor.role}) may not run replays.`);
  // `running` is allowed so an interrupted run can be resumed; items already published are skipped.
  if (replay.state !== 'approved' && replay.state !== 'running') {
    return replayRefusal('conflict', `This replay is ${replay.state}; only an approved replay can run.`);
  }
  return null;
}

export function checkCancel({ replay, actor }: { replay: ReplayRef; actor: Actor }): Refusal | null {
  if (!can(actor.role, 'replay.request')) return replayRefusal('forbidden', `Your role (${actor.role}) may not cancel replays.`);
  if (terminal.includes(replay.state)) return replayRefusal('conflict', `This replay is already ${replay.state}.`);
  return null;
}

export function checkRequest({ actor }: { actor: Actor }): Refusal | null {
  if (!can(actor.role, 'replay.request')) return replayRefusal('forbidden', `Your role (${actor.role}) may not request replays.`);
  return null;
}
