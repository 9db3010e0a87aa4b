import { describe, expect, it } from 'vitest';
import { decidePolicy, type PolicyFacts } from './policy';
import { parseQuietHours } from './quiet-hours';

const now = new Date('2026-03-10T12:00:00Z');
const hour = 3_600_000;

function facts(overrides: Partial<Omit<PolicyFacts, 'job'>> & { job?: Partial<PolicyFacts['job']> } = {}): PolicyFacts {
  return {
    now,
    recipientSuppression: null,
    evidenceState: null,
    quietHours: null,
    ...overrides,
    job: {
      state: 'pending',
      dueAt: new Date(now.getTime() - hour),
      deadlineAt: new Date(now.getTime() + 24 * hour),
      nextAttemptAt: new Date(now.getTime() - hour),
      recipientTimeZone: 'UTC',
      ...overrides.job,
    },
  };
}

describe('send-path policy', () => {
  it('proceeds with a due, unrestricted job', () => {
    expect(decidePolicy(facts())).toEqual({ kind: 'proceed' });
  });

  it.each(['sent', 'suppressed', 'cancelled', 'failed'] as const)('discards a %s job before anything else', (state) => {
    expect(decidePolicy(facts({ job: { state, dueAt: new Date(now.getTime() + hour) }, recipientSuppression: 'complaint' }))).toEqual({
      kind: 'discard',
      state,
    });
  });

  it('defers an early wake-up to due_at', () => {
    const dueAt = new Date(now.getTime() + hour);
    expect(decidePolicy(facts({ job: { dueAt, nextAttemptAt: dueAt } }))).toEqual({ kind: 'defer', until: dueAt, cause: 'early' });
  });

  it('suppresses past the deadline before looking at anything else', () => {
    expect(decidePolicy(facts({ job: { deadlineAt: now }, recipientSuppression: 'complaint' }))).toEqual({ kind: 'suppress', reason: 'deadline_passed' });
  });

  it.each([
    ['unsubscribed', 'unsubscribed'],
    ['hard_bounce', 'hard_bounce'],
    ['complaint', 'complaint'],
    ['manual', 'unsubscribed'],
  ] as const)('suppresses a %s recipient', (suppression, reason) => {
    expect(decidePolicy(facts({ recipientSuppression: suppression }))).toEqual({ kind: 'suppress', reason });
  });

  it('suppresses when the evidence is resolved', () => {
    expect(decidePolicy(facts({ evidenceState: 'resolved' }))).toEqual({ kind: 'suppress', reason: 'evidence_resolved' });
    expect(decidePolicy(facts({ evidenceState: 'open' }))).toEqual({ kind: 'proceed' });
  });

  it('lets a permanent suppression win over a pending retry', () => {
    const retryAt = new Date(now.getTime() + hour);
    expect(decidePolicy(facts({ job: { nextAttemptAt: retryAt }, recipientSuppression: 'hard_bounce' }))).toEqual({ kind: 'suppress', reason: 'hard_bounce' });
    expect(decidePolicy(facts({ job: { nextAttemptAt: retryAt } }))).toEqual({ kind: 'defer', until: retryAt, cause: 'backoff' });
  });

  it('defers to the end of quiet hours when that is before the deadline', () => {
    const quietHours = parseQuietHours('11:00-13:00');
    expect(decidePolicy(facts({ quietHours }))).toEqual({ kind: 'defer', until: new Date('2026-03-10T13:00:00Z'), cause: 'quiet_hours' });
  });

  it('suppresses when quiet hours outlast the deadline', () => {
    const quietHours = parseQuietHours('11:00-13:00');
    expect(decidePolicy(facts({ quietHours, job: { deadlineAt: new Date('2026-03-10T12:30:00Z') } }))).toEqual({
      kind: 'suppress',
      reason: 'quiet_hours_past_deadline',
    });
  });
});
