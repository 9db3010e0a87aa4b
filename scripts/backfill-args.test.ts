import { describe, expect, it } from 'vitest';
import { parseBackfillArgs } from './backfill-args';

describe('npm run ledger -- backfill | rollout', () => {
  it('reads a backfill from the job table or a CSV, with a dry run and a reason', () => {
    expect(parseBackfillArgs(['backfill', '--from-jobs', '--limit', '500', '--dry-run', '--reason', 'before enforcing'])).toEqual({
      ok: true,
      command: { kind: 'backfill', source: { kind: 'jobs', limit: 500 }, dryRun: true, reason: 'before enforcing' },
    });
    expect(parseBackfillArgs(['backfill', '--csv', 'sent.csv', '--reason', 'the old system'])).toEqual({
      ok: true,
      command: { kind: 'backfill', source: { kind: 'csv', file: 'sent.csv' }, dryRun: false, reason: 'the old system' },
    });
    expect(parseBackfillArgs(['rollout'])).toEqual({ ok: true, command: { kind: 'rollout' } });
  });

  it('explains each usage error', () => {
    const error = (argv: string[]) => {
      const parsed = parseBackfillArgs(argv);
      return parsed.ok ? null : parsed.error;
    };
    expect(error(['backfill', '--reason', 'why not'])).toBe('say exactly one of --csv FILE, --from-jobs');
    expect(error(['backfill', '--csv', 'a.csv', '--from-jobs', '--reason', 'why not'])).toBe('say exactly one of --csv FILE, --from-jobs');
    expect(error(['backfill', '--csv', 'a.csv', '--limit', '5', '--reason', 'why not'])).toMatch(/--limit/);
    expect(error(['backfill', '--from-jobs', '--limit', '1e3', '--reason', 'why not'])).toMatch(/positive whole number/);
    expect(error(['backfill', '--from-jobs'])).toMatch(/^--reason/);
    expect(error(['backfill', '--from-jobs', '--reason', 'x'])).toMatch(/^--reason: say why/);
    expect(error(['rollout', '--dry-run'])).toBe('rollout takes no options');
    expect(error(['backfill', 'extra', '--from-jobs', '--reason', 'why not'])).toMatch(/positional/i);
  });
});
