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

/** Who created whom, read from the users table in the decision's transaction (users.created_by). */
export type DecisionAccounts = { requesterCreatedBy: string | null; approverCreatedBy: string | null };

/** The four-eyes rules, in the order they are checked; a decision's audit row names the one that refused it, or all that held. */
export const fourEyesRules = ['approver_is_not_requester', 'approver_did_not_create_requester', 'approver_was_not_created_by_requester'] as const;
export type FourEyesRule = (typeof fourEyesRules)[number];

/** The first four-eyes rule the pair breaks, or null when all hold. */
export function brokenFourEyesRule({ replay, actor, accounts }: { replay: ReplayRef; actor: Actor; accounts: DecisionAccounts }): FourEyesRule | null {
  if (actor.id === replay.requestedBy) return 'approver_is_not_requester';
  if (accounts.requesterCreatedBy === actor.id) return 'approver_did_not_create_requester';
  if (accounts.approverCreatedBy === replay.requestedBy) return 'approver_was_not_created_by_requester';
  return null;
}

const fourEyesMessages: Record<FourEyesRule, string> = {
  approver_is_not_requester: 'Four-eyes rule: you requested this replay, so a different manager must approve or reject it.',
  approver_did_not_create_requester:
    'Four-eyes rule: you created the account that requested this replay, so it is not a second person; a manager you did not create must decide.',
  approver_was_not_created_by_requester:
    'Four-eyes rule: your account was created by the requester of this replay, so it is not a second person; a manager they did not create must decide.',
};

export function checkDecision({ replay, actor, accounts }: { replay: ReplayRef; actor: Actor; accounts: DecisionAccounts }): Refusal | null {
  // Four-eyes first: the requester hears the rule that actually binds them, whatever their role.
  const broken = brokenFourEyesRule({ replay, actor, accounts });
  if (broken) return replayRefusal('four_eyes', fourEyesMessages[broken]);
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
