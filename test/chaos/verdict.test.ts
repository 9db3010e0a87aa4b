import { describe, expect, it } from 'vitest';
import { noticeKey } from '@/lib/ledger/notice-key';
import { businessKeyOf, isBouncingRecipient, planNotices } from './plan';
import { createPrng, hashUnit, parseSeed } from './prng';
import { classifyRun, formatTable, invariantFailures, type NoticeOutcome, type SinkRecord } from './verdict';

const secret = 'chaos-unit-secret-0123456789abcdef0123456789';

describe('seeded randomness', () => {
  it('repeats for a seed, differs across seeds, and forks independent streams', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, createPrng(seed).next);
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    const a = createPrng(7);
    const forkedBefore = a.fork('kills').next();
    a.next();
    expect(a.fork('kills').next()).toBe(forkedBefore);
    for (const value of draw(1)) expect(value).toBeGreaterThanOrEqual(0);
    expect(hashUnit(1, 'fault', 'abc', 0)).toBe(hashUnit(1, 'fault', 'abc', 0));
    expect(hashUnit(1, 'fault', 'abc', 0)).not.toBe(hashUnit(1, 'fault', 'abc', 1));
  });

  it('parses a seed or refuses a bad one', () => {
    expect(parseSeed('123')).toBe(123);
    expect(Number.isInteger(parseSeed(undefined))).toBe(true);
    expect(() => parseSeed('-1')).toThrow(/seed must be/);
    expect(() => parseSeed('1.5')).toThrow(/seed must be/);
    expect(() => parseSeed('4294967296')).toThrow(/seed must be/);
  });
});

describe('plan', () => {
  it('is fixed by the seed; keys are the product derivation; correlations are unique', () => {
    const plan = planNotices({ prng: createPrng(5).fork('plan'), secret, notices: 400, spreadMs: 10_000 });
    expect(planNotices({ prng: createPrng(5).fork('plan'), secret, notices: 400, spreadMs: 10_000 })).toEqual(plan);
    for (const notice of plan) expect(notice.noticeKey).toBe(noticeKey(secret, notice.fact));
    expect(new Set(plan.map((notice) => notice.correlation)).size).toBe(400);
    expect(new Set(plan.map((notice) => businessKeyOf(notice.fact))).size).toBe(400);
    expect(new Set(plan.map((notice) => notice.fact.type))).toEqual(new Set(['renewal_notice_t72', 'renewal_notice_t24', 'payment_recovery']));
    expect(plan.some((notice) => isBouncingRecipient(notice.recipientEmail))).toBe(true);
    expect(plan.some((notice) => notice.fact.revision > 0)).toBe(true);
    expect(plan.some((notice) => notice.retryAfterMs === 0)).toBe(true);
    expect(plan.some((notice) => notice.resolveEvidenceOffsetMs !== null)).toBe(true);
    const windowed = plan.filter((notice) => notice.windowOpensAfterDueMs !== null);
    expect(windowed.length).toBeGreaterThan(40);
    for (const notice of windowed) expect(notice.deadlineAfterMs).toBeGreaterThan(notice.windowOpensAfterDueMs ?? 0);
    expect(windowed.some((notice) => notice.deadlineAfterMs - (notice.windowOpensAfterDueMs ?? 0) <= 3_000)).toBe(true);
  });
});

