import { parseArgs } from 'node:util';
import { pauseTarget } from '@/lib/api/console/controls';
import { checkNoticeTypesAgainst, reason } from '@/lib/api/fields';
import { configuredNoticeTypeNames } from '@/lib/windows/active';
import type { PauseTarget } from '@/lib/controls/runtime-controls';

export type ControlCommand = { kind: 'pause' | 'resume'; target: PauseTarget; reason: string; as: string } | { kind: 'controls' };

export const controlsUsage = `Usage (the kill switch; every worker sees a change within RUNTIME_CONTROLS_REFRESH):
  npm run ledger -- controls                                   list what is paused
  npm run ledger -- pause  (--all | --type <notice_type> | --channel email|sms) --as <email> --reason <text>
  npm run ledger -- resume (--all | --type <notice_type> | --channel email|sms) --as <email> --reason <text>
--as needs that user's password (and code), as for replays; an operator or above. Audited.`;

export const isControlCommand = (name: string | undefined) => name === 'pause' || name === 'resume' || name === 'controls';

export function parseControlArgs(argv: readonly string[]): { ok: true; command: ControlCommand } | { ok: false; error: string } {
  const [kind, ...rest] = argv;
  let values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: { all: { type: 'boolean' }, type: { type: 'string' }, channel: { type: 'string' }, as: { type: 'string' }, reason: { type: 'string' } },
      strict: true,
    }));
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  checkNoticeTypesAgainst(configuredNoticeTypeNames);
  if (kind === 'controls') return { ok: true, command: { kind: 'controls' } };
  if (kind !== 'pause' && kind !== 'resume') return { ok: false, error: `unknown command ${kind ?? ''}` };
  const chosen = [values.all ? 'all' : null, values.type !== undefined ? 'type' : null, values.channel !== undefined ? 'channel' : null].filter(Boolean);
  if (chosen.length !== 1) return { ok: false, error: 'say exactly one of --all, --type <notice_type>, --channel email|sms' };
  const target = pauseTarget.safeParse(
    values.all
      ? { scope: 'all' }
      : values.type !== undefined
        ? { scope: 'notice_type', noticeType: values.type }
        : { scope: 'channel', channel: values.channel },
  );
  if (!target.success) return { ok: false, error: `not a notice type or channel: ${target.error.issues[0]?.message ?? 'invalid'}` };
  const why = reason().safeParse(values.reason ?? '');
  if (!why.success) return { ok: false, error: `--reason: ${why.error.issues[0]?.message ?? 'invalid'}` };
  if (!values.as) return { ok: false, error: '--as <email> is required' };
  return { ok: true, command: { kind, target: target.data, reason: why.data, as: values.as } };
}
