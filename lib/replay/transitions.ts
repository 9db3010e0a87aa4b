import type { ReplayState } from '../../db/schema/states';
import { can } from '../auth/permissions';
import type { Role } from '../auth/roles';

/**
 * Who may move a replay where. The database holds the last line (check replays_four_eyes,
 * and every update is conditional on the state it leaves); this is the first line, with a
 * message a person can act on.
 */

export type Actor = { id: string; email: string; role: Role };

export type ReplayRef = { state: ReplayState; requestedBy: string };

export type Refusal = { code: 'forbidden' | 'four_eyes' | 'conflict'; message: string };

const terminal: readonly ReplayState[] = ['rejected', 'completed', 'cancelled', 'failed'];

export function checkDecision({ replay, actor }: { replay: ReplayRef; actor: Actor }): Refusal | null {
  // Four-eyes first: the requester hears the rule that actually binds them, whatever their role.
  if (actor.id === replay.requestedBy) {
    return { code: 'four_eyes', message: 'Four-eyes rule: you requested this replay, so a different manager must approve or reject it.' };
  }
  if (!can(actor.role, 'replay.approve')) {
    return { code: 'forbidden', message: `Only a manager may approve or reject a replay; your role is ${actor.role}.` };
  }
  if (replay.state !== 'requested') return { code: 'conflict', message: `This replay is ${replay.state}; only a requested replay can be approved or rejected.` };
  return null;
}

export function checkRun({ replay, actor }: { replay: ReplayRef; actor: Actor }): Refusal | null {
  if (!can(actor.role, 'replay.request')) return { code: 'forbidden', message: `Your role (${actor.role}) may not run replays.` };
  // `running` is allowed so an interrupted run can be resumed; items already published are skipped.
  if (replay.state !== 'approved' && replay.state !== 'running') {
    return { code: 'conflict', message: `This replay is ${replay.state}; only an approved replay can run.` };
  }
  return null;
}

export function checkCancel({ replay, actor }: { replay: ReplayRef; actor: Actor }): Refusal | null {
  if (!can(actor.role, 'replay.request')) return { code: 'forbidden', message: `Your role (${actor.role}) may not cancel replays.` };
  if (terminal.includes(replay.state)) return { code: 'conflict', message: `This replay is already ${replay.state}.` };
  return null;
}

export function checkRequest({ actor }: { actor: Actor }): Refusal | null {
  if (!can(actor.role, 'replay.request')) return { code: 'forbidden', message: `Your role (${actor.role}) may not request replays.` };
  return null;
}

export function isTerminal(state: ReplayState): boolean {
  return terminal.includes(state);
}
