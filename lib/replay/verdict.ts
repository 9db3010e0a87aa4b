import type { DryRunCounts } from '@/db/schema/replays';
import type { DryRunVerdict } from '@/lib/api/console/replays';

/**
 * Below this share of keys that would actually be sent, a replay is re-announcing work the
 * ledger already holds: the seed's example is 4 unknown keys out of 900 (0.4 %). 2 % leaves
 * room for the odd straggler while still calling a mostly-delivered backlog what it is.
 */
export const TINY_NEW_SHARE = 0.02;

/** Keys whose job would really reach a send: let through by the ledger (new or released) and not stopped by their job. */
export function wouldSendOf(counts: DryRunCounts): number {
  const blocked = Object.values(counts.blocked ?? {}).reduce((total, count) => total + count, 0);
  return Math.max(0, counts.newKeys + (counts.existing.released ?? 0) - blocked);
}

const blockedText: Record<string, string> = {
  suppressed: 'suppressed',
  cancelled: 'cancelled',
  failed: 'failed',
  sent: 'already sent (job)',
  past_window: 'past their window',
};

/** " Not counted: 3 suppressed, 2 past their window." — the keys the ledger allows that their job stops. */
export function blockedSentence(counts: DryRunCounts): string {
  const entries = Object.entries(counts.blocked ?? {}).filter(([, count]) => count > 0);
  if (entries.length === 0) return '';
  return ` Not counted as sends, their job stops them: ${entries
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([cause, count]) => `${count.toLocaleString('en')} ${blockedText[cause] ?? cause}`)
    .join(', ')}.`;
}

export function dryRunVerdict(counts: DryRunCounts): DryRunVerdict {
  const wouldSend = wouldSendOf(counts);
  const blocked = blockedSentence(counts);
  if (counts.total === 0) return { kind: 'empty', wouldSend, share: 0, message: 'The filter matches no jobs: there is nothing to replay.' };
  const share = wouldSend / counts.total;
  const percent = formatPercent(share);
  if (share < TINY_NEW_SHARE) {
    return {
      kind: 'already_delivered',
      wouldSend,
      share,
      message: `Only ${wouldSend.toLocaleString('en')} of ${counts.total.toLocaleString('en')} keys (${percent}) are new: this backlog was already delivered. Stopping is the safe choice; the ledger would refuse the rest as duplicates.${blocked}`,
    };
  }
  if (share >= 0.9)
    return {
      kind: 'mostly_new',
      wouldSend,
      share,
      message: `${wouldSend.toLocaleString('en')} of ${counts.total.toLocaleString('en')} keys (${percent}) are new and would be sent.${blocked}`,
    };
  return {
    kind: 'mixed',
    wouldSend,
    share,
    message: `${wouldSend.toLocaleString('en')} of ${counts.total.toLocaleString('en')} keys (${percent}) are new and would be sent; the other ${(counts.total - wouldSend).toLocaleString('en')} would not.${blocked}`,
  };
}

export function formatPercent(share: number): string {
  if (share === 0) return '0 %';
  if (share < 0.001) return '<0.1 %';
  return `${(share * 100).toFixed(share < 0.1 ? 1 : 0)} %`;
}

/** Adds per-state counts from several batches of the same dry run. */
export function mergeDryRunCounts(parts: readonly DryRunCounts[]): DryRunCounts {
  const existing: Record<string, number> = {};
  const blocked: Record<string, number> = {};
  let total = 0;
  let newKeys = 0;
  for (const part of parts) {
    total += part.total;
    newKeys += part.newKeys;
    for (const [state, count] of Object.entries(part.existing)) existing[state] = (existing[state] ?? 0) + count;
    for (const [cause, count] of Object.entries(part.blocked ?? {})) blocked[cause] = (blocked[cause] ?? 0) + count;
  }
  return { total, newKeys, existing, blocked };
}
