import { describe, expect, it } from 'vitest';
import { parsePostFailoverArgs } from './post-failover-args';

describe('npm run ledger -- post-failover', () => {
  it('takes an ISO instant with its offset, and --dry-run', () => {
    expect(parsePostFailoverArgs(['post-failover', '--since', '2026-12-02T14:00:00Z', '--dry-run'])).toEqual({
      ok: true,
      command: { since: new Date('2026-12-02T14:00:00Z'), dryRun: true },
    });
    expect(parsePostFailoverArgs(['post-failover', '--since', '2026-12-02T15:00:00+01:00'])).toEqual({
      ok: true,
      command: { since: new Date('2026-12-02T14:00:00Z'), dryRun: false },
    });
  });

  it.each([
    [['post-failover'], /--since <instant> is required/],
    [['post-failover', '--since', '2026-12-02 14:00'], /not an ISO 8601 instant/],
    [['post-failover', '--since', '2026-12-02T14:00:00'], /not an ISO 8601 instant/],
    [['post-failover', '--since', '2999-01-01T00:00:00Z'], /in the future/],
    [['post-failover', '--since', '2026-12-02T14:00:00Z', '--all'], /Unknown option/],
  ])('refuses %j', (argv, message) => {
    const parsed = parsePostFailoverArgs(argv);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(message);
  });
});
