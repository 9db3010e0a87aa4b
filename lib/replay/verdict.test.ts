import { describe, expect, it } from 'vitest';
import { publishBudgetMs } from './pacing';
import { brokenFourEyesRule, checkCancel, checkDecision, checkRun } from './transitions';
import { dryRunVerdict, mergeDryRunCounts, TINY_NEW_SHARE } from './verdict';

describe('dryRunVerdict', () => {
  it('says plainly that a backlog with a tiny share of new keys was already delivered', () => {
    const verdict = dryRunVerdict({ total: 900, newKeys: 4, existing: { sent: 896 } });
    expect(verdict.kind).toBe('already_delivered');
    expect(verdict.message).toBe(
      'Only 4 of 900 keys (0.4 %) are new: this backlog was already delivered. Stopping is the safe choice; the ledger would refuse the rest as duplicates.',
    );
  });

  it('counts released keys as sendable, and grades the rest', () => {
    expect(dryRunVerdict({ total: 100, newKeys: 0, existing: { released: 50, sent: 50 } })).toMatchObject({ kind: 'mixed', wouldSend: 50, share: 0.5 });
    expect(dryRunVerdict({ total: 10, newKeys: 10, existing: {} }).kind).toBe('mostly_new');
    expect(dryRunVerdict({ total: 0, newKeys: 0, existing: {} }).kind).toBe('empty');
    expect(dryRunVerdict({ total: 50, newKeys: 0, existing: { sent: 50 } }).kind).toBe('already_delivered');
    // The boundary: exactly the threshold is no longer "tiny".
    expect(dryRunVerdict({ total: 1000, newKeys: 1000 * TINY_NEW_SHARE, existing: {} }).kind).toBe('mixed');
  });

  it('merges chunked counts', () => {
    expect(
      mergeDryRunCounts([
        { total: 3, newKeys: 1, existing: { sent: 2 } },
        { total: 2, newKeys: 1, existing: { sent: 1 } },
        { total: 1, newKeys: 0, existing: { claimed: 1 } },
      ]),
    ).toEqual({ total: 6, newKeys: 2, existing: { sent: 3, claimed: 1 }, blocked: {} });
  });
});

describe('transitions', () => {
  const replay = { state: 'requested' as const, requestedBy: 'u1' };
  it('four-eyes: the requester cannot decide; a non-manager cannot; a different manager can', () => {
    const accounts = { requesterCreatedBy: null, approverCreatedBy: null };
    expect(checkDecision({ replay, accounts, actor: { id: 'u1', email: 'm@x', role: 'manager' } })?.code).toBe('four_eyes');
    expect(checkDecision({ replay, accounts, actor: { id: 'u2', email: 'o@x', role: 'operator' } })?.code).toBe('forbidden');
    expect(checkDecision({ replay, accounts, actor: { id: 'u1', email: 'o@x', role: 'operator' } })?.code).toBe('four_eyes');
    expect(checkDecision({ replay, accounts, actor: { id: 'u2', email: 'm2@x', role: 'manager' } })).toBeNull();
    expect(checkDecision({ replay: { ...replay, state: 'approved' }, accounts, actor: { id: 'u2', email: 'm2@x', role: 'manager' } })?.code).toBe('conflict');
  });
  it('four-eyes: an approver who created the requester, or whom the requester created, is not a second person', () => {
    const manager = { id: 'u2', email: 'm2@x', role: 'manager' as const };
    expect(brokenFourEyesRule({ replay, actor: manager, accounts: { requesterCreatedBy: 'u2', approverCreatedBy: null } })).toBe(
      'approver_did_not_create_requester',
    );
    expect(brokenFourEyesRule({ replay, actor: manager, accounts: { requesterCreatedBy: null, approverCreatedBy: 'u1' } })).toBe(
      'approver_was_not_created_by_requester',
    );
    expect(checkDecision({ replay, actor: manager, accounts: { requesterCreatedBy: 'u2', approverCreatedBy: null } })?.code).toBe('four_eyes');
    // Created by a third account: still two people.
    expect(checkDecision({ replay, actor: manager, accounts: { requesterCreatedBy: 'u9', approverCreatedBy: 'u9' } })).toBeNull();
  });
  it('runs only approved (or interrupted running) replays; cancels only unfinished ones', () => {
    const operator = { id: 'u3', email: 'o@x', role: 'operator' as const };
    expect(checkRun({ replay, actor: operator })?.code).toBe('conflict');
    expect(checkRun({ replay: { ...replay, state: 'approved' }, actor: operator })).toBeNull();
    expect(checkRun({ replay: { ...replay, state: 'approved' }, actor: { ...operator, role: 'support' } })?.code).toBe('forbidden');
    expect(checkCancel({ replay: { ...replay, state: 'completed' }, actor: operator })?.code).toBe('conflict');
    expect(checkCancel({ replay: { ...replay, state: 'running' }, actor: operator })).toBeNull();
  });
});

describe('publishBudgetMs', () => {
  it('paces by the busiest recipient domain', () => {
    const emails = ['a@gmail.example', 'b@GMAIL.example', 'c@gmail.example', 'd@other.example', null];
    expect(publishBudgetMs({ emails, perDomainPerSecond: 2 })).toBe(1500);
    expect(publishBudgetMs({ emails: [], perDomainPerSecond: 2 })).toBe(0);
  });
});
