import { correlationOf, noticeKey } from '@/lib/ledger/notice-key';
import type { NoticeFact } from '@/lib/windows/notice-fact';
import type { Prng } from './prng';

/**
 * The notices of one chaos run, derived from the seed alone: types, recipients (some shared,
 * some on bouncing mailboxes), due offsets, tight deadlines, evidence that gets resolved, and
 * when the producer re-posts each request. Keys are computed here, independently of the
 * product, so the final count can map every message at the sink back to its business fact.
 */

export const chaosDomains = ['example.com', 'example.org', 'example.net', 'mail.test', 'corp.test', 'inbox.test'] as const;
// One hot domain: its bucket runs dry and the throttle path (defer + wake later) is exercised.
const domainWeights = [4, 2, 1, 1, 1, 1];

export type PlannedNotice = {
  index: number;
  fact: NoticeFact;
  noticeKey: string;
  correlation: string;
  recipientEmail: string;
  /** A phone number: a payment recovery with one goes by SMS (the type's channel) to the Twilio peer. */
  recipientPhone: string | null;
  /** Due this long after the run's start. */
  dueOffsetMs: number;
  /** The deadline (the window's latest) is this long after the due time (a few are tight: the notice may be window_missed). */
  deadlineAfterMs: number;
  /**
   * The window opens this long after the due time (null: at it). The first wake-up, at the due
   * time, lands before the window and is deferred to it; the harness sets `window_earliest` as
   * the planner would, before the notice is due.
   */
  windowOpensAfterDueMs: number | null;
  evidenceRef: string | null;
  /** The producer resolves this notice's evidence this long after posting it (negative: before). */
  resolveEvidenceOffsetMs: number | null;
  /** The producer re-posts the identical request: at once (racing the first) or this much later. */
  retryAfterMs: number;
  payload: Record<string, string>;
};

export type PlanOptions = { prng: Prng; secret: string; notices: number; spreadMs: number };

const weightedDomain = (prng: Prng): string => {
  const total = domainWeights.reduce((sum, weight) => sum + weight, 0);
  let roll = prng.next() * total;
  for (const [index, weight] of domainWeights.entries()) {
    roll -= weight;
    if (roll < 0) return chaosDomains[index] ?? 'example.com';
  }
  return 'example.com';
};

/** Local parts starting `bounce-` get a hard bounce from the sink instead of a delivery. */
export function isBouncingRecipient(email: string): boolean {
  return email.startsWith('bounce-');
}

export function planNotices({ prng, secret, notices, spreadMs }: PlanOptions): PlannedNotice[] {
  const planned: PlannedNotice[] = [];
  const mailboxes = Math.max(10, Math.floor(notices * 0.7));
  const bouncing = Math.max(2, Math.floor(notices / 200));
  for (let index = 0; index < notices; index += 1) {
    const type = prng.pick<string>(['renewal_notice_t72', 'renewal_notice_t72', 'renewal_notice_t24', 'payment_recovery']);
    // A corrected notice is a new notice: the previous entry's fact with the revision bumped.
    const previous = planned[planned.length - 1];
    const correction = previous !== undefined && previous.fact.type !== 'payment_recovery' && prng.chance(0.03);
    const fact: NoticeFact = correction
      ? { type: previous.fact.type, identity: previous.fact.identity, revision: previous.fact.revision + 1 }
      : type === 'payment_recovery'
        ? { type, identity: { account_id: `acct_${index}`, reconciliation_id: `rec_${prng.int(1, 30)}`, exception_id: `exc_${index}` }, revision: 0 }
        : { type, identity: { subscription_id: `sub_${index}`, period_start: `2026-${String(prng.int(1, 12)).padStart(2, '0')}-01` }, revision: 0 };
    const recipientEmail = correction
      ? previous.recipientEmail
      : prng.chance(0.02)
        ? `bounce-${prng.int(1, bouncing)}@${weightedDomain(prng)}`
        : `user${prng.int(1, mailboxes)}@${weightedDomain(prng)}`;
    const key = noticeKey(secret, fact);
    const dueOffsetMs = prng.int(0, spreadMs);
    const evidenceRef = fact.type === 'payment_recovery' ? `exc:${fact.identity.exception_id}` : null;
    // Drawn after everything else, so the earlier draws of a seed stay what they were.
    const deadlineAfterMs = prng.chance(0.02) ? prng.int(1_000, 4_000) : 48 * 3_600_000;
    const rest = {
      evidenceRef,
      resolveEvidenceOffsetMs: evidenceRef && prng.chance(0.1) ? prng.int(-1_000, 500) : null,
      retryAfterMs: prng.chance(0.2) ? 0 : prng.int(50, Math.max(100, Math.floor(spreadMs / 2))),
      // Exactly the variables the type's template declares (the draws are the ones a seed always made).
      payload: ((plan: string, amount: string): Record<string, string> =>
        fact.type === 'payment_recovery'
          ? { customer_name: 'Ana Silva', amount, currency: 'EUR', reference: `RC-${fact.identity.exception_id ?? index}` }
          : { customer_name: 'Ana Silva', plan_name: plan, amount, currency: 'EUR' })(
        prng.pick(['Coffee Box', 'Tea Club', 'Pro Plan']),
        `${prng.int(5, 99)}.00`,
      ),
    };
    // A fifth of the notices get a window that opens after the due time; a third of those a
    // window so tight (0.3–3 s) that wake-ups delayed by kills and faults land after it. The
    // others open 1–15 s after due: later than the workers' lag behind due wake-ups, which under
    // this chaos on a slow host exceeded 3 s for every notice (2026-12-07: 0 of 112 woken early
    // when they opened 0.2–3 s after due), so the first wake-up still comes before the window.
    // Scaled, not drawn again: a seed's draws stay what they were.
    const drawnOpening = prng.chance(0.2) ? prng.int(200, 3_000) : null;
    const windowed = drawnOpening !== null;
    const tight = windowed && prng.chance(0.33);
    const windowOpensAfterDueMs = drawnOpening === null || tight ? drawnOpening : drawnOpening * 5;
    // Drawn last, so a seed's earlier draws stay what they were: most payment recoveries have a phone.
    const recipientPhone = fact.type === 'payment_recovery' && prng.chance(0.7) ? `+1415555${String(1000 + (index % 9000))}` : null;
    planned.push({
      index,
      fact,
      noticeKey: key,
      correlation: correlationOf(key),
      recipientEmail,
      recipientPhone,
      dueOffsetMs,
      deadlineAfterMs: tight
        ? (windowOpensAfterDueMs ?? 0) + prng.int(300, 3_000)
        : windowed
          ? Math.max(deadlineAfterMs, (windowOpensAfterDueMs ?? 0) + 1_000)
          : deadlineAfterMs,
      windowOpensAfterDueMs,
      ...rest,
    });
  }
  return planned;
}

/** The business fact as one string (type, identity in schema order, revision): what "the same notice" means. */
export function businessKeyOf(fact: NoticeFact): string {
  return `${fact.type}|${Object.entries(fact.identity)
    .map(([field, value]) => `${field}=${value}`)
    .join(',')}|r${fact.revision}`;
}