describe('classifyRun', () => {
  const plan = planNotices({ prng: createPrng(11).fork('plan'), secret, notices: 12, spreadMs: 1_000 });
  const now = new Date('2026-11-29T12:00:00Z');
  const old = new Date(now.getTime() - 60_000);
  const at = (index: number) => {
    const notice = plan[index];
    if (!notice) throw new Error(`no notice ${index}`);
    return notice;
  };
  const outcome = (index: number, over: Partial<NoticeOutcome>): NoticeOutcome => ({
    noticeKey: at(index).noticeKey,
    jobState: 'sent',
    suppressionReason: null,
    lastErrorClass: null,
    ledgerState: 'sent',
    claimedAt: old,
    ...over,
  });
  const message = (index: number, over: Partial<SinkRecord> = {}): SinkRecord => ({
    correlation: at(index).correlation,
    outcome: 'accepted',
    handOver: true,
    ...over,
  });

  const clean = (): { outcomes: NoticeOutcome[]; messages: SinkRecord[] } => ({
    outcomes: [
      ...[0, 1, 2, 3, 4, 5].map((index) => outcome(index, {})),
      outcome(6, { jobState: 'suppressed', suppressionReason: 'window_missed', ledgerState: null, claimedAt: null }),
      outcome(7, { jobState: 'failed', lastErrorClass: 'smtp_550', ledgerState: 'released' }),
      outcome(8, { jobState: 'claimed', ledgerState: 'claimed' }),
      outcome(9, { jobState: 'claimed', ledgerState: 'claimed' }),
      outcome(10, { jobState: 'suppressed', suppressionReason: 'hard_bounce', ledgerState: null, claimedAt: null }),
      outcome(11, { jobState: 'suppressed', suppressionReason: 'evidence_resolved', ledgerState: null, claimedAt: null }),
    ],
    messages: [...[0, 1, 2, 3, 4].map((index) => message(index)), message(5, { outcome: 'dropped-after-data' }), message(9, { handOver: false })],
  });

  it('counts a clean run: every notice accounted for, no invariant broken', () => {
    const counts = classifyRun({ planned: plan, ...clean(), quarantineAfterMs: 5_000, now });
    expect(counts).toMatchObject({
      notices: 12,
      sent: 6,
      suppressed: { window_missed: 1, hard_bounce: 1, evidence_resolved: 1 },
      failed: { smtp_550: 1 },
      quarantined: 1,
      quarantinedBounceOnly: 1,
      quarantinedWithEvidence: 0,
      lost: 0,
      messages: 7,
      duplicatesByCorrelation: 0,
      duplicatesByBusinessKey: 0,
    });
    expect(invariantFailures(counts)).toEqual([]);
  });

  it('flags duplicates, strays, losses, unresolved claims with evidence and ledger lies', () => {
    const { outcomes, messages } = clean();
    const broken: NoticeOutcome[] = outcomes.map((row) => {
      if (row.noticeKey === at(1).noticeKey) return { ...row, jobState: 'pending', ledgerState: null };
      if (row.noticeKey === at(2).noticeKey) return { ...row, jobState: 'claimed', ledgerState: 'claimed', claimedAt: new Date(now.getTime() - 1_000) };
      if (row.noticeKey === at(7).noticeKey) return { ...row, jobState: 'failed', ledgerState: 'released' };
      if (row.noticeKey === at(4).noticeKey) return { ...row, jobState: 'failed', lastErrorClass: 'smtp_451' };
      if (row.noticeKey === at(11).noticeKey) return { ...row, jobState: 'claimed', ledgerState: 'claimed', claimedAt: new Date(now.getTime() - 1_000) };
      return row;
    });
    const counts = classifyRun({
      planned: plan,
      outcomes: broken.filter((row) => row.noticeKey !== at(3).noticeKey),
      messages: [...messages, message(0), message(7), message(8), { correlation: 'f'.repeat(32), outcome: 'accepted', handOver: true }],
      quarantineAfterMs: 5_000,
      now,
    });
    expect(counts).toMatchObject({
      duplicatesByCorrelation: 1,
      duplicatesByBusinessKey: 1,
      strayMessages: 1,
      // #1 pending, #3 without a job, #11 claimed a second ago (not yet quarantine).
      lost: 3,
      // #2 (young) and #8 (old): the sink reported both accepted.
      quarantinedWithEvidence: 2,
      // #1 pending and #7 released, yet both at the sink.
      receivedNotRecorded: 2,
      disagreements: 1,
    });
    expect(counts.sentWithoutMessage).toBe(0);
    const failures = invariantFailures(counts);
    expect(failures).toEqual(
      expect.arrayContaining([
        'duplicates at the sink by correlation: 1 (expected 0)',
        'lost notices (neither sent, suppressed, failed with a reason, nor quarantined): 3 (expected 0)',
        'claims left in quarantine although the sink received the message: 2 (expected 0)',
      ]),
    );
    expect(counts.examples.some((line) => line.startsWith('lost:') && line.includes('has no job'))).toBe(true);
  });

  it('a sent ledger row with nothing at the sink is a lie', () => {
    const { outcomes, messages } = clean();
    const counts = classifyRun({
      planned: plan,
      outcomes,
      messages: messages.filter((m) => m.correlation !== at(0).correlation),
      quarantineAfterMs: 5_000,
      now,
    });
    expect(counts.sentWithoutMessage).toBe(1);
    expect(invariantFailures(counts)).toEqual(['notices recorded sent that the sink never received: 1 (expected 0)']);
  });

  it('a notice claimed outside its window was sent outside it; a hand-over finishing after latest is only reported', () => {
    const { outcomes, messages } = clean();
    const window = { opensAt: new Date(now.getTime() - 10_000), latest: new Date(now.getTime() - 5_000) };
    const windowed = outcomes.map((row) => {
      if (row.noticeKey === at(0).noticeKey) return { ...row, window, claimedAt: new Date(now.getTime() - 4_999), sentAt: new Date(now.getTime() - 4_000) };
      if (row.noticeKey === at(5).noticeKey) return { ...row, window, claimedAt: new Date(now.getTime() - 10_001), sentAt: new Date(now.getTime() - 9_000) };
      if (row.noticeKey === at(1).noticeKey) return { ...row, window, claimedAt: new Date(now.getTime() - 5_000), sentAt: new Date(now.getTime() - 1_000) };
      return row;
    });
    const counts = classifyRun({ planned: plan, outcomes: windowed, messages, quarantineAfterMs: 5_000, now });
    expect(counts).toMatchObject({ sentOutsideWindow: 2, handOverAfterLatest: 1 });
    expect(invariantFailures(counts)).toEqual(['notices sent outside their window: 2 (expected 0)']);
    expect(counts.examples.filter((line) => line.startsWith('sent outside window:'))).toHaveLength(2);
  });

  it('formats a table with aligned values', () => {
    expect(
      formatTable([
        ['a', 1],
        ['longer', 'x'],
      ]).split('\n'),
    ).toEqual(['---------', 'a       1', 'longer  x', '---------']);
  });
});
