import { parseArgs } from 'node:util';
import { reason } from '@/lib/api/fields';

/**
 * `npm run ledger -- backfill …` (the former `scripts/backfill.ts`): sent ledger rows for notices
 * that went out before the ledger, from the job table or a CSV, audited with its counts as
 * cli:<os user>; and `npm run ledger -- rollout`, the Rollout page's figures.
 */
export type BackfillCommand =
  { kind: 'backfill'; source: { kind: 'csv'; file: string } | { kind: 'jobs'; limit?: number }; dryRun: boolean; reason: string } | { kind: 'rollout' };

export const backfillUsage = `Usage (the rollout: shadow → backfill → enforce; enforcing is asked and approved on the console's Rollout page):
  npm run ledger -- rollout                                                       the mode, days in shadow, duplicates by type, backfill state
  npm run ledger -- backfill --from-jobs [--limit N] [--dry-run] --reason <text>  sent jobs with no ledger row get a sent row
  npm run ledger -- backfill --csv FILE [--dry-run] --reason <text>               notices sent elsewhere (header: notice_type, revision, sent_at, identity columns)
A dry run counts new and existing keys and writes nothing; both are audited (ledger.backfill_dry_run / ledger.backfill) with their counts.
Idempotent: an existing ledger row is never changed.`;

export const isBackfillCommand = (name: string | undefined) => name === 'backfill' || name === 'rollout';

export function parseBackfillArgs(argv: readonly string[]): { ok: true; command: BackfillCommand } | { ok: false; error: string } {
  const [kind, ...rest] = argv;
  let values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        csv: { type: 'string' },
        'from-jobs': { type: 'boolean' },
        limit: { type: 'string' },
        'dry-run': { type: 'boolean' },
        reason: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  if (kind === 'rollout') {
    if (Object.keys(values).length > 0) return { ok: false, error: 'rollout takes no options' };
    return { ok: true, command: { kind: 'rollout' } };
  }
  if (kind !== 'backfill') return { ok: false, error: `unknown command ${kind ?? ''}` };
  if ((values.csv === undefined) === (values['from-jobs'] !== true)) return { ok: false, error: 'say exactly one of --csv FILE, --from-jobs' };
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (values.csv !== undefined || !/^\d+$/.test(values.limit) || !Number.isSafeInteger(limit) || limit < 1)
      return { ok: false, error: '--limit must be a positive whole number, with --from-jobs only' };
  }
  if (values.csv === '') return { ok: false, error: '--csv needs a file' };
  const why = reason().safeParse(values.reason ?? '');
  if (!why.success) return { ok: false, error: `--reason: ${why.error.issues[0]?.message ?? 'invalid'}` };
  return {
    ok: true,
    command: {
      kind: 'backfill',
      source: values.csv !== undefined ? { kind: 'csv', file: values.csv } : { kind: 'jobs', ...(limit === undefined ? {} : { limit }) },
      dryRun: values['dry-run'] === true,
      reason: why.data,
    },
  };
}
