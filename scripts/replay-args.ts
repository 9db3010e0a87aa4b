import { parseArgs } from 'node:util';
import { z } from 'zod';
import { configuredNoticeTypeNames } from '@/lib/windows/active';

/**
 * `npm run ledger -- replay …`. Parsing is pure so every usage error is decided before a
 * database connection opens: a bad invocation exits 2 having changed nothing.
 */

export const replayUsage = `Usage:
  npm run ledger -- replay [filter] [--request --as <email> --reason <text>]
      filter: --from <ISO time> --to <ISO time> --type <notice type> --source <producer>
              or --csv <file>   (uploaded upstream jobs; rejected rows go to <file>.rejected.csv)
      Without --request this is a dry run: it counts new vs already-sent keys and changes nothing.
  npm run ledger -- replay --approve <id> --as <manager email> --reason <text>
  npm run ledger -- replay --reject <id>  --as <manager email> --reason <text>
  npm run ledger -- replay --run <id>     --as <email> [--reason <text>]   (the workers publish it)
  npm run ledger -- replay --cancel <id>  --as <email> --reason <text>
  npm run ledger -- replay --list
  npm run ledger -- replay --status <id>
  Every --as <email> asks that console user's password (a hidden prompt, or the first line of
  stdin when piped); without the right one nothing is done.`;

export type ReplayCommand =
  | {
      kind: 'dry-run' | 'request';
      filter: { dueFrom?: string; dueTo?: string; noticeType?: string; source?: string } | null;
      csvPath: string | null;
      as: string | null;
      reason: string | null;
    }
  | { kind: 'approve' | 'reject' | 'cancel'; id: string; as: string; reason: string }
  | { kind: 'run'; id: string; as: string; reason: string }
  | { kind: 'list' }
  | { kind: 'status'; id: string };

export type ParsedArgs = { ok: true; command: ReplayCommand } | { ok: false; error: string };

const uuid = z.uuid();
const isoTime = z.iso.datetime({ offset: true });

function fail(error: string): ParsedArgs {
  return { ok: false, error };
}

export function parseReplayArgs(argv: readonly string[]): ParsedArgs {
  if (argv[0] !== 'replay') return fail(argv[0] ? `unknown command "${argv[0]}"` : 'missing command');
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv.slice(1),
      strict: true,
      allowPositionals: false,
      options: {
        from: { type: 'string' },
        to: { type: 'string' },
        type: { type: 'string' },
        source: { type: 'string' },
        csv: { type: 'string' },
        request: { type: 'boolean' },
        approve: { type: 'string' },
        reject: { type: 'string' },
        run: { type: 'string' },
        cancel: { type: 'string' },
        status: { type: 'string' },
        list: { type: 'boolean' },
        as: { type: 'string' },
        reason: { type: 'string' },
      },
    }));
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  const text = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value.trim() : undefined;
  };
  const actions = ['approve', 'reject', 'run', 'cancel', 'status'].filter((name) => text(name) !== undefined);
  const flags = [...actions, ...(values.list ? ['list'] : []), ...(values.request ? ['request'] : [])];
  if (flags.length > 1) return fail(`choose one of --${flags.join(', --')}`);
  const as = text('as');
  const reason = text('reason');
  const filterGiven = ['from', 'to', 'type', 'source', 'csv'].filter((name) => text(name) !== undefined);

  if (values.list) return filterGiven.length > 0 ? fail('--list takes no filter') : { ok: true, command: { kind: 'list' } };
  const action = actions[0];
  if (action) {
    const id = text(action) ?? '';
    if (!uuid.safeParse(id).success) return fail(`--${action} needs a replay id (a UUID), got "${id}"`);
    if (filterGiven.length > 0) return fail(`--${action} takes no filter (--${filterGiven.join(', --')})`);
    if (action === 'status') return { ok: true, command: { kind: 'status', id } };
    if (!as) return fail(`--${action} needs --as <email>`);
    if (action === 'run') return { ok: true, command: { kind: 'run', id, as, reason: reason || 'run approved replay' } };
    if (!reason) return fail(`--${action} needs --reason <text>`);
    return { ok: true, command: { kind: action === 'approve' ? 'approve' : action === 'reject' ? 'reject' : 'cancel', id, as, reason } };
  }

  const csvPath = text('csv') ?? null;
  if (csvPath !== null && filterGiven.length > 1) return fail('--csv cannot be combined with --from/--to/--type/--source');
  if (filterGiven.length === 0) return fail('give a filter (--from/--to/--type/--source) or --csv <file>');
  for (const name of ['from', 'to']) {
    const value = text(name);
    if (value !== undefined && !isoTime.safeParse(value).success) return fail(`--${name} must be an ISO time with offset, like 2026-11-28T06:00:00Z`);
  }
  const from = text('from');
  const to = text('to');
  if (from && to && new Date(from) >= new Date(to)) return fail('--from must be before --to');
  const type = text('type');
  const noticeTypeNames = configuredNoticeTypeNames();
  if (type !== undefined && !noticeTypeNames.includes(type)) return fail(`--type must be one of ${noticeTypeNames.join(', ')}`);
  const filter = csvPath === null ? { dueFrom: from, dueTo: to, noticeType: type, source: text('source') } : null;
  if (values.request) {
    if (!as) return fail('--request needs --as <email>');
    if (!reason) return fail('--request needs --reason <text>');
    return { ok: true, command: { kind: 'request', filter, csvPath, as, reason } };
  }
  return { ok: true, command: { kind: 'dry-run', filter, csvPath, as: as ?? null, reason: reason ?? null } };
}
