import type { PlannedNotice } from './plan';
import { businessKeyOf } from './plan';

/**
 * The end-of-run count, as pure functions over what the sink received and what the database
 * says about each planned notice. Every figure the harness asserts on is computed here, so it
 * is unit-tested without processes or a database (verdict.test.ts).
 */

/** `handOver`: the sink posted accepted/delivered events for it (not only a bounce). */
export type SinkRecord = { correlation: string | null; outcome: 'accepted' | 'dropped-after-data'; handOver: boolean };

export type NoticeOutcome = {
  noticeKey: string;
  jobState: string | null;
  suppressionReason: string | null;
  lastErrorClass: string | null;
  ledgerState: string | null;
  claimedAt: Date | null;
  /** When the ledger recorded the send (after the provider accepted it). */
  sentAt?: Date | null;
  /** The job's window: [window_earliest ?? due_at, deadline_at]. */
  window?: { opensAt: Date; latest: Date } | null;
};

export type Classified = {
  notices: number;
  sent: number;
  suppressed: Record<string, number>;
  failed: Record<string, number>;
  /** Claims older than QUARANTINE_AFTER, with no message at the sink: on-call decides. */
  quarantined: number;
  /** Claims still open although the sink holds the message and reported it accepted: reconciliation missed them. */
  quarantinedWithEvidence: number;
  /**
   * Claims still open whose only provider evidence is a hard bounce (lib/events confirms a
   * claim on accepted/delivered only; a bounce is left to on-call by design).
   */
  quarantinedBounceOnly: number;
  lost: number;
  messages: number;
  duplicatesByCorrelation: number;
  duplicatesByBusinessKey: number;
  /** Messages whose correlation maps to no planned notice. */
  strayMessages: number;
  /** Ledger `sent` but the sink never received the notice. */
  sentWithoutMessage: number;
  /** The sink holds the notice but the ledger says it is neither sent nor claimed. */
  receivedNotRecorded: number;
  /** Ledger and job disagree about a finished notice (e.g. ledger sent, job failed). */
  disagreements: number;
  /**
   * Sent notices whose claim — the last instant the send path checks the window, right before
   * the hand-over — lies outside [window_earliest ?? due_at, deadline_at]. Must be 0.
   */
  sentOutsideWindow: number;
  /** Sent notices claimed inside the window whose provider hand-over finished after its latest (a stalled SMTP peer). */
  handOverAfterLatest: number;
  /** Up to 10 examples per problem, for the report. */
  examples: string[];
};

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

function extras(groups: Map<string, number>): number {
  let total = 0;
  for (const count of groups.values()) total += Math.max(0, count - 1);
  return total;
}

export function classifyRun({
  planned,
  outcomes,
  messages,
  quarantineAfterMs,
  now,
}: {
  planned: readonly PlannedNotice[];
  outcomes: readonly NoticeOutcome[];
  messages: readonly SinkRecord[];
  quarantineAfterMs: number;
  now: Date;
}): Classified {
  const byKey = new Map(outcomes.map((outcome) => [outcome.noticeKey, outcome]));
  const noticeByCorrelation = new Map(planned.map((notice) => [notice.correlation, notice]));
  const perCorrelation = new Map<string, number>();
  const handedOver = new Set<string>();
  const perBusinessKey = new Map<string, number>();
  const examples: string[] = [];
  const example = (text: string) => {
    if (examples.length < 30) examples.push(text);
  };
  let strayMessages = 0;
  for (const message of messages) {
    const notice = message.correlation ? noticeByCorrelation.get(message.correlation) : undefined;
    if (!message.correlation || !notice) {
      strayMessages += 1;
      example(`stray message at the sink (correlation ${message.correlation ?? 'none'})`);
      continue;
    }
    perCorrelation.set(message.correlation, (perCorrelation.get(message.correlation) ?? 0) + 1);
    if (message.handOver) handedOver.add(message.correlation);
    const business = businessKeyOf(notice.fact);
    perBusinessKey.set(business, (perBusinessKey.get(business) ?? 0) + 1);
  }
  for (const [correlation, count] of perCorrelation) {
    if (count > 1) example(`duplicate: ${count} messages for notice #${noticeByCorrelation.get(correlation)?.index ?? '?'} (correlation ${correlation})`);
  }

  const result: Classified = {
    notices: planned.length,
    sent: 0,
    suppressed: {},
    failed: {},
    quarantined: 0,
    quarantinedWithEvidence: 0,
    quarantinedBounceOnly: 0,
    lost: 0,
    messages: messages.length,
    duplicatesByCorrelation: extras(perCorrelation),
    duplicatesByBusinessKey: extras(perBusinessKey),
    strayMessages,
    sentWithoutMessage: 0,
    receivedNotRecorded: 0,
    disagreements: 0,
    sentOutsideWindow: 0,
    handOverAfterLatest: 0,
    examples,
  };

  for (const notice of planned) {
    const outcome = byKey.get(notice.noticeKey);
    const received = perCorrelation.get(notice.correlation) ?? 0;
    const label = `notice #${notice.index} (${notice.fact.type}, key ${notice.noticeKey.slice(0, 12)})`;
    if (!outcome || outcome.jobState === null) {
      result.lost += 1;
      example(`lost: ${label} has no job`);
      continue;
    }
    const { jobState, ledgerState } = outcome;
    if (received > 0 && ledgerState !== 'sent' && ledgerState !== 'claimed') {
      result.receivedNotRecorded += 1;
      example(`received but not recorded: ${label} is at the sink, ledger ${ledgerState ?? 'none'}, job ${jobState}`);
    }
    if (ledgerState === 'sent') {
      result.sent += 1;
      if (outcome.window && outcome.claimedAt) {
        const claimed = outcome.claimedAt.getTime();
        if (claimed < outcome.window.opensAt.getTime() || claimed > outcome.window.latest.getTime()) {
          result.sentOutsideWindow += 1;
          example(
            `sent outside window: ${label} claimed ${outcome.claimedAt.toISOString()}, window ${outcome.window.opensAt.toISOString()} – ${outcome.window.latest.toISOString()}`,
          );
        } else if (outcome.sentAt && outcome.sentAt.getTime() > outcome.window.latest.getTime()) {
          result.handOverAfterLatest += 1;
        }
      }
      if (jobState !== 'sent') {
        result.disagreements += 1;
        example(`disagreement: ${label} ledger sent, job ${jobState}`);
      }
      if (received === 0) {
        result.sentWithoutMessage += 1;
        example(`sent without message: ${label}`);
      }
      continue;
    }
    if (ledgerState === 'claimed') {
      const age = outcome.claimedAt ? now.getTime() - outcome.claimedAt.getTime() : 0;
      if (handedOver.has(notice.correlation)) {
        result.quarantinedWithEvidence += 1;
        example(`claim unresolved although the sink reported it accepted: ${label}`);
      } else if (received > 0) {
        result.quarantinedBounceOnly += 1;
      } else if (age >= quarantineAfterMs) {
        result.quarantined += 1;
      } else {
        result.lost += 1;
        example(`lost: ${label} claimed ${age} ms ago, not yet in quarantine`);
      }
      continue;
    }
    if (jobState === 'suppressed' && outcome.suppressionReason) {
      bump(result.suppressed, outcome.suppressionReason);
      continue;
    }
    if (jobState === 'failed' && outcome.lastErrorClass) {
      bump(result.failed, outcome.lastErrorClass);
      continue;
    }
    result.lost += 1;
    example(`lost: ${label} job ${jobState}, ledger ${ledgerState ?? 'none'}, reason ${outcome.suppressionReason ?? outcome.lastErrorClass ?? 'none'}`);
  }
  return result;
}

