import { parseArgs } from 'node:util';

export const postFailoverUsage = `usage: npm run ledger -- post-failover --since <instant> [--dry-run]

  After a database failover: lists the notices the provider reported taking (stored provider
  events since <instant>) for which the database holds no claim, and records each as sent from
  that evidence, so no wake-up sends it again. <instant> is an ISO 8601 time with its offset,
  e.g. 2026-12-02T14:00:00Z: the last moment the old primary is known to have had every claim
  (take it a few minutes before the failover). --dry-run only lists. Audited as
  cli:<operating-system user>.`;

export type PostFailoverCommand = { since: Date; dryRun: boolean };

export function parsePostFailoverArgs(argv: readonly string[]): { ok: true; command: PostFailoverCommand } | { ok: false; error: string } {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv.slice(1)],
      options: { since: { type: 'string' }, 'dry-run': { type: 'boolean', default: false } },
      strict: true,
    }));
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  const text = values.since;
  if (!text) return { ok: false, error: '--since <instant> is required' };
  // An offset is required: a bare local time would be read in this machine's zone.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text) || Number.isNaN(Date.parse(text)))
    return { ok: false, error: `--since "${text}" is not an ISO 8601 instant with an offset (e.g. 2026-12-02T14:00:00Z)` };
  const since = new Date(text);
  if (since.getTime() > Date.now()) return { ok: false, error: '--since is in the future' };
  return { ok: true, command: { since, dryRun: values['dry-run'] } };
}