/** The invariants a chaos run must hold; each failure is one line naming the figure. */
export function invariantFailures(counts: Classified): string[] {
  const failures: string[] = [];
  const zero: Array<[keyof Classified, string]> = [
    ['duplicatesByCorrelation', 'duplicates at the sink by correlation'],
    ['duplicatesByBusinessKey', 'duplicates at the sink by business key'],
    ['strayMessages', 'messages at the sink that map to no notice'],
    ['lost', 'lost notices (neither sent, suppressed, failed with a reason, nor quarantined)'],
    ['quarantinedWithEvidence', 'claims left in quarantine although the sink received the message'],
    ['sentWithoutMessage', 'notices recorded sent that the sink never received'],
    ['receivedNotRecorded', 'notices the sink received whose ledger row is neither sent nor claimed'],
    ['disagreements', 'notices whose ledger and job disagree'],
    ['sentOutsideWindow', 'notices sent outside their window'],
  ];
  for (const [field, text] of zero) {
    const value = counts[field];
    if (typeof value === 'number' && value !== 0) failures.push(`${text}: ${value} (expected 0)`);
  }
  const accounted =
    counts.sent +
    counts.quarantined +
    counts.quarantinedWithEvidence +
    counts.quarantinedBounceOnly +
    counts.lost +
    sum(counts.suppressed) +
    sum(counts.failed);
  if (accounted !== counts.notices) failures.push(`classification does not add up: ${accounted} of ${counts.notices} notices`);
  return failures;
}

export function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((total, count) => total + count, 0);
}

function breakdown(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? '' : ` (${entries.map(([key, count]) => `${key} ${count}`).join(', ')})`;
}

/** A two-column table, one figure a line. */
export function formatTable(rows: Array<[string, string | number]>): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  const rule = '-'.repeat(width + 2 + Math.max(...rows.map(([, value]) => String(value).length)));
  return [rule, ...rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`), rule].join('\n');
}

export function countRows(counts: Classified): Array<[string, string | number]> {
  return [
    ['notices', counts.notices],
    ['sent', counts.sent],
    ['suppressed', `${sum(counts.suppressed)}${breakdown(counts.suppressed)}`],
    ['failed', `${sum(counts.failed)}${breakdown(counts.failed)}`],
    ['quarantined (no evidence at the sink)', counts.quarantined],
    ['quarantined, hard bounce the only evidence', counts.quarantinedBounceOnly],
    ['quarantined with evidence (unresolved)', counts.quarantinedWithEvidence],
    ['lost', counts.lost],
    ['messages at the sink', counts.messages],
    ['duplicates by correlation', counts.duplicatesByCorrelation],
    ['duplicates by business key', counts.duplicatesByBusinessKey],
    ['stray messages', counts.strayMessages],
    ['sent without a message', counts.sentWithoutMessage],
    ['received, not recorded', counts.receivedNotRecorded],
    ['ledger/job disagreements', counts.disagreements],
    ['sent outside window', counts.sentOutsideWindow],
    ['claimed in window, hand-over done after latest', counts.handOverAfterLatest],
  ];
}
